"""A slider over the step h on the Explorer's chart, animated in the browser.

The sweep's result carries its frames (:mod:`gradlab.step_sweep.step_frames`, when its settings
ask, as the Explorer's do): every curve's estimate at each 1-2-5 step of the chart's range.
:func:`add_step_slider` puts them into the figure as Plotly frames with a Plotly slider, so dragging h moves each curve's point,
its estimate and the vertical line at h in the browser, one frame per stop, with no call to
the server. Each frame replaces only the slider's own trace, the points and the line at h
(``redraw`` off: Plotly moves them without drawing the chart again).

>>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
>>> from gradlab.labs.explorer.figures import error_vs_eps_figure
>>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float64",), ("central",), 1e-4, 1e-2, points=5, frames=True))
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
from gradlab.figures.step_slider import SLIDER_COLOURS, step_label
from gradlab.figures.style import FONT_SIZE, GUIDE, MARKER_OUTLINE, scheme_dash
from gradlab.labs.explorer.chart_marks import dtype_colour
from gradlab.labs.explorer.chart_play import add_play
from gradlab.numerics.schemes import get_scheme
from gradlab.step_sweep.step_frames import nearest_step

if TYPE_CHECKING:  # the engine imports these figures (SweepResult.figure), never the reverse
    from gradlab.step_sweep.engine import SweepResult

__all__ = ["add_step_slider", "error_vs_eps_with_slider", "SLIDER_NAME", "READOUT_CHARS", "READOUT_PREFIX",
           "compact_legend", "estimate_vs_eps_with_legend", "legend_entries"]

SLIDER_NAME = "step h"
_ERROR_COLUMN = {"relative": "rel_error", "absolute": "abs_error"}
#: Each stop's animation: at once, points moved without redrawing the chart.
_ANIMATE = {"mode": "immediate", "frame": {"duration": 0, "redraw": False}, "transition": {"duration": 0}}


def _error_kind(fig: FigureSpec) -> str:
    title = " ".join(a.get("text", "") for a in fig.layout.get("annotations", ()) if a.get("name") == "y-title")
    return "absolute" if title.startswith("absolute") else "relative"


def _point(value: float) -> float | None:
    return float(value) if np.isfinite(value) and value > 0 else None


class _Curve:
    """One curve's frames as numpy columns, indexed by stop (a stop it lacks is NaN).

    ``columns``: the frames' numpy columns (:class:`~gradlab.step_sweep.step_frames.StepFrames`),
    shared by all curves."""

    def __init__(self, columns: dict[str, np.ndarray], dtype: str, scheme: str, stops: list[float],
                 column: str) -> None:
        rows = np.flatnonzero((columns["dtype"] == dtype) & (columns["scheme"] == scheme))
        where = {h: i for i, h in zip(rows.tolist(), columns["h"][rows].tolist(), strict=True)}
        index = np.array([where.get(s, -1) for s in stops], dtype=int)

        def take(name: str) -> np.ndarray:
            values = np.append(columns[name], math.nan)  # index -1: NaN
            return values[index]

        self.dtype, self.scheme = dtype, scheme
        self.step, self.estimate, self.error = take("step"), take("estimate"), take(column)

    def at(self, i: int) -> tuple[float | None, list[float]]:
        """The curve's error at stop ``i`` (a gap where it cannot sit on a log axis) and its hover's numbers."""
        return _point(self.error[i]), [float(self.step[i]), float(self.estimate[i]), float(self.error[i])]


_DOT_HOVER = ("<b>%{text}</b><br>h = %{x:.0e}<br>step taken = %{customdata[0]:.6e}<br>"
              "estimate = %{customdata[1]:.12g}<br>error = %{customdata[2]:.3e}<extra></extra>")


def _marks(curves: list[_Curve], i: int, h: float, y_range) -> dict:
    """Every curve's point at stop ``i`` (step ``h``) and the vertical line at h, one trace: the
    points, then the line's two ends (the line runs through the points, which all sit at h).
    A browser sets up every trace of the figure again for each frame, redraw or not, so a stop
    moves one trace, not one per curve and a line."""
    points = [c.at(i) for c in curves]
    low, high = (10 ** v for v in y_range) if y_range else (1e-17, 1.0)
    return {"type": "scatter", "x": [h] * (len(curves) + 2), "y": [y for y, _ in points] + [high, low],
            "customdata": [numbers for _, numbers in points]}


def add_step_slider(fig: FigureSpec, result: SweepResult, h: float) -> None:
    """Add the step slider to an error-vs-eps figure of ``result`` (see the module docstring):
    a point on each drawn curve at the stop nearest ``h`` and a line at h (one trace), a frame per stop."""
    if not len(result.frames) or not fig.data:
        return
    compact_legend(fig)  # first: it inserts traces, and the frames below name theirs by index
    _close_title(fig)
    column = _ERROR_COLUMN[_error_kind(fig)]
    table = result.frames.columns
    stops = sorted(set(table["h"].tolist()))
    active = stops.index(nearest_step(stops, h))
    y_range = fig.layout.get("yaxis", {}).get("range")
    curves = [_Curve(table, t["meta"]["dtype"], t["meta"]["scheme"], stops, column) for t in fig.data
              if t.get("meta", {}).get("kind") == "sweep"]
    names = [f"{c.dtype} · {get_scheme(c.scheme).curve_label}" for c in curves]
    n = len(curves)
    fig.add_trace({
        **_marks(curves, active, stops[active], y_range), "mode": "lines+markers", "cliponaxis": False,
        "connectgaps": True,  # a curve with no point at h leaves no hole in the line
        "line": {"color": GUIDE, "width": 1.5, "dash": "dot"},
        # opacity: Plotly fades markers whose sizes are an array (bubbles) to 0.7
        "marker": {"symbol": "circle", "size": [15] * n + [0, 0], "opacity": 1,
                   "color": [dtype_colour(c.dtype) for c in curves] + [GUIDE, GUIDE],
                   "line": {"color": MARKER_OUTLINE, "width": [2.5] * n + [0, 0]}},
        # the curves' names ("float32 · central") are the points' hover text, not the trace's name:
        # pages and tests count the traces named so as curves
        "name": "at h", "showlegend": False, "text": names + ["", ""],
        "hovertemplate": [_DOT_HOVER] * n + ["h = %{x:.0e}<extra></extra>"] * 2,
        "meta": {"kind": "at-h", "curves": [{"dtype": c.dtype, "scheme": c.scheme} for c in curves]}})
    moved = [len(fig.data) - 1]
    fig.frames = [{"name": step_label(s), "traces": moved, "data": [_marks(curves, i, s, y_range)]}
                  for i, s in enumerate(stops)]
    # The slider's readout names the axis ("h = 1e-03: f′ ≈ ..."): an axis title between the
    # tick labels and the slider cost the plot 18 px, which a 1280x720 first screen does not have.
    fig.update_xaxes(title={"text": ""})
    fig.update_layout(sliders=[{
        "name": SLIDER_NAME, "active": active, "x": 0, "len": 1, "xanchor": "left",
        "y": 0, "yanchor": "top", "pad": {"t": _SLIDER_TOP, "b": 0, "l": 0, "r": 0},
        "currentvalue": {"prefix": READOUT_PREFIX, "xanchor": "left", "offset": 4, "font": {"size": FONT_SIZE - 1}},
        "font": {"size": 1},  # the stops' own labels (hidden): the current value says the one that counts
        "ticklen": 0, "minorticklen": 0, **SLIDER_COLOURS,
        "steps": [{"method": "animate", "value": step_label(s), "args": [[step_label(s)], _ANIMATE],
                   "label": _readout(s, [c.estimate[i] for c in curves])}
                  for i, s in enumerate(stops)]}])
    add_play(fig, stops, step_label, lambda i: _marks(curves, i, stops[i], y_range), moved[0], _SLIDER_TOP)


#: px from the plot's bottom to the slider's readout: the x axis's tick labels (with exponents).
_SLIDER_TOP = 31  # at 28 the readout touches the 10⁻¹⁶ label at 1280 px


#: The room above the plot (px) for the y title alone, when there is no footnote under it.
_TITLE_ROOM = 34


def _close_title(fig: FigureSpec) -> None:
    """With no footnote (gaps, an exact autograd) between the y title and the plot, the title sits
    right above the plot and the plot takes the footnote's row: 18 px on a first screen that has few.

    >>> fig = FigureSpec()
    >>> fig.update_layout(margin={"t": 52}, annotations=[{"name": "y-title", "yshift": 22}])
    >>> _close_title(fig); fig.layout["margin"]["t"], fig.layout["annotations"][0]["yshift"]
    (34, 2)
    """
    annotations = fig.layout.get("annotations", ())
    if any(a.get("name") == "gaps" for a in annotations):
        return
    for a in annotations:
        if a.get("name") == "y-title":
            a["yshift"] = 2
    fig.update_layout(margin={**fig.layout.get("margin", {}), "t": _TITLE_ROOM})


#: Characters of legend text that fit one row at 1280 px in the legend's usual size.
_LONG_KEYS = 60


def legend_entries(fig: FigureSpec) -> list[str]:
    """The names a figure's legend lists, in its order: traces and shapes that show in it, by
    ``legendrank`` (Plotly's default 1000), then traces before shapes, each in its list's order.

    >>> fig = FigureSpec()
    >>> fig.add_trace({"name": "b", "legendrank": 2}); fig.add_trace({"name": "hidden", "showlegend": False})
    >>> fig.add_shape(type="line", name="a", showlegend=True, legendrank=1)
    >>> legend_entries(fig)
    ['a', 'b']
    """
    items = [(t.get("legendrank", 1000), 0, i, t.get("name")) for i, t in enumerate(fig.data)
             if t.get("showlegend") is not False]
    items += [(s.get("legendrank", 1000), 1, i, s.get("name")) for i, s in enumerate(fig.layout.get("shapes", ()))
              if s.get("showlegend")]
    return [name for *_, name in sorted(items)]


def _key_shape(name: str, group: str, rank: int, line: dict) -> dict:
    """A legend entry that is a layout shape, not a trace: a line of no length (nothing drawn)
    whose legend symbol is ``line``. A browser sets up every trace of the chart again for each
    stop of the step slider (about half a millisecond each, whatever it draws); the stops leave
    the layout's shapes alone."""
    return {"type": "line", "xref": "paper", "yref": "paper", "x0": 0, "x1": 0, "y0": 0, "y1": 0,
            "name": name, "showlegend": True, "legendgroup": group, "legendrank": rank, "line": line,
            "layer": "below"}


def compact_legend(fig: FigureSpec) -> None:
    """One legend entry per dtype (its colour; a click hides its curves) and per scheme (its line
    and marker, in grey), one for autograd's and one for the theory's lines, instead of one per
    curve: "float32 · complex step" for each pair takes five rows under the Complex-step classic's
    chart at 1280 px, leaving its plot 122 px tall. The curves keep their names (hover says them).
    The keys are layout shapes (:func:`_key_shape`), not traces; a scheme's key shows its line's
    dash (a shape's legend symbol is a line or a marker, not both; the curves carry the marker too).

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> from gradlab.labs.explorer.figures import error_vs_eps_figure
    >>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float32", "float64"), ("forward", "central"), 1e-4, 1e-2, points=5))
    >>> with specs_only():
    ...     fig = error_vs_eps_figure(r)
    >>> compact_legend(fig)
    >>> legend_entries(fig)
    ['float32', 'float64', 'forward', 'central', 'autograd']
    >>> [t["name"] for t in fig.data if t.get("showlegend") is not False]  # every key is a shape
    []
    """
    kinds = {}
    for trace in fig.data:
        meta = trace.get("meta") or {}
        kind = meta.get("kind")
        if kind in ("sweep", "autograd", "theory"):
            kinds.setdefault(kind, []).append(meta)
            trace["showlegend"] = False
            if kind == "theory":
                trace["legendgroup"] = "theory"
    if not kinds.get("sweep"):
        return
    dtypes = list(dict.fromkeys(m["dtype"] for m in kinds["sweep"]))
    schemes = list(dict.fromkeys(m["scheme"] for m in kinds["sweep"]))
    rank = iter(range(1, 100))
    shapes = [_key_shape(d, d, next(rank), {"color": dtype_colour(d), "width": 3}) for d in dtypes]
    shapes += [_key_shape(get_scheme(s).curve_label, f"key-{s}", next(rank),
                          {"color": GUIDE, "dash": scheme_dash(s), "width": 2}) for s in schemes]
    if kinds.get("autograd"):
        shapes.append(_key_shape("autograd", "key-autograd", next(rank), {"color": GUIDE, "dash": "dot", "width": 2}))
    # The theory's lines and stars have no entry: at the body text's size (gradlab.figures.layout.readable)
    # two more entries take the legend to a second row, the plot under 200 px at 1280x720; the
    # caption names them and the "theory lines" switch hides them.
    best = [i for i, t in enumerate(fig.data) if t.get("legendgroup") == "theory-best"]
    for i in best:
        fig.data[i]["name"] = "best h*"
        fig.data[i]["showlegend"] = False
    for shape in shapes:
        fig.add_shape(**shape)
    names = [shape["name"] for shape in shapes]
    legend = fig.layout.get("legend", {})
    # Smaller than the other chart text: eight keys in one row under a 1280 px page's chart, and
    # long names (the 8-bit formats') a px smaller still.
    long = sum(len(name) for name in names) > _LONG_KEYS
    font = {**legend.get("font", {}), "size": (legend.get("font", {}).get("size") or FONT_SIZE) - (2 if long else 1)}
    fig.update_layout(legend={**legend, "groupclick": "togglegroup", "font": font, "tracegroupgap": 0})


def _readout(h: float, estimates) -> str:
    """What the slider says at a stop: the step and the curves' estimates there (``estimates``:
    finite or not, one per curve). One estimate, or several that agree to 6 digits, is written
    once; several that differ as their range: a value per curve ("4.05884 (float32 Forward), ...")
    ran past the chart's right edge with six curves at 1280 px, and with two on a phone. The
    readout is one line of at most :data:`READOUT_CHARS` characters at every stop (each curve's
    estimate at h is its dot's hover).

    >>> _readout(1e-3, [2.0000003, float("nan")])
    '1e-03: f′ ≈ 2'
    >>> _readout(1e-3, [4.05884, 4.05383, 4.05342, 4.05342])
    '1e-03: f′ ≈ 4.05342 to 4.05884'
    >>> _readout(1e-3, [float("inf")])
    '1e-03'
    """
    shown = sorted({float(f"{value:.6g}") for value in estimates if np.isfinite(value)})
    if not shown:
        return step_label(h)
    spread = f"{shown[0]:.6g}" if len(shown) == 1 else f"{shown[0]:.6g} to {shown[-1]:.6g}"
    return f"{step_label(h)}: f′ ≈ {spread}"


#: The readout's prefix: "h = 1e-03: ..." ("step h = " cost a phone's chart the room of a number).
READOUT_PREFIX = "h = "
#: The longest readout, prefix included: two 6-digit estimates with signs ("h = 1e-03: f′ ≈
#: -0.000123457 to -0.000123457"), 269 px in the readout's 15 px Source Sans, inside the 318 px a
#: 390 px phone's chart has right of its plot's left edge (tests/browser measure every stop).
READOUT_CHARS = 44


def error_vs_eps_with_slider(result: SweepResult, h: float, **options) -> FigureOrSpec:
    """:func:`gradlab.labs.explorer.figures.error_vs_eps_figure` (``options`` are its keywords) with the
    step slider at ``h``.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float64",), ("central",), 1e-4, 1e-2, points=5, frames=True))
    >>> from gradlab.labs.explorer.chart_play import PLAY_PREFIX
    >>> fig = error_vs_eps_with_slider(r, 2e-3, error="absolute")
    >>> len([f for f in fig.frames if not f.name.startswith(PLAY_PREFIX)]), fig.layout.sliders[0].active
    (7, 4)
    >>> [f.name for f in fig.frames if f.name.startswith(PLAY_PREFIX)]  # the Play button's: every other stop
    ['play 1e-04', 'play 5e-04', 'play 2e-03', 'play 1e-02']
    """
    from gradlab.labs.explorer.figures import error_vs_eps_figure  # sweep imports nothing of this module

    with specs_only():
        fig = error_vs_eps_figure(result, **options)
    add_step_slider(fig, result, h)
    return fig.figure()


def estimate_vs_eps_with_legend(result: SweepResult) -> FigureOrSpec:
    """:func:`gradlab.labs.explorer.figures.estimate_vs_eps_figure` (no exact derivative: the estimates
    themselves) with the :func:`compact_legend` of the Explorer's other chart.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("abs(x)", 0.0, ("float32",), ("forward", "central"), points=5))
    >>> with specs_only():
    ...     legend_entries(estimate_vs_eps_with_legend(r))
    ['float32', 'forward', 'central', 'autograd']
    """
    from gradlab.labs.explorer.figures import estimate_vs_eps_figure

    with specs_only():
        fig = estimate_vs_eps_figure(result)
    compact_legend(fig)
    # "step h" 6 px under the tick labels touched 10⁻⁸'s exponent (as on the home page's chart)
    fig.update_xaxes(title={**fig.layout["xaxis"].get("title", {}), "standoff": 14})
    return fig.figure()
