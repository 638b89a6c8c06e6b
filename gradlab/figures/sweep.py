"""Pure functions from a sweep's tidy tables to Plotly figures and display tables.

No streamlit here: the pages call these and hand the figure to
``gradlab.ui.figures.show_figure``. One colour per dtype (:data:`DTYPE_COLOURS`),
one dash and marker per scheme (:data:`SCHEME_DASHES`, :data:`SCHEME_SYMBOLS`),
log axes with power-of-ten labels, and errors that a log axis cannot show
(exactly 0, inf, NaN) drawn as gaps.

Plotly quirk worth knowing: on a log axis, *shapes* take data coordinates but
*annotations* take log10 coordinates, so annotations here are placed with
:func:`_log10` (``add_vline(annotation_text=...)`` would put them at 10**x).

>>> from gradlab.error_sweep import SweepSettings, run_sweep
>>> result = run_sweep(SweepSettings("exp(x)", 1.0, ("float32",), ("central",), points=9))
>>> fig = error_vs_eps_figure(result)
>>> fig.layout.xaxis.type, fig.layout.xaxis.exponentformat
('log', 'power')
>>> [t.name for t in fig.data if t.meta and t.meta.get("kind") == "sweep"]
['float32 · central']
>>> list(best_step_table(result).columns)[:3]
['dtype', 'scheme', 'best h (observed)']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import mpmath
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from gradlab.figures.spec import LOG_AXIS, FigureSpec
from gradlab.numerics.dtypes import DTYPE_NAMES, facts
from gradlab.numerics.schemes import SCHEME_NAMES, get_scheme
from gradlab.error_sweep import SweepResult

__all__ = [
    "DTYPE_COLOURS",
    "SCHEME_DASHES",
    "SCHEME_SYMBOLS",
    "ErrorKind",
    "error_vs_eps_figure",
    "estimate_vs_eps_figure",
    "best_step_table",
    "autograd_table",
    "rounding_table",
    "format_sig",
    "exact_digits",
    "drawable_errors",
    "has_drawable_errors",
]

ErrorKind = Literal["relative", "absolute"]

#: One colour per dtype: saturated mid-tones that read on white, on a dark
#: background and through a projector (the app theme's categorical palette).
DTYPE_COLOURS: dict[str, str] = {
    "float16": "#e07b00",  # orange
    "bfloat16": "#8e44ad",  # purple
    "float32": "#2c6fd6",  # blue
    "float64": "#d1495b",  # red
}
#: One dash per scheme (autograd's horizontal lines are always dotted).
SCHEME_DASHES: dict[str, str] = {
    "forward": "dash",
    "backward": "dashdot",
    "central": "solid",
    "five_point": "longdash",
    "complex_step": "longdashdot",
    "richardson": "6px,3px,2px,3px",
}
#: One marker per scheme, so schemes stay apart where dashes are hard to see.
SCHEME_SYMBOLS: dict[str, str] = {
    "forward": "triangle-up",
    "backward": "triangle-down",
    "central": "circle",
    "five_point": "square",
    "complex_step": "diamond",
    "richardson": "x",
}
assert set(DTYPE_COLOURS) == set(DTYPE_NAMES) and set(SCHEME_DASHES) == set(SCHEME_NAMES)

_FALLBACK_COLOUR = "#4d4d4d"
_FONT_SIZE = 16  # readable from the back of a lecture room
_AXIS_TITLE_SIZE = 18
_LINE_WIDTH = 2.5
_MARKER_SIZE = 6
_THEORY_OPACITY = 0.45
_SHADE_OPACITY = 0.08
_ROUNDOFF_SHADE = "#d1495b"
_TRUNCATION_SHADE = "#1f5fbf"
_Y_PAD_TOP, _Y_PAD_BOTTOM = 0.5, 2.0  # decades around the data (labels sit at the bottom)
_SIG_DIGITS = 3
_EXACT_DIGITS = 20

_Y_TITLES = {
    "relative": "relative error  |estimate − f′(x)| / |f′(x)|",
    "absolute": "absolute error  |estimate − f′(x)|",
}
_ERROR_COLUMN = {"relative": "rel_error", "absolute": "abs_error"}


# ------------------------------------------------------------------- helpers


def format_sig(value: float, digits: int = _SIG_DIGITS) -> str:
    """A number to ``digits`` significant digits for a table; NaN/None become "—".

    >>> format_sig(0.000123456), format_sig(float("nan")), format_sig(0.0)
    ('1.23e-04', '—', '0')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    value = float(value)
    if value == 0:
        return "0"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits - 1}e}"


