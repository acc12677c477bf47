def parse_size(text):
    """'10K' -> 10240, '3M' -> 3145728, '42' -> 42."""
    units = {"K": 1024, "M": 1024 ** 2}
    if text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)
