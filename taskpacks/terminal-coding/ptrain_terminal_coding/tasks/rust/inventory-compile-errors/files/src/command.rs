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
        ["add", sku, qty] => Some(Command::Add(sku, qty.parse().ok()?)),
        ["remove", sku, qty] => Some(Command::Remove(sku.to_string(), qty.parse().ok()?)),
        ["report"] => Command::Report,
        ["low", n] => Some(Command::Low(n.parse()?)),
        _ => None,
    }
}
