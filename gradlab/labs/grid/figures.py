"""Figures of the Grid page: a finite difference on the dtype's grid, and its slope as h shrinks.

Pure functions (no streamlit). The main chart is drawn in grid units: x − x₀ in ulps
of x and f − f(x₀) in ulps of f(x₀), so the representable numbers sit on whole
numbers and the secant's few possible slopes are visible.

>>> from gradlab.labs.grid.representable import GridSettings, grid_difference
>>> from gradlab.labs.grid.story import window_points, secant_series
>>> r = grid_difference(GridSettings("float32", 1.0, 1e-7, "sin(x)"))
>>> [t.name for t in grid_figure(r, window_points(r)).data][:3]
["x's grid", "f's grid levels", 'f in float32']
>>> secant_series_figure(secant_series(r.settings), r).data[0].type
'scatter'
"""

from __future__ import annotations

import base64
import math

import numpy as np
import pandas as pd

from gradlab.figures.spec import FigureOrSpec, FigureSpec, specs_only
from gradlab.figures.step_slider import SLIDER_COLOURS, step_label as _step_label, with_step
from gradlab.figures.style import GUIDE, MARK, MARKER_OUTLINE, NEUTRAL, TRUTH
from gradlab.labs.grid.frames import GridFrames, asked_values, series_with
from gradlab.labs.grid.representable import GridDifference
from gradlab.labs.grid.story import distinct_digits, slope_text
from gradlab.numerics.dtypes import facts

__all__ = ["grid_figure", "grid_slider_figure", "grid_figure_with_slider", "secant_series_figure",
           "secant_at_step_figure", "MAX_TICKS", "MAIN_CHART_HEIGHT"]

#: At most this many grid numbers are drawn as ticks (and f's grid as faint lines).
MAX_TICKS = 60
_FAINT = "rgba(138, 148, 166, 0.35)"  # the guide colour, faint: f's grid levels
#: The legend below the plot, at the figure's bottom edge: the plot area makes room for it and for
#: the x axis title whatever the height (a distance below the plot would overlap the title).
_LEGEND = dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0)
#: The main chart's height (px) where no box sizes it (the Grid page's box does, CSS): all of it,
#: legend and step slider included, on a 1280x720 first screen under the controls and the answer.
MAIN_CHART_HEIGHT = 365


def _colour(dtype: str) -> str:
    return facts(dtype).colour


