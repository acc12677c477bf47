"""Version ranges: space-separated comparators that must all hold."""

import operator
import re

from verkit.version import Version

OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "=": operator.eq}
COMPARATOR = re.compile(r"^(>=|<=|>|<|=)?(.+)$")


def satisfies(version, spec):
    v = Version.parse(version) if isinstance(version, str) else version
    for part in spec.split():
        m = COMPARATOR.match(part)
        op = OPS[m[1] or "="]
        if not op(v, Version.parse(m[2])):
            return False
    return True
