"""The online run's own memory: resident size each round, and glibc's free heap pages handed back.

Why: the hf engine's KV is many large tensors of varied sizes (each row's slot buffers, a prefix
entry per finished turn, each a little longer than the last), all dropped at every weight update
(`HFEngine.paused` clears the prefix cache). glibc keeps what was freed in its heaps for reuse;
when the sizes no longer fit the holes the heaps only grow. `release()` runs `malloc_trim(0)`,
which returns every free page of every heap to the system, once a round after the training step,
and each round's summary in RUN/metrics/online.jsonl records `rss_gb` (after it), `released_gb`
and `peak_rss_gb`, so a run that creeps toward the OOM killer shows it round by round.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import resource
from functools import cache


def rss_gb() -> float:
    """This process's resident memory now, in GB (0.0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except OSError:
        return 0.0
    return pages * resource.getpagesize() / 1e9


@cache
def _libc():
    """The C library, where it is glibc (which has `malloc_trim`); else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


def release() -> dict:
    """Hand free heap pages back to the system; the memory figures for the round's summary."""
    before = rss_gb()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
    after = rss_gb()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # kilobytes on Linux
    return {"rss_gb": round(after, 3), "released_gb": round(max(before - after, 0.0), 3), "peak_rss_gb": round(peak, 3)}
