use std::collections::HashMap;

pub struct Inventory {
    stock: HashMap<String, u64>,
}

impl Inventory {
    pub fn new() -> Self {
        Inventory { stock: HashMap::new() }
    }

    pub fn add(&self, sku: &str, qty: u64) -> u64 {
        let entry = self.stock.entry(sku).or_insert(0);
        *entry += qty;
        entry
    }

    pub fn remove(&mut self, sku: &str, qty: u64) -> Result<u64, String> {
        let have = self.stock.get(sku).ok_or(format!("unknown sku {}", sku))?;
        if have < qty {
            return Err(format!("insufficient stock for {}", sku));
        }
        self.stock.insert(sku.to_string(), have - qty);
        Ok(have - qty)
    }

    pub fn report(&self) -> Vec<(String, u64)> {
        let mut items: Vec<(String, u64)> = self.stock.iter().filter(|(_, q)| q > 0).collect();
        items.sort();
        items
    }

    pub fn low(&self, limit: u64) -> Vec<(&String, &u64)> {
        let mut items: Vec<_> = self.stock.iter().filter(|(_, &q)| q > 0 && q < limit).collect();
        items.sort_by_key(|(s, q)| (q, s));
        items
    }
}
