mod lexer;
mod parser;

use std::io::BufRead;

fn eval(text: &str) -> Result<f64, String> {
    let tokens = lexer::tokenize(text)?;
    let v = parser::Parser::new(tokens).parse()?;
    if v.is_infinite() {
        panic!("division by zero");
    }
    Ok(v)
}

fn show(v: f64) -> String {
    format!("{}", v)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let lines: Vec<String> = if args.is_empty() {
        std::io::stdin().lock().lines().map(|l| l.unwrap()).collect()
    } else {
        vec![args.join(" ")]
    };
    let mut failed = false;
    for line in lines {
        match eval(&line) {
            Ok(v) => println!("{}", show(v)),
            Err(e) => {
                println!("error: {}", e);
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
