"""The agent's framed protocol, shared with the host client (container.py imports it).

message = 4-byte big-endian length of a JSON header, the header, then header["size"] raw bytes
"""

from __future__ import annotations

import json
import socket
import struct

HEADER = struct.Struct(">I")
MAX_HEADER_BYTES = 1 << 20


def encode(header: dict, payload: bytes = b"") -> bytes:
    raw = json.dumps({**header, "size": len(payload)}).encode()
    return HEADER.pack(len(raw)) + raw + payload


def decode_header(raw: bytes) -> dict:
    return json.loads(raw.decode())


def read_exact(conn: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = conn.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