def exact_digits(value, digits: int = _EXACT_DIGITS) -> str:
    """An mpmath (or float) value to ``digits`` significant digits; None becomes "—".

    >>> exact_digits(mpmath.mpf(1) / 3, 5)
    '0.33333'
    """
    if value is None:
        return "—"
    return mpmath.nstr(mpmath.mpf(value), digits)


def _log10(value: float) -> float:
    return math.log10(value)


def _colour(dtype: str) -> str:
    return DTYPE_COLOURS.get(dtype, _FALLBACK_COLOUR)


def _scheme_label(scheme: str) -> str:
    return get_scheme(scheme).label.split(" (")[0].replace(" difference", "")


def drawable_errors(values: Sequence[float] | np.ndarray) -> list[float | None]:
    """Errors for a log axis: exactly 0, negative, inf and NaN become None (a gap).

    >>> drawable_errors([1e-3, 0.0, float("inf"), float("nan")])
    [0.001, None, None, None]
    """
    return [float(v) if np.isfinite(v) and v > 0 else None for v in np.asarray(values, dtype=float)]


def _reference_scale(result: SweepResult, dtype: str) -> float:
    """|f'(x)| at the dtype-rounded point, to turn absolute theory errors into relative ones."""
    ref = result.references.get(dtype)
    if ref is None or not ref.defined or ref.d1 is None or ref.d1 == 0:
        return math.nan
    return abs(float(ref.d1))


_BLOCK_COLUMNS = ("eps", "step", "estimate", "abs_error", "rel_error", "truncation", "roundoff")


def _blocks(result: SweepResult) -> list[tuple[str, str, dict[str, np.ndarray]]]:
    """(dtype, scheme, columns) per swept curve, in the table's order.

    The engine writes each curve as one contiguous run of rows; numpy slices of
    those runs are much cheaper than a pandas groupby on every rerun.
    """
    table = result.table
    if table.empty:
        return []
    labels = list(zip(table["dtype"].astype(str), table["scheme"].astype(str), strict=True))
    columns = {c: table[c].to_numpy(dtype=float) for c in _BLOCK_COLUMNS}
    starts = [i for i in range(len(labels)) if i == 0 or labels[i] != labels[i - 1]]
    ends = [*starts[1:], len(labels)]
    return [(*labels[a], {c: v[a:b] for c, v in columns.items()}) for a, b in zip(starts, ends, strict=True)]


def has_drawable_errors(result: SweepResult, error: ErrorKind = "relative") -> bool:
    """True when at least one error in the sweep can be drawn on a log axis."""
    values = result.table[_ERROR_COLUMN[error]].to_numpy(dtype=float)
    return bool(np.any(np.isfinite(values) & (values > 0)))


def _focus(result: SweepResult, focus_dtype: str | None) -> str | None:
    present = [str(d) for d in dict.fromkeys(result.table["dtype"])]
    if focus_dtype in present:
        return focus_dtype
    return present[0] if present else None


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
        name=f"{dtype} · {_scheme_label(scheme)}", mode="lines+markers", connectgaps=False,
        line={"color": _colour(dtype), "dash": SCHEME_DASHES.get(scheme, "solid"),
              "width": _LINE_WIDTH},
        marker={"symbol": SCHEME_SYMBOLS.get(scheme, "circle"), "size": _MARKER_SIZE},
        legendgroup=dtype, legendgrouptitle={"text": dtype},
        meta={"kind": "sweep", "dtype": dtype, "scheme": scheme},
    )


