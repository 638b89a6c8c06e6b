"""Percentiles of measured latencies, as the load test and the server tests report them."""

from __future__ import annotations

import statistics


def pct(values: list[float], q: float) -> float:
    """The ``q``-th percentile of ``values`` (inclusive method: between the sample's own values);
    NaN for no values, the value itself for one.

    >>> pct([1.0, 2.0, 3.0, 4.0, 5.0], 50), pct([1.0, 2.0, 3.0, 4.0, 5.0], 95)
    (3.0, 4.8)
    >>> pct([0.7], 95), pct([], 50)
    (0.7, nan)
    """
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]
