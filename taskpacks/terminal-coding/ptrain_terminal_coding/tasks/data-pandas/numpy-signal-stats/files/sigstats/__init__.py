"""sigstats: numpy helpers for sensor signals."""

from sigstats.energy import total_energy
from sigstats.smooth import moving_average
from sigstats.stats import summary, zscore

__all__ = ["moving_average", "summary", "total_energy", "zscore"]
