"""minredis: a small Redis client with no dependencies."""

from minredis.client import Client
from minredis.protocol import ReplyError

__all__ = ["Client", "ReplyError"]
