"""Smoothing."""

import numpy as np


def moving_average(x, w):
    a = np.asarray(x, dtype=float)
    c = np.cumsum(a)
    return (c[w:] - c[:-w]) / w
