"""Pure functions from a sweep's tidy tables to Plotly figures (tables: :mod:`.tables`).

No streamlit here: the pages call these and hand the figure to
``gradlab.ui.figures.show_figure``. One colour per dtype and one dash and marker
per scheme, read from their rows (:mod:`gradlab.figures.style`); log axes with
power-of-ten labels; errors that a log axis cannot show (exactly 0, inf, NaN)
drawn as gaps.

Plotly quirk worth knowing: on a log axis, *shapes* take data coordinates but
*annotations* take log10 coordinates, so annotations here are placed with
:func:`_log10` (``add_vline(annotation_text=...)`` would put them at 10**x).

>>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
>>> result = run_sweep(SweepSettings("exp(x)", 1.0, ("float32",), ("central",), points=9))
>>> fig = error_vs_eps_figure(result)
>>> fig.layout.xaxis.type, fig.layout.xaxis.exponentformat
('log', 'power')
>>> [t.name for t in fig.data if t.meta and t.meta.get("kind") == "sweep"]
['float32 · central']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from gradlab.labs.explorer import chart_marks as marks
from gradlab.labs.explorer.chart_marks import dtype_colour as _colour
from gradlab.figures.spec import FigureOrSpec, FigureSpec
from gradlab.figures.style import (
    LINE_WIDTH as _LINE_WIDTH,
    MARKER_OUTLINE,
    MARKER_SIZE as _MARKER_SIZE,
    scheme_dash,
    scheme_symbol,
)
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import get_scheme
from gradlab.step_sweep.regimes import regime_steps

if TYPE_CHECKING:  # a protocol, not the engine's class: the engine's result draws these (gradlab.step_sweep.swept)
    from gradlab.step_sweep.swept import Swept

__all__ = [
    "ErrorKind",
    "error_vs_eps_figure",
    "estimate_vs_eps_figure",
    "drawable_errors",
    "has_drawable_errors",
    "theory_dtypes",
    "THEORY_LINE_WIDTH",
]

ErrorKind = Literal["relative", "absolute"]

_THEORY_OPACITY = 0.75
THEORY_LINE_WIDTH = 2.5  # px: visible on a projector and on the dark theme

_ERROR_COLUMN = {"relative": "rel_error", "absolute": "abs_error"}


# ------------------------------------------------------------------- helpers


def _dtype_label(dtype: str) -> str:
    """The dtype's row label: an emulated 8-bit float says so in the legend."""
    return facts(dtype).label


def _scheme_label(scheme: str) -> str:
    return get_scheme(scheme).curve_label


def drawable_errors(values: Sequence[float] | np.ndarray) -> list[float | None]:
    """Errors for a log axis: exactly 0, negative, inf and NaN become None (a gap).

    >>> drawable_errors([1e-3, 0.0, float("inf"), float("nan")])
    [0.001, None, None, None]
    """
    return [float(v) if np.isfinite(v) and v > 0 else None for v in np.asarray(values, dtype=float)]


def _reference_scale(result: Swept, dtype: str) -> float:
    """|f'(x)| at the dtype-rounded point, to turn absolute theory errors into relative ones."""
    ref = result.references.get(dtype)
    if ref is None or not ref.defined or ref.d1 is None or ref.d1 == 0:
        return math.nan
    return abs(float(ref.d1))


_BLOCK_COLUMNS = ("eps", "step", "estimate", "abs_error", "rel_error", "truncation", "roundoff")


def _blocks(result: Swept) -> list[tuple[str, str, dict[str, np.ndarray]]]:
    """(dtype, scheme, columns) per swept curve, in the table's order.

    The engine writes each curve as one contiguous run of rows; numpy slices of
    those runs are much cheaper than a pandas groupby on every rerun.
    """
    table = result.table
    if table.empty:
        return []
    dtypes, schemes = (np.asarray(table[name], dtype=object) for name in ("dtype", "scheme"))
    columns = {c: table[c].to_numpy(dtype=float) for c in _BLOCK_COLUMNS}
    changed = (dtypes[1:] != dtypes[:-1]) | (schemes[1:] != schemes[:-1])
    starts = [0, *(np.flatnonzero(changed) + 1).tolist()]
    ends = [*starts[1:], len(dtypes)]
    return [(str(dtypes[a]), str(schemes[a]), {c: v[a:b] for c, v in columns.items()})
            for a, b in zip(starts, ends, strict=True)]


