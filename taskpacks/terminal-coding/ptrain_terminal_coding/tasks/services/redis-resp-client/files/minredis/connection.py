"""A socket with buffered reads of lines and counted bytes."""

import socket


class Reader:
    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def readline(self):
        while b"\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed by the server")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def read(self, n):
        if len(self.buffer) < n:
            self.buffer += self.sock.recv(65536)
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data


class Connection:
    def __init__(self, host, port, timeout_s=10):
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        self.reader = Reader(self.sock)

    def send(self, data):
        self.sock.sendall(data)

    def close(self):
        self.sock.close()
