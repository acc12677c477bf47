cd /workspace && cat > minredis/protocol.py <<'PY'
"""RESP2: encoding commands and parsing replies."""


class ReplyError(Exception):
    """An error reply from the server."""


def encode(args):
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode("utf-8")
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def read_reply(stream):
    """Read one reply from `stream` (a connection.Reader)."""
    line = stream.readline()
    kind, rest = line[:1], line[1:]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise ReplyError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = stream.read(n + 2)
        return data[:-2].decode("utf-8")
    if kind == b"*":
        n = int(rest)
        if n < 0:
            return None
        return [read_reply(stream) for _ in range(n)]
    raise ReplyError(f"unexpected reply {line!r}")
PY
python3 - <<'PY'
from pathlib import Path
p = Path("minredis/connection.py")
p.write_text(p.read_text().replace("""        if len(self.buffer) < n:
            self.buffer += self.sock.recv(65536)""", """        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed by the server")
            self.buffer += chunk"""))
p = Path("minredis/client.py")
p.write_text(p.read_text().replace("""        flat = self.execute("HGETALL", key)
""", """        flat = self.execute("HGETALL", key) or []
"""))
PY
