"""RESP2: encoding commands and parsing replies."""


class ReplyError(Exception):
    """An error reply from the server."""


def encode(args):
    parts = [f"*{len(args)}\r\n"]
    for arg in args:
        text = arg.decode() if isinstance(arg, bytes) else str(arg)
        parts.append(f"${len(text)}\r\n{text}\r\n")
    return "".join(parts).encode()


def read_reply(stream):
    """Read one reply from `stream` (a connection.Reader)."""
    line = stream.readline()
    kind, rest = line[:1], line[1:]
    if kind in (b"+", b"-", b":"):
        return rest.decode()
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return ""
        data = stream.read(n + 2)
        return data[:-2].decode()
    if kind == b"*":
        return [read_reply(stream) for _ in range(int(rest))]
    raise ReplyError(f"unexpected reply {line!r}")
