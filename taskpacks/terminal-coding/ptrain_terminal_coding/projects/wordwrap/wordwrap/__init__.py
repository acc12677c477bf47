"""Plain-text formatting: wrap, justify, center, truncate, indent and simple tables."""

from wordwrap.table import table
from wordwrap.text import center, indent, justify, truncate, wrap

__all__ = ["center", "indent", "justify", "table", "truncate", "wrap"]