def has_drawable_errors(result: Swept, error: ErrorKind = "relative") -> bool:
    """True when at least one error in the sweep can be drawn on a log axis."""
    values = result.table[_ERROR_COLUMN[error]].to_numpy(dtype=float)
    return bool(np.any(np.isfinite(values) & (values > 0)))


def _scatter(**trace) -> dict:
    return {"type": "scatter", **trace}


# ------------------------------------------------------------------ traces


_HOVER = (
    "<b>%{fullData.name}</b><br>"
    "eps (nominal h) = %{x:.3e}<br>"
    "step taken = %{customdata[0]:.6e}<br>"
    "estimate = %{customdata[1]:.12g}<br>"
    "error = %{y:.3e}<extra></extra>"
)


def _sweep_trace(dtype: str, scheme: str, rows: dict[str, np.ndarray], error: ErrorKind) -> dict:
    y = drawable_errors(rows[_ERROR_COLUMN[error]])
    customdata = np.column_stack([rows["step"], rows["estimate"]])
    return _scatter(
        x=rows["eps"], y=y, customdata=customdata, hovertemplate=_HOVER,
        name=f"{_dtype_label(dtype)} · {_scheme_label(scheme)}", mode="lines+markers", connectgaps=False,
        line={"color": _colour(dtype), "dash": scheme_dash(scheme),
              "width": _LINE_WIDTH},
        marker={"symbol": scheme_symbol(scheme), "size": _MARKER_SIZE},
        legendgroup=dtype,
        meta={"kind": "sweep", "dtype": dtype, "scheme": scheme},
    )


def _autograd_traces(result: Swept, error: ErrorKind, x_range: tuple[float, float]):
    table = result.autograd
    traces, exact = [], []
    # plain columns, not itertuples: a pandas row of an Arrow string column costs ~50 us to build
    for dtype, autograd, value in zip(table["dtype"].tolist(), table["value"].tolist(),
                                      table[_ERROR_COLUMN[error]].tolist(), strict=True):
        if not np.isfinite(value):
            continue
        if value == 0:
            exact.append(dtype)
            continue
        traces.append(_scatter(
            x=list(x_range), y=[value, value], mode="lines", name=f"{_dtype_label(dtype)} · autograd",
            line={"color": _colour(dtype), "dash": "dot", "width": 2},
            legendgroup=dtype,
            hovertemplate=(f"<b>{dtype} autograd</b><br>value = {autograd:.12g}<br>"
                           "error = %{y:.3e}<extra></extra>"),
            meta={"kind": "autograd", "dtype": dtype},
        ))
    return traces, exact


