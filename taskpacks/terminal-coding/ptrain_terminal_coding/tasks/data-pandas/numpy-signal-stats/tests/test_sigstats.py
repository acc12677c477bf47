import math
import random
import statistics
import warnings

import numpy as np
import pytest


def test_zscore_uses_the_sample_deviation():
    from sigstats import zscore

    x = [2.0, 4, 4, 4, 5, 5, 7, 9]
    m, s = statistics.fmean(x), statistics.stdev(x)
    np.testing.assert_allclose(zscore(x), [(v - m) / s for v in x], rtol=1e-12)
    ints = np.array([1, 2, 3, 4], dtype=np.int16)
    np.testing.assert_allclose(zscore(ints), (ints - 2.5) / statistics.stdev([1, 2, 3, 4]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(zscore([3, 3, 3])) == [0.0, 0.0, 0.0]


def test_moving_average_valid():
    from sigstats import moving_average

    r = random.Random(1)
    x = [r.uniform(-5, 5) for _ in range(50)]
    for w in (1, 2, 5, 50):
        want = [statistics.fmean(x[i : i + w]) for i in range(len(x) - w + 1)]
        np.testing.assert_allclose(moving_average(x, w), want, rtol=1e-9, atol=1e-12)
    assert list(moving_average(np.arange(5), 2)) == [0.5, 1.5, 2.5, 3.5]
    for bad in (0, 51, -1):
        with pytest.raises(ValueError):
            moving_average(x, bad)


def test_total_energy_does_not_overflow():
    from sigstats import total_energy

    a = np.full(100_000, 30_000, dtype=np.int16)
    got = total_energy(a)
    assert got == 100_000 * 30_000**2 and isinstance(got, int)
    b = np.array([2**31 - 1, -(2**31)], dtype=np.int32)
    assert total_energy(b) == (2**31 - 1) ** 2 + 2**62
    assert total_energy([1, 2, 3]) == 14 and isinstance(total_energy([1, 2, 3]), int)
    f = total_energy(np.array([0.5, 1.5], dtype=np.float32))
    assert isinstance(f, float) and f == 2.5
    assert a[0] == 30_000


def test_summary_ignores_nans():
    from sigstats import summary

    x = [1.0, float("nan"), 3.0, 2.0, float("nan"), 10.0]
    clean = [1.0, 3.0, 2.0, 10.0]
    got = summary(np.array(x))
    assert got["count"] == 4 and isinstance(got["count"], int)
    assert got["mean"] == 4.0 and got["min"] == 1.0 and got["max"] == 10.0
    assert math.isclose(got["p95"], float(np.percentile(clean, 95)))
    assert all(type(got[k]) is float for k in ("mean", "min", "max", "p95"))
    assert summary([float("nan")] * 3) == {"count": 0, "mean": None, "min": None, "max": None, "p95": None}
    assert summary([]) == {"count": 0, "mean": None, "min": None, "max": None, "p95": None}


def test_inputs_are_not_modified():
    from sigstats import moving_average, summary, total_energy, zscore

    a = np.array([3.0, 1.0, np.nan, 2.0])
    before = a.copy()
    summary(a)
    zscore(a[[0, 1, 3]])
    moving_average(a[[0, 1, 3]], 2)
    total_energy(a[[0, 1, 3]])
    np.testing.assert_array_equal(a, before)
