"""tabkit: tab-separated data helpers."""

__version__ = "0.3.1"
