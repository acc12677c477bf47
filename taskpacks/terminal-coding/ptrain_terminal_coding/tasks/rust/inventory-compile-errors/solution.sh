cd /workspace && cat > src/inventory.rs <<'RS'
use std::collections::HashMap;

pub struct Inventory {
    stock: HashMap<String, u64>,
}

impl Inventory {
    pub fn new() -> Self {
        Inventory { stock: HashMap::new() }
    }

    pub fn add(&mut self, sku: &str, qty: u64) -> u64 {
        let entry = self.stock.entry(sku.to_string()).or_insert(0);
        *entry += qty;
        *entry
    }

    pub fn remove(&mut self, sku: &str, qty: u64) -> Result<u64, String> {
        let have = *self.stock.get(sku).ok_or(format!("unknown sku {}", sku))?;
        if have < qty {
            return Err(format!("insufficient stock for {}", sku));
        }
        self.stock.insert(sku.to_string(), have - qty);
        Ok(have - qty)
    }

    pub fn report(&self) -> Vec<(String, u64)> {
        let mut items: Vec<(String, u64)> = self.stock.iter().filter(|(_, &q)| q > 0).map(|(s, &q)| (s.clone(), q)).collect();
        items.sort();
        items
    }

    pub fn low(&self, limit: u64) -> Vec<(&String, &u64)> {
        let mut items: Vec<_> = self.stock.iter().filter(|(_, &q)| q > 0 && q < limit).collect();
        items.sort_by_key(|&(s, q)| (*q, s.clone()));
        items
    }
}
RS
cat > src/command.rs <<'RS'
#[derive(Debug)]
pub enum Command {
    Add(String, u64),
    Remove(String, u64),
    Report,
    Low(u64),
}

pub fn parse(line: &str) -> Option<Command> {
    let parts: Vec<&str> = line.split_whitespace().collect();
    match parts.as_slice() {
        ["add", sku, qty] => {
            let qty: u64 = qty.parse().ok()?;
            if qty == 0 {
                return None;
            }
            Some(Command::Add(sku.to_string(), qty))
        }
        ["remove", sku, qty] => Some(Command::Remove(sku.to_string(), qty.parse().ok()?)),
        ["report"] => Some(Command::Report),
        ["low", n] => Some(Command::Low(n.parse().ok()?)),
        _ => None,
    }
}
RS
python3 - <<'PY'
from pathlib import Path
p = Path("src/main.rs")
s = p.read_text()
s = s.replace("    let inv = Inventory::new();", "    let mut inv = Inventory::new();").replace("    let unused = 5;\n", "")
s = s.replace("                for (sku, qty) in items {", "                for (sku, qty) in &items {")
s = s.replace("""                println!("error: bad command: {}", line);
            }""", """                println!("error: bad command: {}", line);
                failed = true;
            }""")
p.write_text(s)
PY
CARGO_TARGET_DIR=/tmp/st-target cargo build --offline 2>&1 | tail -3 && printf 'add a 2\nreport\n' | /tmp/st-target/debug/stockctl