def grid_figure(r: GridDifference, window: pd.DataFrame | np.ndarray, asked_f: float | None = None) -> FigureOrSpec:
    """f near x on the dtype's grid: grid ticks, f in the dtype, x and x+h, the secant and the tangent.

    ``asked_f``: f in float64 at x as typed + h, when computed already (a slider's frames are
    computed in a worker, and this figure is drawn once per stop).
    """
    dtype = r.settings.dtype
    label = facts(dtype).label
    x, fx = _window_columns(window)
    dx, dy = x - r.x.value, fx - r.fx.value
    ux, x_unit = _unit(r.x.ulp, np.append(dx, r.step_taken), "ulps of x")
    uf, f_unit = _unit(r.fx.ulp, np.append(dy, r.fx_plus_h.value - r.fx.value), "ulps of f")
    t, y = dx / ux, dy / uf
    t1, y1 = r.step_taken / ux, (r.fx_plus_h.value - r.fx.value) / uf
    finite = y[np.isfinite(y)]
    low = min(float(finite.min()) if finite.size else 0.0, 0.0, y1)
    high = max(float(finite.max()) if finite.size else 1.0, 1.0, y1)
    pad = 0.08 * (high - low or 1)
    row = low - pad  # the row of grid ticks, under the data
    # x as typed + h, from the x the dtype holds (x₀): the typed x may lie up to half an ulp off x₀
    asked = ((r.settings.x - r.x.value) + r.settings.h) / ux
    # ...drawn on f's curve (f in float64 at x as typed + h), where the secant would end had the
    # dtype taken the step asked for; off the chart's rows of ticks, which it is not one of.
    if asked_f is None:
        asked_f = asked_values(r.settings, [r.settings.h])[0]
    on_curve = (asked_f - r.fx.value) / uf
    # Explicit ranges (not autorange): a slider's frame sets them, so every frame must have its own.
    xs = [v for v in (*t, t1, asked) if math.isfinite(v)] or [-1.0, 1.0]
    x_pad = 0.06 * ((max(xs) - min(xs)) or 1)
    x_range = [min(xs) - x_pad, max(xs) + x_pad]
    fig = FigureSpec()
    few = len(t) <= MAX_TICKS
    # Too many ticks to draw: one gap (None) in their place, not no point, so the trace keeps its
    # legend entry (Plotly leaves an empty trace out of the legend, and a slider's chart keeps
    # the legend it opened with at every stop).
    fig.add_trace({"type": "scatter", "x": t if few else [None], "y": np.full(len(t), row) if few else [None],
                   "mode": "markers", "name": "x's grid",
                   "marker": {"symbol": "line-ns-open", "size": 14, "color": GUIDE, "line": {"width": 2}},
                   "hovertemplate": "grid number<extra></extra>"})
    # f's grid levels as one trace of segments (not a shape each: a slider's frames carry them all)
    levels = _levels(low, high) if few else range(0)
    fig.add_trace({"type": "scatter", "mode": "lines", "name": "f's grid levels", "showlegend": False,
                   "hoverinfo": "skip", "line": {"color": _FAINT, "width": 1},
                   "x": [v for _ in levels for v in (*x_range, None)],
                   "y": [v for level in levels for v in (level, level, None)]})
    fig.add_trace({"type": "scatter", "x": t, "y": y, "mode": "markers", "name": f"f in {label}",
                   "marker": {"color": _colour(dtype), "size": 7, "line": {"color": MARKER_OUTLINE, "width": 1}},
                   "hovertemplate": "x − x₀ = %{x:.4g} ulp<br>f − f(x₀) = %{y:.4g} ulp<extra></extra>"})
    ends = np.array([t.min(), t.max()]) if len(t) else np.array([-1.0, 1.0])
    # The secant and the tangent are always traces (a gap when there is none), so every frame of
    # the step slider has the same traces in the same order, and each keeps its legend entry.
    no_line = {"x": [None], "y": [None]}
    lines = [{"type": "scatter", "mode": "lines", "line": {"color": MARK, "width": 3},
              **({"x": ends, "y": y1 / t1 * ends, "name": f"secant, slope {r.secant:.4g}"} if r.step_taken
                 else {**no_line, "name": "secant: no step", "showlegend": False})},
             {"type": "scatter", "mode": "lines", "line": {"color": TRUTH, "width": 2.5, "dash": "dash"},
              **({"x": ends, "y": r.tangent * ux / uf * ends, "name": "tangent"}
                 if math.isfinite(r.tangent) else {**no_line, "name": "tangent", "showlegend": False})}]
    fig.add_traces(lines)
    fig.add_trace({"type": "scatter", "x": [asked], "y": [on_curve if math.isfinite(on_curve) else row],
                   "mode": "markers",
                   "name": "x + h asked", "marker": {"symbol": "x-thin-open", "size": 16,
                                                        "color": NEUTRAL, "line": {"width": 3}}})
    fig.add_trace({"type": "scatter", "x": [0.0, t1], "y": [0.0, y1], "mode": "markers+text",
                   "name": "x, x+h rounded", "text": ["x", "x+h" if r.step_taken else "x+h = x"],
                   "textposition": "top left", "textfont": {"size": 16},
                   "marker": {"color": MARK, "size": 13, "line": {"color": MARKER_OUTLINE, "width": 2}}})
    fig.update_layout(margin=dict(l=0, r=0, t=10, b=10), legend=_LEGEND, height=MAIN_CHART_HEIGHT,
                      hovermode="closest")
    # the secant and the tangent are drawn across the window: their ends are in the range too
    drawn_y = [float(v) for v in (*(v for line in lines for v in line["y"] if v is not None), on_curve)
               if math.isfinite(v)]
    y_low, y_top = min([row, *drawn_y]), max([high, *drawn_y])
    fig.update_xaxes(title=dict(text=f"x − x₀, in {x_unit} ({ux:.3g})"), zeroline=False, automargin=True,
                     range=x_range)
    fig.update_yaxes(title=dict(text=f"f − f(x₀), {f_unit} ({uf:.3g})", standoff=10), zeroline=False,
                     range=[y_low - pad, y_top + pad])
    return fig.figure()


