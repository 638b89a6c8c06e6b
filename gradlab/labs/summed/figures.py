"""The Summed-loss page's figures: what a check of the summed loss prints, and each
summation's error in ulps of the loss.

:func:`difference_staircase` puts the forward differences of L against autograd's
gradient: on the diagonal if the check worked, on the lines k · ulp(L)/h when round-off
rules. :func:`summed_error_bars` draws one bar per method of :data:`gradlab.labs.summed.loss.SUM_METHODS`, in
the colour of the dtype it adds in; the band of ±½ ulp around 0 is where a
correctly rounded sum lies, and the axis's grid lines fall on whole ulps when the
errors are a few ulps wide, so the grid of the loss itself is visible.

>>> from gradlab.labs.summed.loss import SummedLossSettings, summed_loss
>>> fig = summed_error_bars(summed_loss(SummedLossSettings(shape=(20, 10))))
>>> [t.type for t in fig.data], len(fig.data[0].x)
(['bar'], 5)
"""

from __future__ import annotations

import math

import numpy as np

from gradlab.figures.spec import FigureOrSpec, FigureSpec
from gradlab.figures.style import GUIDE, MARK, MARKER_OUTLINE, TRUTH, dtype_colour
from gradlab.labs.summed.loss import SUM_METHODS, SummedLoss

__all__ = ["summed_error_bars", "difference_staircase", "ulp_words"]

#: Five bars need no more: the chart and the answer share a projector's first screen.
FIGURE_HEIGHT = 360
#: Up to this many ulps either side, a grid line on every whole ulp.
WHOLE_ULP_TICKS = 12


def ulp_words(ulps: float) -> str:
    """A bar's label: ``−24.2 ulp``, ``0.18 ulp``, ``≈ 0 ulp``.

    >>> ulp_words(-24.18), ulp_words(0.1837), ulp_words(-2.5), ulp_words(7.9e-10), ulp_words(float("inf"))
    ('−24.2 ulp', '0.18 ulp', '−2.5 ulp', '≈ 0 ulp', 'overflow')
    """
    if not np.isfinite(ulps):
        return "overflow"
    if abs(ulps) < 0.005:
        return "≈ 0 ulp"
    text = f"{ulps:.2f}".rstrip("0").rstrip(".") if abs(ulps) < 1 else f"{ulps:.3g}"
    return text.replace("-", "−") + " ulp"


def _two_lines(label: str) -> str:
    """A category label broken at its first space or hyphen, so five fit under a phone's chart."""
    for sep in (" ", "-"):
        if sep in label:
            head, tail = label.split(sep, 1)
            return f"{head}{sep if sep == '-' else ''}<br>{tail}"
    return label


def summed_error_bars(result: SummedLoss) -> FigureOrSpec:
    """Bars: (value − exact) / ulp(L) per method, the correctly rounded band ±½ ulp shaded."""
    dtype = result.settings.dtype
    methods = {m.name: m for m in SUM_METHODS}
    rows = list(result.rows)
    ulps = np.array([r.error_ulps for r in rows], dtype=float)
    labels = [_two_lines(r.label) for r in rows]
    colours = [dtype_colour(dtype if methods[r.method].in_dtype else "float64") for r in rows]
    finite = ulps[np.isfinite(ulps)]
    low, high = min(-1.0, float(finite.min(initial=0.0))), max(1.0, float(finite.max(initial=0.0)))
    widest = high - low
    pad = 0.15 * widest  # room for the labels beside the short bars
    axis = dict(range=[low - pad, high + pad], zeroline=True, zerolinewidth=2)
    if widest <= 2 * WHOLE_ULP_TICKS:
        axis["dtick"] = 1
    fig = FigureSpec()
    fig.add_shape(type="rect", xref="paper", yref="y", x0=0, x1=1, y0=-0.5, y1=0.5, layer="below",
                  fillcolor=TRUTH, opacity=0.18, line=dict(width=0))
    fig.add_trace(dict(
        type="bar", x=labels, y=np.where(np.isfinite(ulps), ulps, 0.0), marker=dict(color=colours),
        text=[ulp_words(u) for u in ulps], cliponaxis=False,
        textposition=["inside" if widest / 4 < abs(u) < math.inf else "outside" for u in ulps],  # short: beside
        customdata=np.array([[r.value, r.error] for r in rows]), name="error",
        hovertemplate="L = %{customdata[0]:.10g}, off by %{customdata[1]:.3g} = %{y:.3g} ulp"
                      "<extra></extra>",
    ))
    fig.update_yaxes(**axis)
    # The y axis has no title (it would cost a phone's plot width): the chart's title names it.
    fig.update_xaxes(type="category", title=dict(
        text=f"exact L = {result.exact_float:.7g}, 1 ulp = {result.ulp_loss:.3g} ({dtype})<br>"
             "green band: ±½ ulp, correctly rounded"))
    fig.update_layout(
        title=dict(text="Each sum's error, in ulps of L", x=0, xanchor="left"),
        showlegend=False, margin=dict(l=4, r=4, t=50, b=10), hovermode="closest", bargap=0.35,
        height=FIGURE_HEIGHT,
    )
    return fig.figure()


