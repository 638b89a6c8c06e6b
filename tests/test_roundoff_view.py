"""The Round-off page's view: the rows the page lists, and its figures from every point.

``gradlab.labs.roundoff.view(settings)`` runs in a worker and returns the page's answer, its first
``TABLE_ROWS`` points (bit patterns in hex) and its three figures as dicts. The figures must still
count every compared point, not the rows that crossed the pipe: the error histogram's fractions sum
to 1 over all of them and the distance bars' counts add up to the comparison's ``compared``.
"""

from __future__ import annotations

import math
import pickle
from dataclasses import replace

import numpy as np
import pytest

from gradlab.labs.roundoff import TABLE_ROWS, quiz_view, view
from gradlab.labs.roundoff.engine import COMPARISONS, RoundoffSettings, compare, with_hex

SAMPLES = 3000


@pytest.mark.parametrize("name", ["reciprocal", "log1p"])
def test_the_view_cuts_the_table_and_draws_every_point(name):
    settings = replace(COMPARISONS[name].settings, samples=SAMPLES)
    shown = view(settings)
    full = compare(settings)
    assert SAMPLES > TABLE_ROWS and len(shown.tables["points"]) == TABLE_ROWS
    assert shown.tables["points"].equals(with_hex(full.table.head(TABLE_ROWS)))
    assert full.summary.compared > TABLE_ROWS
    main, bars, by_x = (shown.charts[name].args[0] for name in ("errors", "distance", "by x"))
    # the main chart: each formula's fraction of the compared points per bin, a closing 0 appended
    for trace in main["data"][:2]:
        assert math.isclose(float(np.sum(_values(trace["y"]))), 1.0, rel_tol=1e-12)
    # the bars: how many points are 0, 1, 2, ... ulps apart, every compared point in one bar
    assert int(np.sum(_values(bars["data"][0]["customdata"]))) == full.summary.compared
    assert len(by_x["data"]) == 4  # worst and mean of each formula
    pickle.dumps(shown)  # what crosses the pipe from the worker


def test_the_metrics_read_the_comparison_s_own_counts():
    """Same bits is the share of points where A and B have the same bit pattern, counted here from the
    hex the table shows; 'floats apart' is at most the largest distance in the listed rows' ulps."""
    settings = RoundoffSettings(samples=TABLE_ROWS)  # every point listed
    shown = view(settings)
    numbers = {n.label: n.value for n in shown.numbers}
    points = shown.tables["points"]
    same = float(np.mean(points["hex_a"] == points["hex_b"]))
    assert numbers["same bits"] == f"{same:.1%}"
    assert int(numbers["A–B, floats apart (at most)"]) == int(points["ulps_a_b"].max())


def _values(array) -> np.ndarray:
    """A figure dict's array: a plain list, or Plotly's typed array ({"dtype", "bdata"} in base64)."""
    if isinstance(array, dict):
        import base64

        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
    return np.asarray(array, dtype=float)


def test_the_quiz_view_reveals_the_float64_comparison_and_draws_nothing():
    settings = RoundoffSettings(**{**COMPARISONS["reciprocal"].settings.__dict__, "samples": SAMPLES,
                                   "dtype": "float64"})
    shown = quiz_view(settings)
    s = compare(settings).summary
    assert not shown.charts
    reveals = shown.tables["prediction"]
    assert list(reveals.index[reveals["right"]]) == ["ulps"] and 0 < s.max_ulps_a_b <= 3  # a few float64 ulps
    assert all(f"{s.compared:,} points" in text.replace("\\", "") for text in reveals["reveal"])
    assert shown.answer.level == "success" and shown.answer.text.startswith("Right.")
    # the same limit as the page's call
    assert quiz_view.worker_entry == view.worker_entry and quiz_view.limit_advice == view.limit_advice