def _autograd_traces(result: SweepResult, error: ErrorKind, x_range: tuple[float, float]):
    column = _ERROR_COLUMN[error]
    traces, exact = [], []
    for row in result.autograd.itertuples(index=False):
        value = getattr(row, column)
        if not np.isfinite(value):
            continue
        if value == 0:
            exact.append(row.dtype)
            continue
        traces.append(_scatter(
            x=list(x_range), y=[value, value], mode="lines", name=f"{row.dtype} · autograd",
            line={"color": _colour(row.dtype), "dash": "dot", "width": 2},
            legendgroup=row.dtype, legendgrouptitle={"text": row.dtype},
            hovertemplate=(f"<b>{row.dtype} autograd</b><br>value = {row.value:.12g}<br>"
                           "error = %{y:.3e}<extra></extra>"),
            meta={"kind": "autograd", "dtype": row.dtype},
        ))
    return traces, exact


def _theory_traces(result: SweepResult, blocks, focus: str, error: ErrorKind) -> list[dict]:
    """Thin, faded truncation and round-off lines for the focus dtype.

    One legend entry per term (clicking it hides that term for every scheme);
    hover names the scheme.
    """
    scale = _reference_scale(result, focus) if error == "relative" else 1.0
    traces, shown = [], set()
    for dtype, scheme, rows in blocks:
        if dtype != focus:
            continue
        order = get_scheme(scheme).order
        for column, label in (("truncation", "truncation ∝ hᵖ"), ("roundoff", "round-off ∝ 1/h")):
            values = rows[column] / scale
            if not np.any(np.isfinite(values) & (values > 0)):
                continue
            traces.append(_scatter(
                x=rows["eps"], y=drawable_errors(values), mode="lines",
                name=f"theory: {label}", showlegend=column not in shown,
                line={"color": _colour(dtype), "dash": SCHEME_DASHES.get(scheme, "solid"),
                      "width": 1},
                opacity=_THEORY_OPACITY, legendgroup=f"theory-{column}",
                legendgrouptitle={"text": f"theory ({focus})"} if not shown else None,
                hovertemplate=f"<b>theory, {_scheme_label(scheme)}: {column} (p = {order})"
                              "</b><br>h = %{x:.3e}<br>error = %{y:.3e}<extra></extra>",
                meta={"kind": "theory", "dtype": dtype, "scheme": scheme, "term": column},
            ))
            shown.add(column)
    for trace in traces:  # plotly rejects a None group title
        if trace["legendgrouptitle"] is None:
            del trace["legendgrouptitle"]
    return traces


def _best_step_trace(result: SweepResult, focus: str, error: ErrorKind) -> dict | None:
    rows = result.best[(result.best["dtype"] == focus)
                       & np.isfinite(result.best["predicted_eps"].astype(float))]
    if rows.empty:
        return None
    scale = 1.0 if error == "relative" else _reference_scale(result, focus)
    y = drawable_errors(rows["predicted_rel_error"].to_numpy(dtype=float) * scale)
    labels = [_scheme_label(s) for s in rows["scheme"]]
    return _scatter(
        x=rows["predicted_eps"].to_numpy(), y=y, mode="markers",
        name=f"predicted best h* ({focus})", text=labels,
        marker={"symbol": "star", "size": 16, "color": _colour(focus),
                "line": {"width": 1.5, "color": "#ffffff"}},
        legendgroup="theory-best",
        hovertemplate="<b>predicted best step, %{text}</b><br>h* = %{x:.3e}<br>"
                      "error = %{y:.3e}<extra></extra>",
        meta={"kind": "best", "dtype": focus},
    )


# ------------------------------------------------------- shapes and labels


def _regime_scheme(result: SweepResult, focus: str, x_range) -> tuple[str, float] | None:
    """The (scheme, h*) whose regimes are shaded: central if swept, else the first real difference."""
    lo, hi = x_range
    rows = result.best[result.best["dtype"] == focus]
    candidates = [
        (str(scheme), float(h)) for scheme, h in zip(rows["scheme"], rows["predicted_eps"], strict=True)
        if not get_scheme(scheme).complex_step and np.isfinite(h) and lo < h < hi
    ]
    candidates.sort(key=lambda c: c[0] != "central")
    return candidates[0] if candidates else None


