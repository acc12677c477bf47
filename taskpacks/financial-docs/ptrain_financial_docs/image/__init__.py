"""Files copied into the sandbox image: fdocs.py (search, read, tables) and fscore.py (the scorer)."""
