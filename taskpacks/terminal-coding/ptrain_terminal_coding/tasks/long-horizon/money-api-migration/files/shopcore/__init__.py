"""shopcore: the shop's business logic."""

__version__ = "3.0.0"
