"""chronos 2.1: ISO dates. (2.0 removed parse(text, fmt).)"""

import datetime

VERSION = "2.1"


def parse_iso(text):
    return datetime.date.fromisoformat(text.strip())


def days_between(a, b):
    return (b - a).days