def _window_columns(window: pd.DataFrame | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A window's x and f(x) as float arrays: from a slider's frame (rows of x, f(x):
    :func:`~gradlab.labs.grid.story.window_array`) or a table (columns x, fx), read from the whole
    table's array: a column read from a table fresh from a worker builds pandas' caches first.

    >>> _window_columns(pd.DataFrame({"fx": [2.0, 3.0], "x": [0.5, 1.0]}))
    (array([0.5, 1. ]), array([2., 3.]))
    >>> _window_columns(np.array([[0.5, 2.0], [1.0, 3.0]]))
    (array([0.5, 1. ]), array([2., 3.]))
    """
    if isinstance(window, np.ndarray):
        return window[:, 0], window[:, 1]
    names = window.columns.tolist()
    values = window.to_numpy(dtype=float)
    return values[:, names.index("x")], values[:, names.index("fx")]


def _levels(low: float, high: float) -> range:
    """f's grid levels to draw as faint lines: every whole number from ``low`` to ``high``, or none
    when there are more than :data:`MAX_TICKS` of them. Counted before any is drawn: the span is up
    to ``_MAX_UNITS`` ulps (sin near π: f(x₀) is tiny, so its ulp is, and f nearby is 10⁸ of them away).

    >>> list(_levels(-1.5, 2.0)), len(_levels(-4e11, 8e11))
    ([-2, -1, 0, 1, 2], 0)
    """
    first, last = math.floor(low), math.ceil(high)
    return range(first, last + 1) if last - first <= MAX_TICKS else range(0)


#: More grid units than this in the window and the chart counts in a coarser unit.
_MAX_UNITS = 1e12


def _unit(ulp: float, offsets: np.ndarray, name: str) -> tuple[float, str]:
    """The chart's unit along one axis and its name: the ulp, unless the window spans more than
    ``_MAX_UNITS`` of them (at 0 an ulp is subnormal: 2^-1074 in float64, and x + h lies ~1e319
    of them away, past float64's range), then a power of two a thousandth of the window.

    >>> _unit(2.0 ** -23, np.array([0.0, 4 * 2.0 ** -23]), "ulps of x")
    (1.1920928955078125e-07, 'ulps of x')
    >>> _unit(2.0 ** -1074, np.array([0.0, 1e-4]), "ulps of x")
    (5.960464477539063e-08, 'units')
    """
    finite = np.abs(offsets[np.isfinite(offsets)])
    extent = float(finite.max()) if finite.size else 0.0
    if ulp > 0 and extent / _MAX_UNITS <= ulp:
        return ulp, name
    return 2.0 ** math.floor(math.log2(extent / 1000)), "units"


def secant_series_figure(series: pd.DataFrame, r: GridDifference) -> FigureOrSpec:
    """The secant's slope against h (log axis): it jumps between few values once h nears ulp(x)."""
    dtype = r.settings.dtype
    fig = FigureSpec()
    fig.add_trace({"type": "scatter", "x": series["h"], "y": series["secant"], "mode": "markers",
                   "name": f"secant in {facts(dtype).label}",
                   "marker": {"color": _colour(dtype), "size": 6},
                   "hovertemplate": "h = %{x:.3g}<br>slope = %{y:.6g}<extra></extra>"})
    if math.isfinite(r.tangent):
        fig.add_hline(r.tangent, color=TRUTH, dash="dash", width=2)
        fig.add_trace({"type": "scatter", "x": [None], "y": [None], "mode": "lines", "name": "tangent",
                       "line": {"color": TRUTH, "dash": "dash"}})
    fig.add_vline(r.x.ulp, log_axis=True, text="ulp(x)", position="top right", color=GUIDE,
                  dash="dot", width=2)
    fig.add_trace({"type": "scatter", "x": [r.settings.h], "y": [r.secant], "mode": "markers",
                   "name": "your h", "marker": {"color": MARK, "size": 12, "symbol": "diamond",
                                                "line": {"color": MARKER_OUTLINE, "width": 1}}})
    fig.update_layout(margin=dict(l=10, r=10, t=10, b=10), legend=_LEGEND, height=320, hovermode="closest")
    fig.update_xaxes(type="log", title=dict(text="h"), exponentformat="power", automargin=True)
    fig.update_yaxes(title=dict(text="slope of the secant"))
    return fig.figure()


def secant_at_step_figure(series: pd.DataFrame, r: GridDifference) -> FigureOrSpec:
    """:func:`secant_series_figure` of a view's series (:func:`~gradlab.labs.grid.story.secant_series`)
    with ``r``'s step among its points (:func:`~gradlab.labs.grid.frames.series_with`): the page's chart."""
    return secant_series_figure(series_with(series, r), r)


#: What a frame carries of each trace: its points and its words. Names, styles and the legend are
#: the figure's, the same at every stop, so a stop moves the traces without drawing the chart again.
_FRAME_KEYS = ("x", "y", "text")


def _animate(redraw: bool) -> dict:
    """A stop's animation: at once. Without ``redraw`` Plotly moves the traces in place and sets the
    axes' ranges (its transition of the axes), which the frames change: a stop is drawn within an
    animation frame. A full redraw (the legend, the titles, every trace) takes 76 ms a stop."""
    return {"mode": "immediate", "frame": {"duration": 0, "redraw": redraw}, "transition": {"duration": 0}}


#: The y axis's title, px, in a slider's chart (its margin is fixed); its tick labels are written
#: inside the plot above their grid lines: at the body text's 17 px (gradlab.figures.layout.readable)
#: "−1000" outside takes the 20 px that keep a 390 px phone's plot 300 px wide.
_Y_ROOM = 34


def grid_slider_figure(frames: GridFrames) -> FigureOrSpec:
    """:func:`grid_figure` with a slider over every step of ``frames``, shown at the first:
    dragging it switches frames in the browser (the point x + h, the secant, f around them, the
    axes' ranges), no server call; the slider says the step, the step taken and the slope. Built
    once per view (nothing in it depends on the step shown): a page shows it at its step with
    :func:`gradlab.figures.step_slider.with_step`.

    The legend is the same at every stop (the secant's slope is the slider's to say), and so are
    the axes' titles unless the chart's unit changes between stops (x at 0 or subnormal, where an
    ulp is too small a unit for the larger steps): only then does a stop redraw the chart.
    """
    with specs_only():
        drawn = [grid_figure(r, w, f) for r, w, f in zip(frames.differences, frames.windows, frames.asked_f)]
    fig = drawn[0]
    titles = {(f.layout["xaxis"]["title"]["text"], f.layout["yaxis"]["title"]["text"]) for f in drawn}
    redraw = len(titles) > 1
    axis_keys = ("range", "title") if redraw else ("range",)
    for trace in fig.data:  # the first stop's names, the secant's without its slope (or its absence)
        if trace["name"].startswith("secant"):
            trace.update(name="secant", showlegend=True)
    packed = iter(_packed([{k: t[k] for k in _FRAME_KEYS if k in t} for f in drawn for t in f.data]))
    fig.frames = [{"name": _step_label(s), "data": [next(packed) for _ in f.data],
                   "layout": {a: {k: f.layout[a][k] for k in axis_keys} for a in ("xaxis", "yaxis")}}
                  for s, f in zip(frames.steps, drawn)]
    # The y axis's room is fixed (no automargin): its tick labels change width from stop to stop
    # ("−4" to "−1.5M"), and a new margin would have Plotly draw the whole chart again mid-drag.
    fig.update_yaxes(automargin=False, ticklabelposition="inside top", title_standoff=6)
    fig.update_layout(margin=dict(l=_Y_ROOM, r=0, t=10, b=10), sliders=[{
        "name": "step h", "active": 0, "x": 0, "len": 1, "xanchor": "left",
        "y": 1, "yanchor": "bottom", "pad": {"t": 0, "b": 6, "l": 0, "r": 0},
        "currentvalue": {"prefix": "h = ", "xanchor": "left", "offset": 4, "font": {"size": 15}},
        "font": {"size": 1},  # the stops' own labels: the current value says the one that counts
        "ticklen": 0, "minorticklen": 0, **SLIDER_COLOURS,
        "steps": [{"method": "animate", "label": _readout(r), "value": _step_label(s),
                   "args": [[_step_label(s)], _animate(redraw)]}
                  for s, r in zip(frames.steps, frames.differences)]}])
    return fig.figure()


def grid_figure_with_slider(frames: GridFrames, h: float) -> FigureOrSpec:
    """:func:`grid_slider_figure` shown at step ``h`` (one of ``frames.steps``).

    >>> from gradlab.labs.grid.frames import grid_frames
    >>> from gradlab.labs.grid.representable import GridSettings
    >>> fig = grid_figure_with_slider(grid_frames(GridSettings("float32", 1.0, 1e-4, "sin(x)")), 1e-4)
    >>> len(fig.frames), fig.layout.sliders[0].steps[fig.layout.sliders[0].active].value
    (61, '1e-04')
    >>> fig.frames[0].layout.xaxis.title.text is None  # one title for every stop: no redraw
    True
    """
    with specs_only():
        fig = grid_slider_figure(frames)
    shown = with_step({"data": fig.data, "layout": fig.layout, "frames": fig.frames}, h)
    fig.data, fig.layout = shown["data"], shown["layout"]
    return fig.figure()


_F4_LARGEST = 1e38  # float32's largest is 3.4e38: a frame with a value past this keeps float64


def _packed(traces: list[dict]) -> list[dict]:
    """``traces`` with their x and y as Plotly's base64 typed arrays, float32 (a gap, None, as NaN,
    which Plotly also draws as a gap): what the figure's dict gets anyway, made here for every
    array of every frame in a few numpy calls instead of Plotly's walk over every element (two
    thirds of the slider figure's build time). float32, not float64: the frames are most of what
    the page sends on every rerun, and a position in grid units needs no more than float32's 7
    digits on a chart (the hover shows 4), unless a value of the array is past float32's range.

    >>> [t["x"] for t in _packed([{"x": [1.0, None], "y": [], "name": "a"}, {"x": [1e39], "y": [2.0]}])]
    [{'dtype': 'f4', 'bdata': 'AACAPwAAwH8='}, {'dtype': 'f8', 'bdata': 'HUqc9IeCB0g='}]
    """
    arrays = [np.array(t.get(key, ()), dtype=np.float64) for t in traces for key in ("x", "y")]  # None -> NaN
    if not arrays:
        return []
    values = np.concatenate(arrays)
    ends = np.cumsum([len(a) for a in arrays])
    size = np.abs(values)
    past = np.concatenate([[0], np.cumsum((size >= _F4_LARGEST) & (size < np.inf))])  # NaN compares False
    with np.errstate(over="ignore"):  # an array with a value past float32's range is sent wide
        narrow = values.astype(np.float32)
    out, start = [], 0
    for k, end in enumerate(ends.tolist()):
        wide = past[end] != past[start]
        data = (values if wide else narrow)[start:end]
        if k % 2 == 0:
            out.append(dict(traces[k // 2]))
        out[-1]["xy"[k % 2]] = {"dtype": "f8" if wide else "f4", "bdata": base64.b64encode(data.tobytes()).decode("ascii")}
        start = end
    return out


def _readout(r: GridDifference) -> str:
    """The slider's words at one stop: the step asked, the step taken, the slope.

    >>> from gradlab.labs.grid.representable import GridSettings, grid_difference
    >>> _readout(grid_difference(GridSettings("float32", 1.0, 1e-8, "x")))
    '1e-08: x + h rounds to x, no step'
    >>> _readout(grid_difference(GridSettings("float32", 1.0, 1e-7, "x")))  # short enough for a phone
    '1e-07: step taken 1.19e-07, slope 1'
    """
    if not r.step_taken:
        return f"{_step_label(r.settings.h)}: x + h rounds to x, no step"
    # both as the answer prints them: the step taken in as many digits as tell it from h
    # (0.00010002, not 0.0001), the slope in 4 (its 6 made h = 5e-3's words 309 px on a phone's 303 px slider)
    return (f"{_step_label(r.settings.h)}: step taken {distinct_digits(r.step_taken, r.settings.h)}, "
            f"slope {slope_text(r.secant)}")
