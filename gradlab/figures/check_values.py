"""A check's values as a chart: |autograd − numeric| of every checked value against its tolerance.

The figure a sampled or directional check (or a full check of an input that
has no 2-D layout) shows: one marker per value on a log axis, one trace per
state (``pass``/``fail``, and ``inconclusive``/``not_differentiable`` when the
table carries a ``state`` column), the tolerance of each value as a dotted
line, and the finite difference's error bound when the table has one. Values
whose difference is exactly 0 cannot sit on a log axis: they are gaps and the
title counts them. Labels are shown through :func:`gradlab.literal_text.plotly_literal`.

>>> table = pd.DataFrame({"element": ["x[0]", "x[1]"], "autograd": [1.0, 2.0],
...                       "numeric": [1.0, 2.5], "abs_error": [1e-9, 0.5],
...                       "tolerance": [1e-5, 1e-5], "ok": [True, False]})
>>> fig = value_errors_figure(table)
>>> [t.name for t in fig.data], fig.layout.yaxis.type
(['pass', 'fail', 'tolerance'], 'log')
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gradlab.figures.spec import LOG_AXIS, FigureOrSpec, FigureSpec
from gradlab.check import STATES
from gradlab.figures.style import GUIDE
from gradlab.literal_text import plotly_literal

__all__ = ["STATE_COLOURS", "value_states", "value_errors_figure"]

#: One colour per state of a checked value (from the state rows), in the order the legend lists them.
STATE_COLOURS = {name: state.colour for name, state in STATES.items()}
_HEIGHT = 420


def value_states(table: pd.DataFrame) -> np.ndarray:
    """Each value's state: the ``state`` column if the table has one, else pass/fail from ``ok``."""
    if "state" in table:
        return table["state"].astype(str).to_numpy()
    return np.where(table["ok"].to_numpy(dtype=bool), "pass", "fail")


def _positive(values) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(v) & (v > 0), v, np.nan)


def value_errors_figure(table: pd.DataFrame) -> FigureOrSpec:
    """|autograd − numeric| per checked value (log axis), coloured by state, with the tolerance."""
    position = np.arange(len(table))
    states = value_states(table)
    errors = _positive(table["abs_error"])
    labels = np.array([plotly_literal(e) for e in table["element"]], dtype=object)
    fig = FigureSpec()
    for state in [s for s in STATE_COLOURS if s in set(states)] + sorted(set(states) - set(STATE_COLOURS)):
        rows = states == state
        fig.add_trace(dict(
            type="scatter", mode="markers", name=state, x=position[rows], y=errors[rows],
            marker=dict(size=7, color=STATE_COLOURS.get(state, GUIDE)),
            customdata=np.stack([labels[rows], table["autograd"].to_numpy()[rows],
                                 table["numeric"].to_numpy()[rows]], axis=1),
            hovertemplate=("%{customdata[0]}<br>autograd = %{customdata[1]:.6g}<br>finite difference = "
                           "%{customdata[2]:.6g}<br>|difference| = %{y:.2e}<extra>" + state + "</extra>"),
        ))
    fig.add_trace(dict(type="scatter", mode="lines", name="tolerance", x=position,
                       y=_positive(table["tolerance"]), line=dict(dash="dot", color=GUIDE),
                       hovertemplate="tolerance = %{y:.2e}<extra></extra>"))
    if "error_bound" in table:
        fig.add_trace(dict(type="scatter", mode="lines", name="error bound", x=position,
                           y=_positive(table["error_bound"]), line=dict(dash="dash", color=GUIDE),
                           hovertemplate="error bound = %{y:.2e}<extra></extra>"))
    title = "|autograd − finite difference| of every checked value"
    gaps = int(np.isnan(errors).sum())
    if gaps:
        title += f"<br><sup>{gaps} value{'s' if gaps != 1 else ''} agree exactly or are not finite (gaps)</sup>"
    fig.update_yaxes(title={"text": "|autograd − finite difference|"}, **LOG_AXIS)
    fig.update_xaxes(title={"text": "checked value (row of the table)"})
    fig.update_layout(title={"text": title}, height=_HEIGHT, hovermode="closest")
    return fig.figure()
