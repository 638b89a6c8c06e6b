"""The Summed-loss page's figure: each summation's error, in ulps of the loss.

One bar per method of :data:`gradlab.labs.summed_loss.SUM_METHODS`, in
the colour of the dtype it adds in; the band of ±½ ulp around 0 is where a
correctly rounded sum lies, and the axis's grid lines fall on whole ulps when the
errors are a few ulps wide, so the grid of the loss itself is visible.

>>> from gradlab.labs.summed_loss import SummedLossSettings, summed_loss
>>> fig = summed_error_bars(summed_loss(SummedLossSettings(shape=(20, 10))))
>>> [t.type for t in fig.data], len(fig.data[0].x)
(['bar'], 5)
"""

from __future__ import annotations

import numpy as np

from gradlab.figures.spec import FigureOrSpec, FigureSpec
from gradlab.figures.style import TRUTH, dtype_colour
from gradlab.labs.summed_loss import SUM_METHODS, SummedLoss

__all__ = ["summed_error_bars", "ulp_words"]

#: Five bars need no more: the chart and the answer share a projector's first screen.
FIGURE_HEIGHT = 360
#: Up to this many ulps either side, a grid line on every whole ulp.
WHOLE_ULP_TICKS = 12


def ulp_words(ulps: float) -> str:
    """A bar's label: ``−24.2 ulp``, ``0.18 ulp``, ``≈ 0 ulp``.

    >>> ulp_words(-24.18), ulp_words(0.1837), ulp_words(-2.5), ulp_words(7.9e-10)
    ('−24.2 ulp', '0.18 ulp', '−2.5 ulp', '≈ 0 ulp')
    """
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
        type="bar", x=labels, y=ulps, marker=dict(color=colours),
        text=[ulp_words(u) for u in ulps], cliponaxis=False,
        textposition=["inside" if abs(u) > widest / 4 else "outside" for u in ulps],  # short bars: beside
        customdata=np.array([[r.value, r.error] for r in rows]), name="error",
        hovertemplate="L = %{customdata[0]:.10g}, off by %{customdata[1]:.3g} = %{y:.3g} ulp"
                      "<extra></extra>",
    ))
    fig.update_yaxes(**axis)
    # The y axis has no title (it would cost a phone's plot width): the chart's title names it.
    fig.update_xaxes(type="category", title=dict(
        text=f"L = {result.exact_float:.7g}, 1 ulp = {result.ulp_loss:.3g} ({dtype})<br>"
             "green band: ±½ ulp, correctly rounded"))
    fig.update_layout(
        title=dict(text="Each sum's error, in ulps of L", x=0, xanchor="left"),
        showlegend=False, margin=dict(l=4, r=4, t=50, b=10), hovermode="closest", bargap=0.35,
        height=FIGURE_HEIGHT,
    )
    return fig.figure()
