"""Evaluate tokens by recursive descent. Precedence, lowest first: + -, * / %, unary -, ^ (right)."""

import math

from calc.lexer import tokenize

FUNCTIONS = {"abs": abs, "sqrt": math.sqrt, "min": min, "max": max}


class CalcError(Exception):
    pass


class Parser:
    def __init__(self, text, variables):
        self.tokens = tokenize(text)
        self.index = 0
        self.variables = variables

    def peek(self):
        return self.tokens[self.index]

    def take(self):
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expect(self, text):
        token = self.take()
        if token.text != text:
            raise CalcError(f"expected {text!r} at {token.pos}, got {token.text!r}")

    def expression(self):
        value = self.term()
        while self.peek().text in ("+", "-"):
            if self.take().text == "+":
                value = value + self.term()
            else:
                value = value - self.term()
        return value

    def term(self):
        value = self.unary()
        while self.peek().text in ("*", "/", "%"):
            op = self.take().text
            right = self.unary()
            if op != "*" and right == 0:
                raise CalcError("division by zero")
            if op == "*":
                value = value * right
            elif op == "/":
                value = value / right
            else:
                value = value % right
        return value

    def unary(self):
        if self.peek().text == "-":
            self.take()
            return -self.unary()
        return self.power()

    def power(self):
        base = self.atom()
        if self.peek().text == "^":
            self.take()
            return base ** self.unary()
        return base

    def atom(self):
        token = self.take()
        if token.kind == "number":
            return float(token.text) if "." in token.text else int(token.text)
        if token.kind == "name" and self.peek().text == "(":
            return self.call(token)
        if token.kind == "name":
            if token.text not in self.variables:
                raise CalcError(f"unknown variable {token.text!r}")
            return self.variables[token.text]
        if token.text == "(":
            value = self.expression()
            self.expect(")")
            return value
        raise CalcError(f"unexpected {token.text or 'end'!r} at {token.pos}")

    def call(self, name):
        if name.text not in FUNCTIONS:
            raise CalcError(f"unknown function {name.text!r}")
        self.expect("(")
        args = [self.expression()]
        while self.peek().text == ",":
            self.take()
            args.append(self.expression())
        self.expect(")")
        return FUNCTIONS[name.text](*args)


def evaluate(text, variables=None):
    parser = Parser(text, variables or {})
    value = parser.expression()
    if parser.peek().kind != "end":
        raise CalcError(f"trailing input at {parser.peek().pos}")
    return value
