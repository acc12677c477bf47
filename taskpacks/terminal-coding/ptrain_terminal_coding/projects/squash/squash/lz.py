"""An LZ77-style codec: a list of (offset, length, next_char) triples over a sliding window."""


def longest_match(data, pos, window, max_length):
    """The (offset, length) of the longest earlier match for data[pos:], within `window` back."""
    best_offset, best_length = 0, 0
    for start in range(max(0, pos - window), pos):
        length = 0
        while length < max_length and pos + length < len(data) - 1 and data[start + length] == data[pos + length]:
            length += 1
        if length > 0 and length >= best_length:
            best_offset, best_length = pos - start, length
    return best_offset, best_length


def lz_compress(data, window=32, max_length=15):
    triples = []
    pos = 0
    while pos < len(data):
        offset, length = longest_match(data, pos, window, max_length)
        triples.append((offset, length, data[pos + length]))
        pos += length + 1
    return triples


def lz_decompress(triples):
    out = []
    for offset, length, char in triples:
        if length and (offset < 1 or offset > len(out)):
            raise ValueError(f"offset {offset} points outside the {len(out)} characters decoded so far")
        start = len(out) - offset
        for i in range(length):
            out.append(out[start + i])
        out.append(char)
    return "".join(out)
