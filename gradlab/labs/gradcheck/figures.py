"""The Grad check page's charts: the eps sweep (its main chart), the Taylor test and the layer chart.

Log axes use ``exponentformat="power"``; one colour per reduction (from
:data:`gradlab.figures.style.REDUCTION_COLOURS`); errors that
are exactly zero (or not finite) cannot sit on a log axis, so they become gaps
and the figure says how many. The heatmap of a full check is the library's
(:func:`gradlab.figures.check.error_heatmap`, a notebook draws it too), as is the layer
check's bar chart (:func:`gradlab.figures.layers.layers_figure`), drawn here without its title.

The figures are assembled as plain dicts (:class:`gradlab.figures.spec.FigureSpec`)
and turned into a ``go.Figure`` once, without Plotly's per-call validation; the
tests validate each one. Labels of reference lines on a log y axis sit at
log10 of the line's value (annotations there take log10 coordinates).

>>> from gradlab.check import fit_taylor
>>> h = np.logspace(-6, 0, 13)
>>> fig = taylor_figure(fit_taylor(h, h**2, 1e-20))
>>> type(fig).__name__, fig.layout.xaxis.type, fig.layout.xaxis.exponentformat
('Figure', 'log', 'power')
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gradlab.check import TaylorResult
from gradlab.figures.layers import layers_figure
from gradlab.figures.spec import LOG_AXIS, FigureOrSpec, FigureSpec
from gradlab.figures.style import GUIDE, MARK, NEUTRAL, REDUCTION_COLOURS

__all__ = ["MAIN_CHART_HEIGHT", "eps_sweep_figure", "taylor_figure", "layer_chart"]

_HEIGHT = 420
#: The eps sweep is the page's main chart: all of it, legend included, on a 1280x720 first
#: screen under the title row, one row of controls and a three-line answer.
MAIN_CHART_HEIGHT = 355
#: Legend below the plot, in a row: a phone's width stays the plot's. At the figure's bottom edge
#: (``yref="container"``), so the plot area makes room for it and the x axis title, however many
#: rows it wraps into and however short the chart.
_LEGEND_BELOW = dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0)
#: ``mean`` lies on ``sum`` (it scales L and dL/dxᵢ alike): dashed, both stay visible.
_REDUCTION_DASH = {"mean": "dash"}
#: A reference line (rtol, round-off floor): dotted grey, its label small at the right end, in the
#: theme's text colour (no colour of its own: grey text on white is under WCAG AA's 4.5:1).
_REFERENCE_LINE = dict(dash="dot", color=GUIDE)
_REFERENCE_LABEL = dict(font=dict(size=12), position="top right")


def _positive(values) -> np.ndarray:
    """Values for a log axis: zero, negative and non-finite become NaN (gaps)."""
    v = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(v) & (v > 0), v, np.nan)


def _title(text: str) -> dict:
    return {"text": text}


def eps_sweep_figure(df: pd.DataFrame, rtol: float | None = None, step: float | None = None) -> FigureOrSpec:
    """Relative error against eps, the three reductions in one panel, one line per element.

    One panel, not one per reduction: it reads the same on a projector and on a
    390 px phone (no side-by-side panels to squeeze, no panel titles to collide),
    and the reductions are compared on the same axes. ``mean`` is dashed, so
    where it lies on ``sum`` (it scales L and dL/dxᵢ alike) both stay visible.
    ``rtol`` is a dotted line, ``step`` (the check's own step) a vertical line in
    the colour of a chosen step. The legend sits below the plot, horizontal.

    >>> df = pd.DataFrame({"reduction": ["sum", "sum", "none", "none"], "element": ["x[0]"] * 4,
    ...                    "eps": [1e-6, 1e-3] * 2, "estimate": [1.0, 1.1, 1.0, 1.0],
    ...                    "autograd": [1.0] * 4, "rel_error": [0.0, 0.1, 1e-9, 0.0]})
    >>> fig = eps_sweep_figure(df, rtol=1e-3, step=1e-3)
    >>> [a.text for a in fig.layout.annotations]
    ['rtol = 0.001 (relative tolerance)', 'this check: eps = 0.001']
    >>> fig.layout.annotations[0].y, fig.layout.yaxis.type, [t.xaxis for t in fig.data]
    (-3.0, 'log', ['x', 'x'])
    >>> fig.layout.legend.orientation, fig.layout.legend.yref, fig.layout.xaxis.range
    ('h', 'container', (-6.2, -2.8))
    """
    reductions = [r for r in REDUCTION_COLOURS if r in set(df["reduction"])]
    fig = FigureSpec()
    gaps = 0
    for reduction in reductions:
        part = df[df["reduction"] == reduction]
        for k, (element, rows) in enumerate(part.groupby("element", sort=False)):
            y = _positive(rows["rel_error"])
            gaps += int(np.isnan(y).sum())
            fig.add_trace(_sweep_line(reduction, element, rows, y, first=k == 0))
    if rtol is not None:
        # top left: on the right the curves fall through the line and would hide the label
        # named where it is drawn: the pass line of the relative tolerance
        fig.add_hline(rtol, log_axis=True, **dict(_REFERENCE_LABEL, text=f"rtol = {rtol:g} (relative tolerance)",
                                                   position="top left"), **_REFERENCE_LINE)
    eps = df["eps"].to_numpy(dtype=np.float64)
    # The sweep's own range, padded a little: autorange pads a log axis by a decade or more.
    span = [float(np.log10(eps.min())) - 0.2, float(np.log10(eps.max())) + 0.2] if len(eps) else None
    if step is not None:
        _mark_step(fig, step, span)
    # No y title: the chart's title names the quantity (a y title would cost a 390 px phone
    # the 300 px of plot it needs); what it means is in the hover and the page's caption.
    # Gaps go under the x axis, so the top holds only the title and the step's label.
    x_title = "step eps"
    if gaps:
        x_title += (f"<br><sup>{gaps} point{'s' if gaps != 1 else ''} with zero or non-finite error "
                    f"{'are' if gaps != 1 else 'is'} left out (gaps)</sup>")
    fig.update_xaxes(title=_title(x_title), nticks=6, automargin=True, range=span, **LOG_AXIS)
    fig.update_yaxes(automargin=True, dtick=_decade_step(df["rel_error"]), **LOG_AXIS)
    fig.update_layout(title=_title("Relative error vs step eps"), height=MAIN_CHART_HEIGHT, hovermode="closest",
                      margin=dict(l=0, r=0, t=60, b=10),  # the title, then the step's label
                      legend=_LEGEND_BELOW)
    return fig.figure()


def _decade_step(values, most: int = 6) -> int:
    """Ticks every k decades, at most ``most`` of them: an integer dtick labels powers of ten
    only (plotly labels 2 and 5 as well when a log axis spans few decades: clutter on a phone)."""
    v = _positive(values)
    v = v[np.isfinite(v)]
    if not len(v):
        return 1
    decades = math.ceil(math.log10(v.max())) - math.floor(math.log10(v.min()))
    return max(1, math.ceil(decades / most))


def _mark_step(fig: FigureSpec, step: float, span: list[float] | None) -> None:
    """The check's own step: a dashed line, its label just above the plot (never over a curve),
    on the side of the line with more room, so a phone does not cut it off."""
    fig.add_vline(step, color=MARK, width=2, dash="dash")
    x = math.log10(step)
    right_half = span is not None and x > (span[0] + span[1]) / 2
    fig.add_annotation(x=x, xref="x", y=1, yref="y domain", yanchor="bottom",
                       xanchor="right" if right_half else "left", text=f"this check: eps = {step:.3g}",
                       showarrow=False, font=dict(size=12))  # text colour: orange text is 3.3:1


def _sweep_line(reduction: str, element: str, rows: pd.DataFrame, y: np.ndarray, first: bool) -> dict:
    """One element's error curve under one reduction (its legend entry only on the first)."""
    return dict(
        type="scatter", x=rows["eps"].to_numpy(), y=y, xaxis="x", yaxis="y",
        mode="lines+markers", name=reduction, legendgroup=reduction, showlegend=first,
        line=dict(color=REDUCTION_COLOURS[reduction], width=2, dash=_REDUCTION_DASH.get(reduction, "solid")),
        marker=dict(size=5),
        customdata=np.stack([rows["estimate"], rows["autograd"]], axis=1),
        hovertemplate=(f"{element}<br>eps = %{{x:.2e}}<br>estimate = %{{customdata[0]:.6g}}"
                       "<br>autograd = %{customdata[1]:.6g}<br>relative error = %{y:.2e}"
                       "<extra>" + reduction + "</extra>"),
    )


def taylor_figure(taylor: TaylorResult) -> FigureOrSpec:
    """The Taylor remainder against h, the fitted points, the floor and h¹/h² guides."""
    t = taylor.table
    fig = FigureSpec()
    fig.add_trace(dict(type="scatter", x=t["h"].to_numpy(), y=_positive(t["remainder"]),
                       mode="lines+markers", name="remainder", line=dict(color=NEUTRAL), marker=dict(size=5),
                       hovertemplate="h = %{x:.2e}<br>remainder = %{y:.2e}<extra></extra>"))
    fitted = t[t["fitted"]]
    if len(fitted):
        fig.add_trace(dict(type="scatter", x=fitted["h"].to_numpy(), y=fitted["remainder"].to_numpy(),
                           mode="markers", name=f"fitted: slope {taylor.slope:.2f}",
                           marker=dict(size=10, color=MARK, symbol="circle-open"), hoverinfo="skip"))
        fig.add_traces(_guides(fitted))
    if taylor.floor > 0:
        fig.add_hline(taylor.floor, log_axis=True, text="round-off floor ≈ 2u·|L|", **_REFERENCE_LABEL,
                      **_REFERENCE_LINE)
    fig.update_xaxes(title=_title("h (step along a random direction)"), **LOG_AXIS)
    fig.update_yaxes(title=_title("|L(x+hv) − L(x) − h ∇L·v|"), **LOG_AXIS)
    fig.update_layout(title=_title("Taylor test: slope 2 = right gradient, slope 1 = wrong"),
                      height=_HEIGHT, legend=dict(orientation="h", y=-0.25))
    return fig.figure()


def _guides(fitted: pd.DataFrame) -> list[dict]:
    """Lines of slope 1 and 2 through the fitted point with the largest h."""
    h0, r0 = float(fitted["h"].max()), float(fitted.loc[fitted["h"].idxmax(), "remainder"])
    h = np.array([float(fitted["h"].min()), h0])
    return [dict(type="scatter", x=h, y=r0 * (h / h0) ** power, mode="lines", name=f"∝ h^{power}",
                 line=dict(dash=dash, color=GUIDE), hoverinfo="skip")
            for power, dash in ((1, "dash"), (2, "dot"))]


def layer_chart(result) -> FigureOrSpec:
    """The layer check's chart (:func:`~gradlab.figures.layers.layers_figure` of a
    :class:`gradlab.layers.result.LayersResult`) without its title: the page's answer is the
    sentence right above it.

    >>> from gradlab.layers.result import LayerRow, LayersResult
    >>> row = LayerRow("0", "Linear", "float64", "parameters", "pass", 0, 1, False, "weight[0, 0]",
    ...                1.0, 1.0, 1e-9, 1e-5, 1e-10, 0.01, "")
    >>> fig = layer_chart(LayersResult((row,), "first", "Sequential"))
    >>> fig.layout.title.text, fig.layout.height
    (None, 116)
    """
    fig = layers_figure(result)
    fig.update_layout(title=None, margin=dict(l=10, r=10, t=30, b=10), height=fig.layout["height"] - 30)
    return fig
