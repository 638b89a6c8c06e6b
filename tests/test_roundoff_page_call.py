"""The Round-off page's worker call: the result cut to the rows the page lists, its figures from every point.

``gradlab.server.heavy_work.roundoff(settings, rows)`` returns the comparison with its table cut to
``rows`` rows and the page's three figures as dicts. The figures must still count every compared
point, not the rows that crossed the pipe: the error histogram's fractions sum to 1 over all of them
and the distance bars' counts add up to the summary's ``compared``.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from gradlab.labs.roundoff.engine import COMPARISONS, RoundoffSettings, compare
from gradlab.server.heavy_work import roundoff

SAMPLES, ROWS = 3000, 10


@pytest.mark.parametrize("name", ["reciprocal", "log1p"])
def test_the_page_call_cuts_the_table_and_draws_every_point(name):
    settings = RoundoffSettings(**{**COMPARISONS[name].settings.__dict__, "samples": SAMPLES})
    result, (main, bars, by_x) = roundoff(settings, ROWS)
    full = compare(settings)
    assert len(result.table) == ROWS
    assert result.table.equals(full.table.head(ROWS))
    assert result.summary == full.summary and result.summary.compared > ROWS
    # the main chart: each formula's fraction of the compared points per bin, a closing 0 appended
    for trace in main["data"][:2]:
        assert math.isclose(float(np.sum(_values(trace["y"]))), 1.0, rel_tol=1e-12)
    # the bars: how many points are 0, 1, 2, ... ulps apart, every compared point in one bar
    assert int(np.sum(_values(bars["data"][0]["customdata"]))) == result.summary.compared
    assert len(by_x["data"]) == 4  # worst and mean of each formula
    pickle.dumps((result, (main, bars, by_x)))  # what crosses the pipe from the worker


def _values(array) -> np.ndarray:
    """A figure dict's array: a plain list, or Plotly's typed array ({"dtype", "bdata"} in base64)."""
    if isinstance(array, dict):
        import base64

        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
    return np.asarray(array, dtype=float)


def test_the_quiz_call_returns_the_comparison_s_summary_and_no_figures():
    from gradlab.server.heavy_work import BOUNDS, roundoff_summary

    settings = RoundoffSettings(**{**COMPARISONS["reciprocal"].settings.__dict__, "samples": SAMPLES,
                                   "dtype": "float64"})
    assert roundoff_summary(settings) == compare(settings).summary  # the summary, nothing drawn
    (_, seconds, name), (_, page_seconds, page_name) = BOUNDS[roundoff_summary], BOUNDS[roundoff]
    assert (seconds(), name) == (page_seconds(), page_name)  # the same bound as the page's call
