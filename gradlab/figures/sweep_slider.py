"""A slider over the step h on the Explorer's chart, animated in the browser.

The sweep's result carries its frames (:mod:`gradlab.sweep.step_frames`): every curve's
estimate at each 1-2-5 step of the chart's range. :func:`add_step_slider` puts them into
the figure as Plotly frames with a Plotly slider, so dragging h moves each curve's point,
its estimate and the vertical line at h in the browser, one frame per stop, with no call to
the server. Each frame replaces only the slider's own traces (``redraw`` off: Plotly moves
those points without drawing the chart again).

>>> from gradlab.sweep.engine import SweepSettings, run_sweep
>>> from gradlab.figures.sweep import error_vs_eps_figure
>>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float64",), ("central",), 1e-4, 1e-2, points=5))
>>> with specs_only():
...     fig = error_vs_eps_figure(r)
>>> add_step_slider(fig, r, 1e-3)
>>> [f["name"] for f in fig.frames][:4], fig.layout["sliders"][0]["active"]
(['1e-04', '2e-04', '5e-04', '1e-03'], 3)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gradlab.figures.spec import FigureOrSpec, FigureSpec, specs_only
from gradlab.figures.style import FONT_SIZE, GUIDE, MARK, MARKER_OUTLINE
from gradlab.figures.sweep_marks import dtype_colour
from gradlab.numerics.schemes import get_scheme

if TYPE_CHECKING:  # the engine imports these figures (SweepResult.figure), never the reverse
    from gradlab.sweep.engine import SweepResult

__all__ = ["SLIDER_COLOURS", "add_step_slider", "error_vs_eps_with_slider", "step_label", "SLIDER_NAME"]

SLIDER_NAME = "step h"
#: The slider's rail and grip: mid greys that read on the light and the dark background (Plotly's
#: default rail is near white, a glare on the dark theme), the grip the marks' colour while dragged.
SLIDER_COLOURS = {"bgcolor": "#c9d1dc", "bordercolor": GUIDE, "borderwidth": 1, "tickcolor": GUIDE,
                  "activebgcolor": MARK}
_ERROR_COLUMN = {"relative": "rel_error", "absolute": "abs_error"}
#: Each stop's animation: at once, points moved without redrawing the chart.
_ANIMATE = {"mode": "immediate", "frame": {"duration": 0, "redraw": False}, "transition": {"duration": 0}}


def step_label(h: float) -> str:
    """A stop's name, label and URL text: ``2e-04`` (as the step sliders write a step).

    >>> step_label(0.0002), step_label(1.0)
    ('2e-04', '1e+00')
    """
    return f"{h:.0e}"


def _error_kind(fig: FigureSpec) -> str:
    title = " ".join(a.get("text", "") for a in fig.layout.get("annotations", ()) if a.get("name") == "y-title")
    return "absolute" if title.startswith("absolute") else "relative"


def _point(value: float) -> float | None:
    return float(value) if np.isfinite(value) and value > 0 else None


def _at_h(rows, h: float, column: str, dtype: str, scheme: str) -> dict:
    """One curve's point at step h (a gap when its error cannot sit on a log axis)."""
    row = rows[rows["h"] == h]
    if row.empty:
        x, y, text, custom = [h], [None], [""], [[math.nan, math.nan, math.nan]]
    else:
        r = row.iloc[0]
        x, y = [h], [_point(r[column])]
        text = [f"{r['estimate']:.7g}" if np.isfinite(r["estimate"]) else "no estimate"]
        custom = [[float(r["step"]), float(r["estimate"]), float(r[column])]]
    return {"type": "scatter", "x": x, "y": y, "text": text, "customdata": custom}


def _line(h: float, y_range) -> dict:
    low, high = (10 ** v for v in y_range) if y_range else (1e-17, 1.0)
    return {"type": "scatter", "x": [h, h], "y": [low, high]}


