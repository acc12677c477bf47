cd /workspace && cat > src/parser.rs <<'RS'
//! A recursive-descent parser that evaluates as it goes.
//!
//! expr  := term (('+' | '-') term)*          left-associative
//! term  := unary (('*' | '/') unary)*        left-associative
//! unary := ('-' | '+') unary | power
//! power := atom ('^' unary)?                 right-associative, binds tighter than unary minus on its left

use crate::lexer::Token;

pub struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    pub fn new(tokens: Vec<Token>) -> Self {
        Parser { tokens, pos: 0 }
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    pub fn parse(&mut self) -> Result<f64, String> {
        let v = self.expr()?;
        if self.pos < self.tokens.len() {
            return Err(format!("unexpected {:?}", self.tokens[self.pos]));
        }
        Ok(v)
    }

    fn expr(&mut self) -> Result<f64, String> {
        let mut v = self.term()?;
        loop {
            match self.peek() {
                Some(Token::Op('+')) => {
                    self.next();
                    v += self.term()?;
                }
                Some(Token::Op('-')) => {
                    self.next();
                    v -= self.term()?;
                }
                _ => return Ok(v),
            }
        }
    }

    fn term(&mut self) -> Result<f64, String> {
        let mut v = self.unary()?;
        loop {
            match self.peek() {
                Some(Token::Op('*')) => {
                    self.next();
                    v *= self.unary()?;
                }
                Some(Token::Op('/')) => {
                    self.next();
                    let right = self.unary()?;
                    if right == 0.0 {
                        return Err("division by zero".to_string());
                    }
                    v /= right;
                }
                _ => return Ok(v),
            }
        }
    }

    fn unary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(Token::Op('-')) => {
                self.next();
                Ok(-self.unary()?)
            }
            Some(Token::Op('+')) => {
                self.next();
                self.unary()
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.atom()?;
        if let Some(Token::Op('^')) = self.peek() {
            self.next();
            let exp = self.unary()?;
            return Ok(base.powf(exp));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<f64, String> {
        match self.next() {
            Some(Token::Num(n)) => Ok(n),
            Some(Token::LParen) => {
                let v = self.expr()?;
                match self.next() {
                    Some(Token::RParen) => Ok(v),
                    _ => Err("expected )".to_string()),
                }
            }
            None => Err("unexpected end of input".to_string()),
            Some(other) => Err(format!("unexpected {:?}", other)),
        }
    }
}
RS
python3 - <<'PY'
from pathlib import Path
p = Path("src/main.rs")
s = p.read_text()
s = s.replace("""    let v = parser::Parser::new(tokens).parse()?;
    if v.is_infinite() {
        panic!("division by zero");
    }
    Ok(v)""", """    parser::Parser::new(tokens).parse()""")
s = s.replace("""fn show(v: f64) -> String {
    format!("{}", v)
}""", """fn show(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    format!("{}", v)
}""")
s = s.replace("std::io::stdin().lock().lines().map(|l| l.unwrap()).collect()", "std::io::stdin().lock().lines().map_while(Result::ok).collect()")
p.write_text(s)
PY
CARGO_TARGET_DIR=/tmp/rc-target cargo build --offline -q && /tmp/rc-target/debug/rcalc '2 ^ 3 ^ 2'