def _theory_traces(result: Swept, blocks, dtypes: Sequence[str], error: ErrorKind) -> list[dict]:
    """Truncation and round-off lines for each of ``dtypes``, in its colour and its curve's dash.

    Wide enough to see on a projector and in the dark theme, a little faded so the
    measured curve stays in front. A curve's two terms are one trace, a gap between them
    (``meta["terms"]`` names them in order): they share their style, and a browser sets up
    every trace of the chart again for each stop of the step slider. Hover names the
    scheme and the term.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float64",), ("central",), points=5))
    >>> (line,) = _theory_traces(r, _blocks(r), ["float64"], "relative")
    >>> line["meta"]["terms"], line["y"][5], line["text"][:1] + line["text"][6:7]
    (['truncation', 'roundoff'], None, ['truncation', 'roundoff'])
    """
    traces, shown = [], set()
    for dtype, scheme, rows in blocks:
        if dtype not in dtypes:
            continue
        scale = _reference_scale(result, dtype) if error == "relative" else 1.0
        order = get_scheme(scheme).order
        x: list[float | None] = []
        y: list[float | None] = []
        text: list[str] = []
        terms = []
        for column in ("truncation", "roundoff"):
            values = rows[column] / scale
            if not np.any(np.isfinite(values) & (values > 0)):
                continue
            if terms:  # the gap between the two terms
                x.append(None)
                y.append(None)
                text.append("")
            x += [float(v) for v in rows["eps"]]
            y += drawable_errors(values)
            text += [column] * len(values)
            terms.append(column)
        if not terms:
            continue
        traces.append(_scatter(
            x=x, y=y, text=text, mode="lines", connectgaps=False,
            name=f"{dtype} theory", showlegend=dtype not in shown,
            line={"color": _colour(dtype), "dash": scheme_dash(scheme), "width": THEORY_LINE_WIDTH},
            opacity=_THEORY_OPACITY, legendgroup=f"theory-{dtype}",
            hovertemplate=f"<b>theory, {dtype} {_scheme_label(scheme)}: %{{text}} (p = {order})"
                          "</b><br>h = %{x:.3e}<br>error = %{y:.3e}<extra></extra>",
            meta={"kind": "theory", "dtype": dtype, "scheme": scheme, "terms": terms},
        ))
        shown.add(dtype)
    return traces


def _best_step_trace(result: Swept, dtypes: Sequence[str], error: ErrorKind) -> dict | None:
    """Stars at the predicted best step h* of every real scheme, for each of ``dtypes``."""
    rows = [(str(r["dtype"]), str(r["scheme"]), r["predicted_eps"], r["predicted_rel_error"]) for r in result.best_rows
            if str(r["dtype"]) in dtypes and np.isfinite(r["predicted_eps"])]
    if not rows:
        return None
    scale = np.array([1.0 if error == "relative" else _reference_scale(result, d) for d, *_ in rows])
    y = drawable_errors(np.array([e for *_, e in rows]) * scale)
    return _scatter(
        x=np.array([h for _, _, h, _ in rows]), y=y, mode="markers",
        name="predicted best h*", text=[f"{d} {_scheme_label(s)}" for d, s, *_ in rows],
        marker={"symbol": "star", "size": 16, "color": [_colour(d) for d, *_ in rows],
                "line": {"width": 1.5, "color": MARKER_OUTLINE}},
        legendgroup="theory-best",
        hovertemplate="<b>predicted best step, %{text}</b><br>h* = %{x:.3e}<br>"
                      "error = %{y:.3e}<extra></extra>",
        meta={"kind": "best", "dtypes": list(dict.fromkeys(d for d, *_ in rows))},
    )


#: With more theory curves than this, "auto" draws the theory of the first dtype only.
AUTO_THEORY_CURVES = 4


def theory_dtypes(result: Swept, focus_dtype: str | None = None) -> list[str]:
    """Which dtypes get theory lines and stars: ``focus_dtype``; "auto": all of them if few curves.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float32", "float64"), ("central",), points=5))
    >>> theory_dtypes(r, "auto"), theory_dtypes(r, "float64"), theory_dtypes(r)
    (['float32', 'float64'], ['float64'], ['float32'])
    """
    present = [str(d) for d in dict.fromkeys(result.table["dtype"])]
    if focus_dtype in present:
        return [focus_dtype]
    if focus_dtype == "auto":
        real = {str(s) for s in result.table["scheme"] if not get_scheme(str(s)).complex_step}
        if len(present) * max(len(real), 1) <= AUTO_THEORY_CURVES:
            return present
    return present[:1]


# ------------------------------------------------------------------ figures


