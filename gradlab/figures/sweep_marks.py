"""The sweep figures' decorations: shaded regimes, machine-eps marks, axes, height, messages.

Each function draws onto a :class:`~gradlab.figures.spec.FigureSpec` that
:mod:`gradlab.figures.sweep` has filled with traces. On a log axis shapes take
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

import numpy as np

from gradlab.error_sweep import SweepResult
from gradlab.figures.spec import LOG_AXIS, FigureSpec
from gradlab.figures.style import (
    AXIS_TITLE_SIZE,
    FONT_SIZE,
    ROUNDOFF_SHADE,
    TRUNCATION_SHADE,
    dtype_colour,
)
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import get_scheme

__all__ = ["log10", "shading", "machine_eps_marks", "y_range", "layout", "message",
           "gap_count", "footnote", "nothing_to_draw"]

_SHADE_OPACITY = 0.08
_Y_PAD_TOP, _Y_PAD_BOTTOM = 0.5, 2.0  # decades around the data (labels sit at the bottom)
_Y_TITLES = {
    "relative": "relative error  |estimate − f′(x)| / |f′(x)|",
    "absolute": "absolute error  |estimate − f′(x)|",
}


def log10(value: float) -> float:
    """Where an annotation at ``value`` sits on a log axis."""
    return math.log10(value)


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


def shading(fig: FigureSpec, result: SweepResult, focus: str, x_range) -> None:
    """Shade round-off (h < h*) and truncation (h > h*) regimes, labelled above the plot."""
    chosen = _regime_scheme(result, focus, x_range)
    if chosen is None:
        return
    scheme, h_star = chosen
    lo, hi = x_range
    for x0, x1, colour, text, anchor in (
        (lo, h_star, ROUNDOFF_SHADE, "← round-off dominates", "right"),
        (h_star, hi, TRUNCATION_SHADE, "truncation dominates →", "left"),
    ):
        fig.add_shape(type="rect", x0=x0, x1=x1, y0=0, y1=1, xref="x", yref="y domain",
                      fillcolor=colour, opacity=_SHADE_OPACITY, line_width=0, layer="below",
                      name="regime")
        fig.add_annotation(x=log10(h_star), y=1, xref="x", yref="y domain", xanchor=anchor,
                           yanchor="bottom", showarrow=False, text=text,
                           xshift=-6 if anchor == "right" else 6,
                           font={"size": FONT_SIZE - 1}, name="regime")
    fig.add_annotation(x=log10(h_star), y=1, xref="x", yref="y domain", yanchor="bottom",
                       yshift=22, showarrow=False, name="regime",
                       text=f"h* for {focus}, {get_scheme(scheme).curve_label}",
                       font={"size": FONT_SIZE - 2, "color": dtype_colour(focus)})
    fig.add_shape(type="line", x0=h_star, x1=h_star, y0=0, y1=1, xref="x", yref="y domain",
                  line={"color": dtype_colour(focus), "width": 1.5, "dash": "dash"}, name="h*")


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
                           font={"color": dtype_colour(dtype), "size": FONT_SIZE - 2},
                           bgcolor="rgba(128,128,128,0.12)", name="machine-eps")


def y_range(values: np.ndarray) -> list[float] | None:
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


def layout(fig: FigureSpec, error: str, x_range, y_range) -> None:
    axis = {**LOG_AXIS, "tickfont": {"size": FONT_SIZE}, "showgrid": True}
    fig.update_xaxes(title={"text": "step h (eps)", "font": {"size": AXIS_TITLE_SIZE}},
                     range=[log10(x_range[0]), log10(x_range[1])], dtick=2, **axis)
    fig.update_yaxes(title={"text": _Y_TITLES[error], "font": {"size": AXIS_TITLE_SIZE}},
                     range=y_range, **axis)
    fig.update_layout(
        font={"size": FONT_SIZE}, height=_height(fig), hovermode="closest",
        margin={"l": 80, "r": 20, "t": 70, "b": 110},
        legend={"groupclick": "toggleitem", "font": {"size": FONT_SIZE - 2},
                "tracegroupgap": 12, "itemwidth": 40},
    )


def message(fig: FigureSpec, text: str) -> None:
    fig.add_annotation(x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, text=text,
                       font={"size": FONT_SIZE + 2}, name="message")


def gap_count(fig: FigureSpec) -> int:
    return sum(sum(v is None for v in t["y"]) for t in fig.data
               if t.get("meta", {}).get("kind") == "sweep")


def nothing_to_draw(result: SweepResult) -> str:
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
        fig.add_annotation(x=0, y=0, yshift=-78, xref="paper", yref="paper", xanchor="left",
                           yanchor="top", showarrow=False, text="; ".join(parts) + ".",
                           font={"size": FONT_SIZE - 3}, name="gaps")
