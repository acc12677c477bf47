"""Signal energy."""

import numpy as np


def total_energy(x):
    a = np.asarray(x)
    return (a * a).sum()
