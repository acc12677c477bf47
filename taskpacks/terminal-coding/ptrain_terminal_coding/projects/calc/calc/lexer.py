"""Split an arithmetic expression into tokens: numbers, names, operators and parentheses."""

from dataclasses import dataclass

OPERATORS = "+-*/%^(),"


@dataclass(frozen=True)
class Token:
    kind: str  # "number", "name", "op" or "end"
    text: str
    pos: int


def read_number(text, start):
    end = start
    seen_dot = False
    while end < len(text) and (text[end].isdigit() or (text[end] == "." and not seen_dot)):
        if text[end] == ".":
            seen_dot = True
        end += 1
    return end


def read_name(text, start):
    end = start
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return end


def tokenize(text):
    tokens = []
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char.isspace():
            pos += 1
        elif char.isdigit() or char == ".":
            end = read_number(text, pos)
            if text[pos:end] == ".":
                raise SyntaxError(f"lonely '.' at {pos}")
            tokens.append(Token("number", text[pos:end], pos))
            pos = end
        elif char.isalpha() or char == "_":
            end = read_name(text, pos)
            tokens.append(Token("name", text[pos:end], pos))
            pos = end
        elif char in OPERATORS:
            tokens.append(Token("op", char, pos))
            pos += 1
        else:
            raise SyntaxError(f"unexpected {char!r} at {pos}")
    tokens.append(Token("end", "", len(text)))
    return tokens
