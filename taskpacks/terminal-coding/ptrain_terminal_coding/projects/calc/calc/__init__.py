"""A tiny calculator: tokenize arithmetic, then evaluate it with variables and a few functions."""

from calc.lexer import Token, tokenize
from calc.parser import CalcError, evaluate

__all__ = ["CalcError", "Token", "evaluate", "tokenize"]
