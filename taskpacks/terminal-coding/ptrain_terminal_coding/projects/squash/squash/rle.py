"""Run-length encoding of text ("aaab" -> "3a1b") and the Adler-32 checksum."""

MOD_ADLER = 65521


def runs(text):
    """[(char, count), ...] for each run of equal characters."""
    result = []
    for char in text:
        if result and result[-1][0] == char:
            result[-1] = (char, result[-1][1] + 1)
        else:
            result.append((char, 1))
    return result


def rle_encode(text, max_run=9):
    """Each run as count then character; runs longer than `max_run` are split."""
    if any(char.isdigit() for char in text):
        raise ValueError("digits cannot be run-length encoded in this format")
    parts = []
    for char, count in runs(text):
        while count > max_run:
            parts.append(f"{max_run}{char}")
            count -= max_run
        parts.append(f"{count}{char}")
    return "".join(parts)


def rle_decode(encoded):
    out = []
    count = ""
    for char in encoded:
        if char.isdigit():
            count += char
        elif not count:
            raise ValueError(f"character {char!r} has no count")
        else:
            out.append(char * int(count))
            count = ""
    if count:
        raise ValueError("encoded text ends with a count")
    return "".join(out)


def adler32(data):
    a, b = 1, 0
    for byte in data:
        a = (a + byte) % MOD_ADLER
        b = (b + a) % MOD_ADLER
    return (b << 16) | a
