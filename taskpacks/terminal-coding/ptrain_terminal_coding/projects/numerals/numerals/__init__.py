"""Number notations: Roman numerals, any base from 2 to 36, digit grouping and ordinals."""

from numerals.bases import digit_sum, from_base, group_digits, ordinal, to_base
from numerals.roman import from_roman, to_roman

__all__ = ["digit_sum", "from_base", "from_roman", "group_digits", "ordinal", "to_base", "to_roman"]