def _shading(fig: FigureSpec, result: SweepResult, focus: str, x_range) -> None:
    """Shade round-off (h < h*) and truncation (h > h*) regimes, labelled above the plot."""
    chosen = _regime_scheme(result, focus, x_range)
    if chosen is None:
        return
    scheme, h_star = chosen
    lo, hi = x_range
    for x0, x1, colour, text, anchor in (
        (lo, h_star, _ROUNDOFF_SHADE, "← round-off dominates", "right"),
        (h_star, hi, _TRUNCATION_SHADE, "truncation dominates →", "left"),
    ):
        fig.add_shape(type="rect", x0=x0, x1=x1, y0=0, y1=1, xref="x", yref="y domain",
                      fillcolor=colour, opacity=_SHADE_OPACITY, line_width=0, layer="below",
                      name="regime")
        fig.add_annotation(x=_log10(h_star), y=1, xref="x", yref="y domain", xanchor=anchor,
                           yanchor="bottom", showarrow=False, text=text,
                           xshift=-6 if anchor == "right" else 6,
                           font={"size": _FONT_SIZE - 1}, name="regime")
    fig.add_annotation(x=_log10(h_star), y=1, xref="x", yref="y domain", yanchor="bottom",
                       yshift=22, showarrow=False, name="regime",
                       text=f"h* for {focus}, {_scheme_label(scheme)}",
                       font={"size": _FONT_SIZE - 2, "color": _colour(focus)})
    fig.add_shape(type="line", x0=h_star, x1=h_star, y0=0, y1=1, xref="x", yref="y domain",
                  line={"color": _colour(focus), "width": 1.5, "dash": "dash"}, name="h*")


def _machine_eps_marks(fig: FigureSpec, dtypes: Sequence[str], x_range) -> None:
    lo, hi = x_range
    for i, dtype in enumerate(dtypes):
        eps = facts(dtype).eps
        if not lo <= eps <= hi:
            continue
        fig.add_shape(type="line", x0=eps, x1=eps, y0=0, y1=1, xref="x", yref="y domain",
                      line={"color": _colour(dtype), "width": 1, "dash": "dot"},
                      name="machine-eps")
        fig.add_annotation(x=_log10(eps), y=0, xref="x", yref="y domain", yanchor="bottom",
                           yshift=4 + 22 * i, text=f"ε {dtype}", showarrow=False,
                           font={"color": _colour(dtype), "size": _FONT_SIZE - 2},
                           bgcolor="rgba(128,128,128,0.12)", name="machine-eps")


def _y_range(values: np.ndarray) -> list[float] | None:
    finite = values[np.isfinite(values) & (values > 0)]
    if finite.size == 0:
        return None
    return [math.log10(finite.min()) - _Y_PAD_BOTTOM, math.log10(finite.max()) + _Y_PAD_TOP]


_MIN_HEIGHT = 560
_LEGEND_ITEM_PX, _LEGEND_GROUP_PX = 22, 40  # one entry; one group title plus its gap
_MARGINS_PX = 200  # top + bottom margins and a little air


def _height(fig: FigureSpec) -> int:
    """Tall enough that the legend never needs a scrollbar (four dtypes and theory lines)."""
    shown = [t for t in fig.data if t.get("showlegend", True)]
    groups = {t.get("legendgroup") for t in shown}
    legend = _LEGEND_ITEM_PX * len(shown) + _LEGEND_GROUP_PX * len(groups)
    return max(_MIN_HEIGHT, legend + _MARGINS_PX)