def add_step_slider(fig: FigureSpec, result: SweepResult, h: float) -> None:
    """Add the step slider to an error-vs-eps figure of ``result`` (see the module docstring):
    a point on each drawn curve at the stop nearest ``h``, a line at h, a frame per stop."""
    frames = result.frames
    if frames.empty or not fig.data:
        return
    column = _ERROR_COLUMN[_error_kind(fig)]
    stops = sorted(float(v) for v in frames["h"].unique())
    h = min(stops, key=lambda s: abs(math.log(s / h)))
    y_range = fig.layout.get("yaxis", {}).get("range")
    curves = [(t["meta"]["dtype"], t["meta"]["scheme"]) for t in fig.data
              if t.get("meta", {}).get("kind") == "sweep"]
    blocks = {c: frames[(frames["dtype"] == c[0]) & (frames["scheme"] == c[1])] for c in curves}
    first = len(fig.data)
    for dtype, scheme in curves:
        fig.add_trace({
            **_at_h(blocks[(dtype, scheme)], h, column, dtype, scheme), "mode": "markers", "cliponaxis": False,
            "marker": {"symbol": "circle", "size": 15, "color": dtype_colour(dtype),
                       "line": {"color": MARKER_OUTLINE, "width": 2.5}},
            # not "dtype · scheme", the curves' own names, which pages and tests count as curves
            "name": f"at h: {dtype}, {get_scheme(scheme).curve_label}", "showlegend": False,
            "hovertemplate": (f"<b>{dtype} · {get_scheme(scheme).curve_label}</b><br>h = %{{x:.0e}}<br>"
                              "step taken = %{customdata[0]:.6e}<br>estimate = %{customdata[1]:.12g}<br>"
                              "error = %{customdata[2]:.3e}<extra></extra>"),
            "meta": {"kind": "at-h", "dtype": dtype, "scheme": scheme}})
    fig.add_trace({**_line(h, y_range), "mode": "lines", "showlegend": False, "hoverinfo": "skip",
                   "line": {"color": GUIDE, "width": 1.5, "dash": "dot"}, "name": "h",
                   "meta": {"kind": "h-line"}})
    moved = list(range(first, len(fig.data)))
    fig.frames = [{"name": step_label(s), "traces": moved,
                   "data": [_at_h(blocks[c], s, column, *c) for c in curves] + [_line(s, y_range)]}
                  for s in stops]
    # The slider's current value (under the ticks) names the axis: "h = 1e-03: f′ ≈ ...".
    fig.update_xaxes(title={"text": ""})
    fig.update_layout(sliders=[{
        "name": SLIDER_NAME, "active": stops.index(h), "x": 0, "len": 1, "xanchor": "left",
        "y": 0, "yanchor": "top", "pad": {"t": 30, "b": 0, "l": 0, "r": 0},
        "currentvalue": {"prefix": "h = ", "xanchor": "left", "offset": 6, "font": {"size": FONT_SIZE - 1}},
        "font": {"size": 1},  # the stops' own labels: the current value says the one that counts
        "ticklen": 4, "minorticklen": 2, **SLIDER_COLOURS,
        "steps": [{"method": "animate", "label": _readout(s, blocks, curves), "value": step_label(s),
                   "args": [[step_label(s)], _ANIMATE]} for s in stops]}])


def _readout(h: float, blocks, curves) -> str:
    """What the slider says at a stop: the step and each curve's estimate there.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"h": [1e-3], "estimate": [2.0000003]})
    >>> _readout(1e-3, {("float32", "central"): rows}, [("float32", "central")])
    '1e-03: f′ ≈ 2 (float32)'
    """
    several = len({s for _, s in curves}) > 1
    parts = []
    for dtype, scheme in curves:
        row = blocks[(dtype, scheme)]
        row = row[row["h"] == h]
        if row.empty or not np.isfinite(row["estimate"].iloc[0]):
            continue
        name = f"{dtype} {get_scheme(scheme).short_label}" if several else dtype
        parts.append(f"{row['estimate'].iloc[0]:.6g} ({name})")  # 6 digits: one line on a phone
    return f"{step_label(h)}: f′ ≈ {', '.join(parts)}" if parts else step_label(h)


def error_vs_eps_with_slider(result: SweepResult, h: float, **options) -> FigureOrSpec:
    """:func:`gradlab.figures.sweep.error_vs_eps_figure` (``options`` are its keywords) with the
    step slider at ``h``.

    >>> from gradlab.sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float64",), ("central",), 1e-4, 1e-2, points=5))
    >>> fig = error_vs_eps_with_slider(r, 2e-3, error="absolute")
    >>> len(fig.frames), fig.layout.sliders[0].active
    (7, 4)
    """
    from gradlab.figures.sweep import error_vs_eps_figure  # sweep imports nothing of this module

    with specs_only():
        fig = error_vs_eps_figure(result, **options)
    add_step_slider(fig, result, h)
    return fig.figure()
