"""mdtoc: tables of contents for Markdown."""