#: Grid lines k · ulp(L)/h drawn at most (a fine quantum would draw thousands).
MAX_STAIRS = 24


def difference_staircase(table, quantum: float, h: float, dtype: str) -> FigureOrSpec:
    """What the check prints against what it should: forward differences (from
    :func:`gradlab.labs.summed.differences.sampled_differences`) against autograd's dL/dxᵢ.

    A right check puts every point on the diagonal; a check of the summed loss puts them on
    the lines k · ulp(L)/h, drawn when they are few enough to see.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"element": [0, 9], "gradient": [0.8, -0.4], "difference": [0.0, -1.95], "k": [0, -1]})
    >>> [d.name for d in difference_staircase(t, 1.953125, 1e-3, "float32").data][-2:]
    ['= autograd', 'float32']
    """
    grad, diff = np.asarray(table["gradient"], float), np.asarray(table["difference"], float)
    lo = float(min(grad.min(initial=0.0), diff.min(initial=0.0)))
    hi = float(max(grad.max(initial=0.0), diff.max(initial=0.0)))
    pad = 0.08 * (hi - lo or 1.0)
    lo, hi = lo - pad, hi + pad
    fig = FigureSpec()
    ks = range(math.floor(lo / quantum), math.ceil(hi / quantum) + 1) if quantum > 0 else range(0)
    if 0 < len(ks) <= MAX_STAIRS:
        for k in ks:
            fig.add_shape(type="line", xref="paper", x0=0, x1=1, yref="y", y0=k * quantum, y1=k * quantum,
                          layer="below", line=dict(color=GUIDE, width=1, dash="dot"))
        fig.add_trace(dict(type="scatter", x=[None], y=[None], mode="lines", hoverinfo="skip",
                           line=dict(color=GUIDE, width=1, dash="dot"),
                           name=f"k · {quantum:.4g}"))  # k·ulp(L)/h: the answer says so
    fig.add_trace(dict(type="scatter", x=[lo, hi], y=[lo, hi], mode="lines", hoverinfo="skip",
                       line=dict(color=TRUTH, width=2), name="= autograd"))
    fig.add_trace(dict(
        type="scatter", x=grad, y=diff, mode="markers", name=dtype,  # the chart's title says what they are
        marker=dict(color=MARK, size=9, line=dict(color=MARKER_OUTLINE, width=1)),
        customdata=np.stack([np.asarray(table["element"]), np.asarray(table["k"])], axis=1),
        hovertemplate=("element %{customdata[0]}<br>autograd %{x:.4g}<br>(L(x+h·eᵢ) − L(x))/h = %{y:.6g}"
                       "<br>= k·ulp(L)/h with k = %{customdata[1]}<extra></extra>"),
    ))
    fig.update_xaxes(range=[lo, hi], zeroline=True, title=dict(text="autograd's dL/dxᵢ"), automargin=True)
    stairs = dict(tickvals=[k * quantum for k in ks], ticktext=[f"{k * quantum:.4g}" for k in ks]) \
        if 0 < len(ks) <= MAX_STAIRS else {}
    fig.update_yaxes(range=[lo, hi], zeroline=True, **stairs)  # the values the check can print
    fig.update_layout(
        title=dict(text=f"What the check prints at h = {h:g}", x=0, xanchor="left"),
        # At the figure's bottom edge: the plot area makes room for it and the x axis title.
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0),
        margin=dict(l=4, r=4, t=50, b=10), hovermode="closest", height=STAIRCASE_HEIGHT,
    )
    return fig.figure()


#: The main chart: all of it, legend included, on a 1280x720 first screen under the title row,
#: one row of controls and a three-line answer with its line defining ulp (on a 390 px phone the legend
#: below leaves ~160 px of plot).
STAIRCASE_HEIGHT = 340
