"""Line filling and alignment for monospaced text."""


def wrap(text, width):
    """Greedy line filling; a word longer than `width` is split across lines."""
    if width < 1:
        raise ValueError("width must be at least 1")
    lines = []
    line = ""
    for word in text.split():
        while len(word) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line = line + " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


def justify(line, width):
    """Spread the words of `line` so it is exactly `width` wide; extra spaces go to the left gaps."""
    words = line.split()
    if len(words) < 2:
        return line.strip().ljust(width)
    gaps = len(words) - 1
    spaces = width - sum(len(word) for word in words)
    if spaces < gaps:
        raise ValueError("line is too long to justify")
    base, extra = divmod(spaces, gaps)
    out = words[0]
    for i, word in enumerate(words[1:]):
        out += " " * (base + (1 if i < extra else 0)) + word
    return out


def center(text, width, fill=" "):
    """Center `text`; when the padding is odd, the extra character goes on the right."""
    padding = width - len(text)
    if padding <= 0:
        return text
    left = padding // 2
    return fill * left + text + fill * (padding - left)


def truncate(text, limit, ellipsis="..."):
    """Cut `text` to at most `limit` characters, marking the cut with `ellipsis`."""
    if len(text) <= limit:
        return text
    if limit <= len(ellipsis):
        return ellipsis[:limit]
    return text[: limit - len(ellipsis)] + ellipsis


def indent(text, prefix, first=None):
    """Prefix every non-blank line; `first` (if given) replaces the prefix on the first line."""
    out = []
    for number, line in enumerate(text.split("\n")):
        mark = first if number == 0 and first is not None else prefix
        out.append(mark + line if line.strip() else line)
    return "\n".join(out)