def error_vs_eps_figure(
    result: Swept,
    error: ErrorKind = "relative",
    show_theory: bool = True,
    show_autograd: bool = True,
    focus_dtype: str | None = None,
) -> FigureOrSpec:
    """Error of every (dtype, scheme) estimate against the step, on log-log axes.

    Theory lines and the predicted best step (stars) are drawn for ``focus_dtype``
    (default: the first dtype swept; ``"auto"``: see :func:`theory_dtypes`); each
    dtype's regimes (round-off left of its h*, truncation right) are a labelled band
    at the top; machine epsilon of each dtype is a dotted vertical line; autograd's
    error is a dotted horizontal line.
    Errors of exactly 0, inf or NaN are gaps, counted in an annotation.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("1/x", 0.3, ("float32", "float64"), ("forward",), points=9))
    >>> fig = error_vs_eps_figure(r, error="absolute", show_theory=False)
    >>> sorted({t.meta["kind"] for t in fig.data})
    ['autograd', 'sweep']
    """
    if error not in _ERROR_COLUMN:
        raise ValueError(f"error must be 'relative' or 'absolute', not {error!r}.")
    settings = result.settings
    x_range = (settings.eps_min, settings.eps_max)
    fig = FigureSpec()
    blocks = _blocks(result)
    for dtype, scheme, rows in blocks:
        fig.add_trace(_sweep_trace(dtype, scheme, rows, error))
    observed = result.table[_ERROR_COLUMN[error]].to_numpy(dtype=float)
    exact_autograd: list[str] = []
    if show_autograd:
        traces, exact_autograd = _autograd_traces(result, error, x_range)
        fig.add_traces(traces)
        observed = np.concatenate([observed, [t["y"][0] for t in traces]])
    bands = regime_steps(result)
    y_range = marks.y_range(observed, bands=len(bands))
    focus = theory_dtypes(result, focus_dtype)
    if y_range is None:
        marks.message(fig, marks.nothing_to_draw(result))
    elif focus:
        if show_theory:
            fig.add_traces(_theory_traces(result, blocks, focus, error))
            best = _best_step_trace(result, focus, error)
            if best is not None:
                fig.add_trace(best)
        marks.shading(fig, bands, x_range)
    marks.machine_eps_marks(fig, list(settings.dtypes), x_range)
    marks.layout(fig, error, x_range, y_range)
    marks.footnote(fig, marks.gap_count(fig), exact_autograd)
    return fig.figure()


def estimate_vs_eps_figure(result: Swept) -> FigureOrSpec:
    """The estimates themselves against the step (for points with no exact derivative).

    At a kink such as abs(x) at 0 there is no error to plot, but what each scheme
    returns is the lesson: one-sided differences give ±1, central 0.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("abs(x)", 0.0, ("float32",), ("forward", "central"), points=5))
    >>> sorted({round(v, 6) for v in estimate_vs_eps_figure(r).data[0].y})
    [1.0]
    """
    settings = result.settings
    x_range = (settings.eps_min, settings.eps_max)
    fig = FigureSpec()
    for dtype, scheme, rows in _blocks(result):
        values = rows["estimate"]
        fig.add_trace(_scatter(
            x=rows["eps"], y=[float(v) if np.isfinite(v) else None for v in values],
            customdata=rows["step"], name=f"{_dtype_label(dtype)} · {_scheme_label(scheme)}",
            mode="lines+markers", line={"color": _colour(dtype), "width": _LINE_WIDTH,
                                        "dash": scheme_dash(scheme)},
            marker={"symbol": scheme_symbol(scheme), "size": _MARKER_SIZE},
            legendgroup=dtype,
            hovertemplate="<b>%{fullData.name}</b><br>eps = %{x:.3e}<br>"
                          "step taken = %{customdata:.6e}<br>estimate = %{y:.12g}<extra></extra>",
            meta={"kind": "sweep", "dtype": dtype, "scheme": scheme},
        ))
    for row in result.autograd.itertuples(index=False):
        fig.add_trace(_scatter(
            x=list(x_range), y=[row.value, row.value], mode="lines",
            name=f"{_dtype_label(row.dtype)} · autograd", line={"color": _colour(row.dtype), "dash": "dot"},
            legendgroup=row.dtype, meta={"kind": "autograd", "dtype": row.dtype},
            hovertemplate=f"<b>{row.dtype} autograd</b><br>value = {row.value:.12g}<extra></extra>",
        ))
    marks.layout(fig, "estimate", x_range, None)
    fig.update_yaxes(type="linear", exponentformat="none")
    if not fig.data:
        marks.message(fig, "Nothing to draw for these settings.")
    return fig.figure()