def _layout(fig: FigureSpec, error: ErrorKind, x_range, y_range) -> None:
    axis = {**LOG_AXIS, "tickfont": {"size": _FONT_SIZE}, "showgrid": True}
    fig.update_xaxes(title={"text": "step h (eps)", "font": {"size": _AXIS_TITLE_SIZE}},
                     range=[_log10(x_range[0]), _log10(x_range[1])], dtick=2, **axis)
    fig.update_yaxes(title={"text": _Y_TITLES[error], "font": {"size": _AXIS_TITLE_SIZE}},
                     range=y_range, **axis)
    fig.update_layout(
        font={"size": _FONT_SIZE}, height=_height(fig), hovermode="closest",
        margin={"l": 80, "r": 20, "t": 70, "b": 110},
        legend={"groupclick": "toggleitem", "font": {"size": _FONT_SIZE - 2},
                "tracegroupgap": 12, "itemwidth": 40},
    )


def _message(fig: FigureSpec, text: str) -> None:
    fig.add_annotation(x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, text=text,
                       font={"size": _FONT_SIZE + 2}, name="message")


def _gap_count(fig: FigureSpec) -> int:
    return sum(sum(v is None for v in t["y"]) for t in fig.data
               if t.get("meta", {}).get("kind") == "sweep")


# ------------------------------------------------------------------ figures


def error_vs_eps_figure(
    result: SweepResult,
    error: ErrorKind = "relative",
    show_theory: bool = True,
    show_autograd: bool = True,
    focus_dtype: str | None = None,
) -> go.Figure:
    """Error of every (dtype, scheme) estimate against the step, on log-log axes.

    Theory lines, the predicted best step (stars) and the shaded regimes are drawn
    for ``focus_dtype`` (default: the first dtype swept); machine epsilon of each
    dtype is a dotted vertical line; autograd's error is a dotted horizontal line.
    Errors of exactly 0, inf or NaN are gaps, counted in an annotation.

    >>> from gradlab.error_sweep import SweepSettings, run_sweep
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
    y_range = _y_range(observed)
    focus = _focus(result, focus_dtype)
    if y_range is None:
        _message(fig, _nothing_to_draw(result))
    elif focus is not None:
        if show_theory:
            fig.add_traces(_theory_traces(result, blocks, focus, error))
            best = _best_step_trace(result, focus, error)
            if best is not None:
                fig.add_trace(best)
        _shading(fig, result, focus, x_range)
    _machine_eps_marks(fig, list(settings.dtypes), x_range)
    _layout(fig, error, x_range, y_range)
    _footnote(fig, _gap_count(fig), exact_autograd)
    return fig.figure()


def _nothing_to_draw(result: SweepResult) -> str:
    if not result.reference.defined:
        return f"No errors to draw: {result.reference.reason}"
    return "No errors to draw: every estimate is exact (error 0), inf or NaN."


def _footnote(fig: FigureSpec, gaps: int, exact_autograd: list[str]) -> None:
    parts = []
    if gaps:
        parts.append(f"{gaps} points are gaps (error exactly 0, inf or NaN: a log axis cannot show them)")
    if exact_autograd:
        parts.append(f"autograd is exact (error 0) in {', '.join(exact_autograd)}")
    if parts:
        fig.add_annotation(x=0, y=0, yshift=-78, xref="paper", yref="paper", xanchor="left",
                           yanchor="top", showarrow=False, text="; ".join(parts) + ".",
                           font={"size": _FONT_SIZE - 3}, name="gaps")


def estimate_vs_eps_figure(result: SweepResult) -> go.Figure:
    """The estimates themselves against the step (for points with no exact derivative).

    At a kink such as abs(x) at 0 there is no error to plot, but what each scheme
    returns is the lesson: one-sided differences give ±1, central 0.

    >>> from gradlab.error_sweep import SweepSettings, run_sweep
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
            customdata=rows["step"], name=f"{dtype} · {_scheme_label(scheme)}",
            mode="lines+markers", line={"color": _colour(dtype), "width": _LINE_WIDTH,
                                        "dash": SCHEME_DASHES.get(scheme, "solid")},
            marker={"symbol": SCHEME_SYMBOLS.get(scheme, "circle"), "size": _MARKER_SIZE},
            legendgroup=dtype, legendgrouptitle={"text": dtype},
            hovertemplate="<b>%{fullData.name}</b><br>eps = %{x:.3e}<br>"
                          "step taken = %{customdata:.6e}<br>estimate = %{y:.12g}<extra></extra>",
            meta={"kind": "sweep", "dtype": dtype, "scheme": scheme},
        ))
    for row in result.autograd.itertuples(index=False):
        fig.add_trace(_scatter(
            x=list(x_range), y=[row.value, row.value], mode="lines",
            name=f"{row.dtype} · autograd", line={"color": _colour(row.dtype), "dash": "dot"},
            legendgroup=row.dtype, meta={"kind": "autograd", "dtype": row.dtype},
            hovertemplate=f"<b>{row.dtype} autograd</b><br>value = {row.value:.12g}<extra></extra>",
        ))
    _layout(fig, "absolute", x_range, None)
    fig.update_yaxes(type="linear", title={"text": "estimate of f′(x)"}, exponentformat="none")
    if not fig.data:
        _message(fig, "Nothing to draw for these settings.")
    return fig.figure()


