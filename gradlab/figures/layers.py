"""A layer-by-layer check as a chart: one horizontal bar per module and side checked.

The bar's length is the worst difference over its tolerance (log axis: 1 is the
tolerance, drawn as a dotted line), its colour the check's state
(:data:`gradlab.check.verdicts.states.STATES`); a check that could not run has no bar and says
why when hovered. Modules read top to bottom in forward order, so the failing layer
stands out where it sits in the model.

Every text a model brings (its modules' names, their classes, the answer naming them) goes
through :func:`gradlab.literal_text.plotly_literal`: Plotly reads a subset of HTML in tick
labels, titles and hover text, so a submodule named ``<a href=...>click</a>`` would be a live
link in the chart.

>>> from gradlab.layers.result import LayerRow, LayersResult
>>> rows = (LayerRow("0", "Linear", "float64", "parameters", "pass", 0, 1, False, "weight[0, 0]",
...                  1.0, 1.0, 1e-9, 1e-5, 1e-10, 0.01, ""),
...         LayerRow("1", "Swish", "float64", "inputs", "fail", 0, 1, True, "x[0, 2]",
...                  1.0, 2.0, 1.0, 1e-5, 1e-9, 0.01, ""))
>>> fig = layers_figure(LayersResult(rows, "first", "Sequential"))
>>> [t.name for t in fig.data][:2], list(fig.layout.yaxis.categoryarray)
(['pass', 'fail'], ['1 Swish · inputs', '0 Linear · parameters'])
"""

from __future__ import annotations

import numpy as np

from gradlab.check import STATES
from gradlab.figures.spec import LOG_AXIS, FigureOrSpec, FigureSpec
from gradlab.figures.style import GUIDE
from gradlab.literal_text import plotly_literal

__all__ = ["layers_figure"]

_ROW_HEIGHT = 26


def layers_figure(result) -> FigureOrSpec:
    """The chart of a :class:`gradlab.layers.result.LayersResult` (see the module docstring)."""
    rows = result.rows
    # named as the answer names them (path and class), not by index alone: "3 WrongSwish · inputs"
    names = [f"{plotly_literal(r.module or 'model')} {plotly_literal(r.kind)}"
             + (f" (call {r.call + 1})" if r.calls > 1 else "") + f" · {r.over}" for r in rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.array([r.difference / r.tolerance if r.tolerance > 0 else np.nan for r in rows])
    ratio = np.where(np.isfinite(ratio) & (ratio > 0), ratio, np.nan)
    floor = np.nanmin(ratio) / 10 if np.isfinite(ratio).any() else 1e-3
    length = np.where(np.isnan(ratio), floor, ratio)  # a difference of exactly 0: the axis's start
    fig = FigureSpec()
    for state in [s for s in (*STATES, "skipped") if any(r.verdict == s for r in rows)]:
        chosen = np.array([r.verdict == state for r in rows])
        hover = [f"{plotly_literal(r.where)}<br>{plotly_literal(r.over)}: {plotly_literal(r.verdict)}"
                 + (f"<br>worst {plotly_literal(r.element)}: |difference| = {r.difference:.2e}, "
                    f"tolerance {r.tolerance:.2e}" if r.element else "")
                 + (f"<br>{plotly_literal(r.note)}" if r.note else "") for r, c in zip(rows, chosen) if c]
        fig.add_trace(dict(type="bar", orientation="h", name=STATES[state].label if state in STATES else state,
                           y=np.array(names, dtype=object)[chosen],
                           x=np.where(np.array([r.verdict == "skipped" for r in rows]), np.nan, length)[chosen],
                           marker=dict(color=STATES[state].colour if state in STATES else GUIDE),
                           base=floor, hovertext=hover, hoverinfo="text"))
    fig.add_shape(type="line", x0=1, x1=1, yref="paper", y0=0, y1=1, line=dict(dash="dot", color=GUIDE))
    fig.update_xaxes(title={"text": "worst |difference| / tolerance (1: the tolerance)"}, **LOG_AXIS)
    # every bar labelled: a category axis left to itself labels every other one when rows crowd
    fig.update_yaxes(categoryorder="array", categoryarray=names[::-1], automargin=True,
                     tickmode="array", tickvals=names, ticktext=names)
    fig.update_layout(title={"text": plotly_literal(result.answer), "x": 0, "xanchor": "left", "font": {"size": 14}},
                      height=120 + _ROW_HEIGHT * len(rows), barmode="overlay", hovermode="closest",
                      margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1))
    return fig.figure()
