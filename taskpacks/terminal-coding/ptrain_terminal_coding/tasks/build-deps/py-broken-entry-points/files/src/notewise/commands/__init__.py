"""Command-line commands."""