# ------------------------------------------------------------------- tables


def best_step_table(result: SweepResult) -> pd.DataFrame:
    """Observed and predicted best steps per (dtype, scheme), and autograd's error per dtype.

    Numbers are strings with 3 significant digits, ready to display or copy.

    >>> from gradlab.error_sweep import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("exp(x)", 0.0, ("float64",), ("central",), points=9))
    >>> best_step_table(r).loc[0, "h* (theory)"]  # (3u |f/f'''|)**(1/3), u = 2**-53
    '6.93e-06'
    """
    autograd = dict(zip(result.autograd["dtype"], result.autograd["rel_error"], strict=True))
    rows = []
    for row in result.best.itertuples(index=False):
        rows.append({
            "dtype": row.dtype,
            "scheme": _scheme_label(row.scheme),
            "best h (observed)": format_sig(row.eps),
            "rel. error at best h": format_sig(row.rel_error),
            "h* (theory)": format_sig(row.predicted_eps),
            "rel. error at h* (theory)": format_sig(row.predicted_rel_error),
            "autograd rel. error": format_sig(autograd.get(row.dtype, math.nan)),
        })
    return pd.DataFrame(rows, columns=[
        "dtype", "scheme", "best h (observed)", "rel. error at best h", "h* (theory)",
        "rel. error at h* (theory)", "autograd rel. error",
    ])


def autograd_table(result: SweepResult) -> pd.DataFrame:
    """Autograd's value of f'(x) per dtype, the exact value and both errors.

    >>> from gradlab.error_sweep import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("x**3", 2.0, ("float32",), ("central",), points=5))
    >>> autograd_table(r).loc[0, "autograd f′(x)"]
    '12'
    """
    return pd.DataFrame(
        [{
            "dtype": row.dtype,
            "autograd f′(x)": f"{row.value:.17g}",
            "exact f′(x)": f"{row.reference:.17g}" if np.isfinite(row.reference) else "—",
            "abs. error": format_sig(row.abs_error),
            "rel. error": format_sig(row.rel_error),
        } for row in result.autograd.itertuples(index=False)],
        columns=["dtype", "autograd f′(x)", "exact f′(x)", "abs. error", "rel. error"],
    )


def rounding_table(result: SweepResult) -> pd.DataFrame:
    """How x was rounded in each dtype, and the exact f'(x) at that rounded point.

    >>> from gradlab.error_sweep import SweepSettings, run_sweep
    >>> r = run_sweep(SweepSettings("x**2", 0.1, ("float16",), ("central",), points=5))
    >>> rounding_table(r).loc[0, "x in dtype"]
    '0.0999755859375'
    """
    x = result.settings.x
    rows = []
    for dtype, xr in result.rounded_x.items():
        ref = result.references.get(dtype)
        rows.append({
            "dtype": dtype,
            "x in dtype": repr(float(xr)),  # shortest digits that give back the value
            "x in dtype − x": format_sig(xr - x) if xr != x else "0 (exact)",
            "exact f′(x in dtype)": exact_digits(ref.d1) if ref is not None and ref.defined else "—",
        })
    return pd.DataFrame(rows, columns=["dtype", "x in dtype", "x in dtype − x", "exact f′(x in dtype)"])
