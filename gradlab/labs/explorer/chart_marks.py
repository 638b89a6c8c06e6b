"""The sweep figures' decorations: shaded regimes, machine-eps marks, axes, height, messages.

Each function draws onto a :class:`~gradlab.figures.spec.FigureSpec` that
:mod:`gradlab.labs.explorer.figures` has filled with traces. On a log axis shapes take
data coordinates and annotations log10 coordinates, hence :func:`log10` for
every annotation's x.

>>> fig = FigureSpec()
>>> layout(fig, "relative", (1e-8, 1.0), [-10.0, 0.0])
>>> fig.figure().layout.xaxis.range
(-8.0, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gradlab.figures.layout import BODY_TEXT_PX
from gradlab.figures.spec import LOG_AXIS, FigureSpec
from gradlab.figures.style import (
    AXIS_TITLE_SIZE,
    FONT_SIZE,
    ROUNDOFF_SHADE,
    TRUNCATION_SHADE,
)
from gradlab.figures.style import dtype_colour as _native_colour
from gradlab.numerics.dtypes import EMULATED_DTYPES, facts
from gradlab.numerics.schemes import get_scheme
from gradlab.step_sweep.regimes import REGIMES, band_name

if TYPE_CHECKING:  # a protocol, not the engine's class: the engine's result draws these (gradlab.step_sweep.swept)
    from gradlab.step_sweep.swept import Swept

__all__ = ["dtype_colour", "log10", "band_height", "shading", "machine_eps_marks", "y_range", "layout", "x_dtick", "message",
           "gap_count", "footnote", "nothing_to_draw"]

def dtype_colour(dtype: str) -> str:
    """The colour of a dtype's row, the emulated 8-bit rows' too (style.dtype_colour reads the
    native table only; the sweep is the one figure that draws emulated dtypes).

    >>> dtype_colour("float8_e5m2") == EMULATED_DTYPES["float8_e5m2"].colour
    True
    """
    row = EMULATED_DTYPES.get(dtype)
    return row.colour if row is not None else _native_colour(dtype)


_Y_PAD_TOP, _Y_PAD_BOTTOM = 0.5, 2.0  # decades around the data (labels sit at the bottom)
_Y_TITLES = {
    "relative": "relative error  |estimate − f′(x)| / |f′(x)|",
    "absolute": "absolute error  |estimate − f′(x)|",
    # no exact f′ (a kink): the estimates themselves, not an error (gradlab.labs.explorer.figures.estimate_vs_eps_figure)
    "estimate": "estimate of f′(x): what each method returns",
}


def log10(value: float) -> float:
    """Where an annotation at ``value`` sits on a log axis."""
    return math.log10(value)


_BAND = 0.075  # height of one regime band, as a fraction of the plot's height ...
_BANDS_SHARE = 0.3  # ... while they take at most this share together
_BAND_OPACITY = 0.28
_SHADES = {REGIMES[0]: ROUNDOFF_SHADE, REGIMES[1]: TRUNCATION_SHADE}
_NAMED_AT_H_STAR = 3  # more bands than this: every other band's name moves to the plot's left edge


def band_height(count: int) -> float:
    """One band's height (fraction of the plot) when ``count`` bands are drawn.

    >>> band_height(2), round(band_height(6), 6)
    (0.075, 0.05)
    """
    return min(_BAND, _BANDS_SHARE / max(count, 1))


def shading(fig: FigureSpec, bands: Sequence[tuple[str, str, float]], x_range) -> None:
    """One band per curve along the top: round-off left of its h*, truncation right, labelled.

    Each band is true for the curve it names (a dtype and a scheme): each has its own
    best step, so one background for several would be wrong for all but one of them.
    The colours are not in the legend (the page's caption says what they mean: two legend
    rows cost a projector's first screen the chart's bottom); the curve's name sits on the
    band's wider side, so it is not cut off at the plot's edge.
    """
    lo, hi = x_range
    height = band_height(len(bands))
    for i, (dtype, scheme, h_star) in enumerate(bands):
        y0, y1 = 1 - (i + 1) * height, 1 - i * height
        for x0, x1, regime in ((lo, h_star, REGIMES[0]), (h_star, hi, REGIMES[1])):
            fig.add_shape(type="rect", x0=x0, x1=x1, y0=y0, y1=y1, xref="x", yref="y domain",
                          fillcolor=_SHADES[regime], opacity=_BAND_OPACITY, line_width=0, layer="below",
                          name=band_name(regime, dtype, scheme), showlegend=False, legendgroup="regimes")
        left_wider = log10(h_star) - log10(lo) > log10(hi) - log10(h_star)
        # Text in the theme's colour: the h* line beside it carries the dtype's. With many bands
        # (thinner than their names are tall) every other name sits at the plot's left edge, so
        # names in neighbouring bands never overlap (the 8-bit preset's six did).
        at_edge = len(bands) > _NAMED_AT_H_STAR and i % 2 == 1
        x, anchor, shift = ((log10(lo), "left", 4) if at_edge else
                            (log10(h_star), "right" if left_wider else "left", -6 if left_wider else 6))
        fig.add_annotation(x=x, y=(y0 + y1) / 2, xref="x", yref="y domain",
                           xanchor=anchor, xshift=shift,
                           yanchor="middle", showarrow=False,
                           text=f"{dtype} {get_scheme(scheme).curve_label}",
                           font={"size": BODY_TEXT_PX},  # the body text: read from the back row too
                           name="regime")
        fig.add_shape(type="line", x0=h_star, x1=h_star, y0=y0, y1=y1, xref="x", yref="y domain",
                      line={"color": dtype_colour(dtype), "width": 3}, name="h*")


def machine_eps_marks(fig: FigureSpec, dtypes: Sequence[str], x_range) -> None:
    lo, hi = x_range
    for i, dtype in enumerate(dtypes):
        eps = facts(dtype).eps
        if not lo <= eps <= hi:
            continue
        fig.add_shape(type="line", x0=eps, x1=eps, y0=0, y1=1, xref="x", yref="y domain",
                      line={"color": dtype_colour(dtype), "width": 1, "dash": "dot"},
                      name="machine-eps")
        fig.add_annotation(x=log10(eps), y=0, xref="x", yref="y domain", yanchor="bottom",
                           yshift=4 + 22 * i, text=f"ε {dtype}", showarrow=False,
                           # the label says what ε is on hover, where it is read (machine epsilon)
                           hovertext=f"ε {dtype} = {eps:.3g}: {dtype}'s machine epsilon, the distance from 1 "
                                     f"to the next larger {dtype} number",
                           font={"size": FONT_SIZE - 2},  # text colour: the dotted line carries the dtype's
                           bgcolor="rgba(128,128,128,0.12)", name="machine-eps")


def y_range(values: np.ndarray, bands: int = 0) -> list[float] | None:
    """log10 range of the y axis: the data, padded, plus room at the top for ``bands`` regime bands.

    >>> y_range(np.array([1e-8, 1.0]))
    [-10.0, 0.5]
    """
    finite = values[np.isfinite(values) & (values > 0)]
    if finite.size == 0:
        return None
    low, high = math.log10(finite.min()) - _Y_PAD_BOTTOM, math.log10(finite.max()) + _Y_PAD_TOP
    share = bands * band_height(bands)  # of the plot's height, kept free of data
    return [low, high + (high - low) * share / (1 - share)]


#: Height of the plot area plus axes; the legend below adds its rows (Plotly grows the
#: bottom margin for a legend outside the plot), so :func:`_height` adds them too.
_PLOT_PX = 330  # with the legend, the whole chart fits under the Explorer's controls at 1280x720
_LEGEND_ROW_PX = 26
_ENTRIES_PER_ROW = 2  # on a phone; a wide screen fits more per row and keeps the spare room
_MAX_TICKS = 6
_TITLE_SHIFT = 22  # px above the plot: the y title; the footnote sits between it and the plot  # x tick labels that fit under a 300 px plot on a phone


def _height(fig: FigureSpec) -> int:
    """The plot's height plus enough rows for the legend below it at phone width."""
    shown = sum(1 for t in fig.data if t.get("showlegend", True))
    rows = -(-shown // _ENTRIES_PER_ROW)
    return _PLOT_PX + _LEGEND_ROW_PX * rows


def x_dtick(x_range) -> int:
    """Decades between x ticks: at most :data:`_MAX_TICKS` labels over the range.

    >>> x_dtick((1e-17, 0.1)), x_dtick((1e-9, 0.1)), x_dtick((1e-20, 1.0))
    (4, 2, 4)
    """
    decades = math.ceil(log10(x_range[1]) - log10(x_range[0]))
    return max(1, math.ceil(decades / (_MAX_TICKS - 1)))


def layout(fig: FigureSpec, error: str, x_range, y_range) -> None:
    """Log axes, few x ticks, the legend horizontal *below* the plot (so a phone keeps the width);
    the y title above the plot says what is drawn: ``error`` "relative", "absolute" or "estimate"."""
    axis = {**LOG_AXIS, "tickfont": {"size": FONT_SIZE - 2}, "showgrid": True, "automargin": True}
    fig.update_xaxes(title={"text": "step h", "font": {"size": AXIS_TITLE_SIZE}, "standoff": 6},
                     range=[log10(x_range[0]), log10(x_range[1])], dtick=x_dtick(x_range), **axis)
    # The y title sits above the plot, not beside it: beside, it costs a phone ~30 px of width.
    fig.update_yaxes(range=y_range, **axis)
    fig.add_annotation(x=0, y=1, yshift=_TITLE_SHIFT, xref="paper", yref="paper", xanchor="left",
                       yanchor="bottom", showarrow=False, text=_Y_TITLES[error],
                       font={"size": AXIS_TITLE_SIZE - 2}, name="y-title")
    fig.update_layout(
        font={"size": FONT_SIZE}, height=_height(fig), hovermode="closest",
        margin={"l": 0, "r": 6, "t": 52, "b": 10},
        legend={"orientation": "h", "x": 0, "xanchor": "left", "yref": "container", "y": 0, "yanchor": "bottom",
                "groupclick": "toggleitem", "font": {"size": FONT_SIZE - 2}, "itemwidth": 30},
    )


def message(fig: FigureSpec, text: str) -> None:
    fig.add_annotation(x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, text=text,
                       font={"size": FONT_SIZE + 2}, name="message")


def gap_count(fig: FigureSpec) -> int:
    return sum(sum(v is None for v in t["y"]) for t in fig.data
               if t.get("meta", {}).get("kind") == "sweep")


def nothing_to_draw(result: Swept) -> str:
    if not result.reference.defined:
        return f"No errors to draw: {result.reference.reason}"
    return "No errors to draw: every estimate is exact (error 0), inf or NaN."


def footnote(fig: FigureSpec, gaps: int, exact_autograd: list[str]) -> None:
    parts = []
    if gaps:
        parts.append(f"{gaps} points are gaps (error exactly 0, inf or NaN: a log axis cannot show them)")
    if exact_autograd:
        parts.append(f"autograd is exact (error 0) in {', '.join(exact_autograd)}")
    if parts:
        fig.add_annotation(x=0, y=1, yshift=2, xref="paper", yref="paper", xanchor="left",
                           yanchor="bottom", showarrow=False, text="; ".join(parts) + ".",
                           font={"size": FONT_SIZE - 3}, name="gaps")
