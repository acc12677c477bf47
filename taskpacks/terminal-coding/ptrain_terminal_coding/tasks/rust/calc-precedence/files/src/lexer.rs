//! Tokens.

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Num(f64),
    Op(char),
    LParen,
    RParen,
}

pub fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            out.push(Token::Num(s.parse().map_err(|_| format!("bad number {}", s))?));
        } else if "+-*/^".contains(c) {
            out.push(Token::Op(c));
            i += 1;
        } else if c == '(' {
            out.push(Token::LParen);
            i += 1;
        } else if c == ')' {
            out.push(Token::RParen);
            i += 1;
        } else {
            return Err(format!("unexpected character {}", c));
        }
    }
    Ok(out)
}
