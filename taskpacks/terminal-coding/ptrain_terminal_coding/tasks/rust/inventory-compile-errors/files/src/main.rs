mod command;
mod inventory;

use command::{parse, Command};
use inventory::Inventory;
use std::io::{self, BufRead};

fn main() {
    let inv = Inventory::new();
    let mut failed = false;
    let unused = 5;
    for line in io::stdin().lock().lines() {
        let line = line.unwrap();
        match parse(&line) {
            Some(Command::Add(sku, qty)) => println!("{} {}", sku, inv.add(&sku, qty)),
            Some(Command::Remove(sku, qty)) => match inv.remove(&sku, qty) {
                Ok(left) => println!("{} {}", sku, left),
                Err(e) => {
                    println!("error: {}", e);
                    failed = true;
                }
            },
            Some(Command::Report) => {
                let items = inv.report();
                for (sku, qty) in items {
                    println!("{} {}", sku, qty);
                }
                println!("total {}", items.iter().map(|(_, q)| q).sum::<u64>());
            }
            Some(Command::Low(n)) => {
                for (sku, qty) in inv.low(n) {
                    println!("{} {}", sku, qty);
                }
            }
            None => {
                println!("error: bad command: {}", line);
            }
        }
    }
    std::process::exit(if failed { 1 } else { 0 });
}
