"""chronos 1.4: dates from strings."""

import datetime

VERSION = "1.4"


def parse(text, fmt):
    return datetime.datetime.strptime(text, fmt).date()
