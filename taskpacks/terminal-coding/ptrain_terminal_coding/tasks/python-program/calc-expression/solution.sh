cat > /workspace/calc.py <<'PY'
"""Evaluate arithmetic expressions with + - * /, parentheses and unary minus (recursive descent)."""

import re
import sys

TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|(.))")


def tokenize(expr):
    tokens = []
    pos = 0
    expr = expr.rstrip()
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        number, op = m.groups()
        if number is not None:
            tokens.append(float(number))
        elif op in "+-*/()":
            tokens.append(op)
        else:
            raise ValueError(f"unexpected character {op!r}")
        pos = m.end()
    return tokens


class Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.i = 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self):
        token = self.peek()
        if token is None:
            raise ValueError("unexpected end of expression")
        self.i += 1
        return token

    def expression(self):
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take() == "+" else value - self.term()
        return value

    def term(self):
        value = self.factor()
        while self.peek() in ("*", "/"):
            if self.take() == "*":
                value *= self.factor()
            else:
                divisor = self.factor()
                if divisor == 0:
                    raise ZeroDivisionError("division by zero")
                value /= divisor
        return value

    def factor(self):
        token = self.take()
        if token == "-":
            return -self.factor()
        if token == "(":
            value = self.expression()
            if self.take() != ")":
                raise ValueError("expected )")
            return value
        if isinstance(token, float):
            return token
        raise ValueError(f"unexpected {token!r}")


def evaluate(expr):
    parser = Parser(tokenize(expr))
    value = parser.expression()
    if parser.peek() is not None:
        raise ValueError(f"unexpected {parser.peek()!r}")
    return float(value)


if __name__ == "__main__":
    print(evaluate(sys.argv[1]))
PY
