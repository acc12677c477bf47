"""Parsing and comparing semantic versions."""

import functools
import re

PATTERN = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@functools.total_ordering
class Version:
    def __init__(self, major, minor, patch, prerelease="", build=""):
        self.major, self.minor, self.patch = major, minor, patch
        self.prerelease, self.build = prerelease, build

    @classmethod
    def parse(cls, text):
        m = PATTERN.match(text.strip())
        if not m:
            raise ValueError(f"not a semantic version: {text!r}")
        return cls(int(m[1]), int(m[2]), int(m[3]), m[4] or "", m[5] or "")

    def key(self):
        return (self.major, self.minor, self.patch, self.prerelease, self.build)

    def __eq__(self, other):
        return self.key() == other.key()

    def __lt__(self, other):
        return self.key() < other.key()

    def __hash__(self):
        return hash(self.key())

    def __str__(self):
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + self.prerelease
        if self.build:
            text += "+" + self.build
        return text

    def __repr__(self):
        return f"Version.parse({str(self)!r})"
