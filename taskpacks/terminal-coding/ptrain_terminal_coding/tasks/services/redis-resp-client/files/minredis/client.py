"""The commands."""

from minredis.connection import Connection
from minredis.protocol import encode, read_reply


class Client:
    def __init__(self, host="127.0.0.1", port=6379, password=None, timeout_s=10):
        self.conn = Connection(host, port, timeout_s)
        if password is not None:
            self.execute("AUTH", password)

    def execute(self, *args):
        self.conn.send(encode(args))
        return read_reply(self.conn.reader)

    def set(self, key, value):
        return self.execute("SET", key, value)

    def get(self, key):
        return self.execute("GET", key)

    def delete(self, *keys):
        return self.execute("DEL", *keys)

    def incr(self, key):
        return self.execute("INCR", key)

    def hset(self, key, field, value):
        return self.execute("HSET", key, field, value)

    def hgetall(self, key):
        flat = self.execute("HGETALL", key)
        return dict(zip(flat[::2], flat[1::2]))

    def rpush(self, key, *values):
        return self.execute("RPUSH", key, *values)

    def lrange(self, key, start, stop):
        return self.execute("LRANGE", key, start, stop)

    def close(self):
        self.conn.close()
