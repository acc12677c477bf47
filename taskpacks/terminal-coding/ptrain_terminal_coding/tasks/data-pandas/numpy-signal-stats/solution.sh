cd /workspace && cat > sigstats/stats.py <<'PY'
"""Standardisation and summaries."""

import numpy as np


def zscore(x):
    a = np.asarray(x, dtype=float)
    if a.size == 0:
        return a.copy()
    s = a.std(ddof=1) if a.size > 1 else 0.0
    if s == 0:
        return np.zeros_like(a)
    return (a - a.mean()) / s


def summary(x):
    a = np.asarray(x, dtype=float)
    a = a[~np.isnan(a)]
    if a.size == 0:
        return {"count": 0, "mean": None, "min": None, "max": None, "p95": None}
    return {"count": int(a.size), "mean": float(a.mean()), "min": float(a.min()), "max": float(a.max()),
            "p95": float(np.percentile(a, 95))}
PY
cat > sigstats/smooth.py <<'PY'
"""Smoothing."""

import numpy as np


def moving_average(x, w):
    a = np.asarray(x, dtype=float)
    if not 1 <= w <= a.size:
        raise ValueError(f"window {w} must be between 1 and {a.size}")
    c = np.concatenate(([0.0], np.cumsum(a)))
    return (c[w:] - c[:-w]) / w
PY
cat > sigstats/energy.py <<'PY'
"""Signal energy."""

import numpy as np


def total_energy(x):
    a = np.asarray(x)
    if np.issubdtype(a.dtype, np.integer):
        return sum(int(v) * int(v) for v in a.tolist())
    return float(np.sum(a.astype(float) ** 2))
PY
