"""Standardisation and summaries."""

import numpy as np


def zscore(x):
    a = np.asarray(x, dtype=float)
    return (a - a.mean()) / a.std()


def summary(x):
    a = np.asarray(x, dtype=float)
    return {"count": int(a.size), "mean": float(a.mean()), "min": float(a.min()), "max": float(a.max()),
            "p95": float(np.percentile(a, 95))}
