"""throttle: sliding-window rate limiting."""

from throttle.limiter import SlidingWindowLimiter

__all__ = ["SlidingWindowLimiter"]
