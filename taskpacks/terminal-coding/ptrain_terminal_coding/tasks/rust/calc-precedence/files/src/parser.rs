//! A recursive-descent parser that evaluates as it goes.

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
        Ok(v)
    }

    // expr := term (('+' | '-') expr)?
    fn expr(&mut self) -> Result<f64, String> {
        let left = self.term()?;
        match self.peek() {
            Some(Token::Op('+')) => {
                self.next();
                Ok(left + self.expr()?)
            }
            Some(Token::Op('-')) => {
                self.next();
                Ok(left - self.expr()?)
            }
            _ => Ok(left),
        }
    }

    // term := power (('*' | '/') term)?
    fn term(&mut self) -> Result<f64, String> {
        let left = self.power()?;
        match self.peek() {
            Some(Token::Op('*')) => {
                self.next();
                Ok(left * self.term()?)
            }
            Some(Token::Op('/')) => {
                self.next();
                let right = self.term()?;
                Ok(left / right)
            }
            _ => Ok(left),
        }
    }

    // power := atom ('^' atom)*
    fn power(&mut self) -> Result<f64, String> {
        let mut v = self.atom()?;
        while let Some(Token::Op('^')) = self.peek() {
            self.next();
            v = v.powf(self.atom()?);
        }
        Ok(v)
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
            other => Err(format!("unexpected {:?}", other)),
        }
    }
}
