"""The Network page's figures: the staircase of quantised estimates and the error against the step.

Pure functions, tidy DataFrame -> Plotly figure; the lab's view hands them to its page as charts
(:class:`~gradlab.view.Chart`, built where they are drawn: :mod:`gradlab.labs.network.page_view`).

>>> from gradlab.labs.network.engine import NetworkSettings, step_sweep
>>> s = step_sweep(NetworkSettings(points=9))
>>> fig = step_error_figure(s, 1e-6, "float32")
>>> fig.layout.xaxis.type
'log'
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gradlab.figures.layout import MAIN_CHART_HEIGHT, as_array, beside, layout_below, log_range
from gradlab.figures.spec import LOG_AXIS, FigureOrSpec, FigureSpec
from gradlab.figures.style import FORMULA_A, FORMULA_B, GUIDE, MARK, TRUTH

__all__ = ["staircase_figure", "step_error_figure"]

#: The staircase's height: the main chart's, less the line under the answer that defines ulp and q.
STAIRCASE_HEIGHT = MAIN_CHART_HEIGHT - 10
#: Curves k*q drawn on the staircase: the multiples nearest the truth, each side.
STAIR_MULTIPLES = 4

def staircase_figure(table: pd.DataFrame, autograd: float, reference: float, mark_step: float,
                     mark_quantum: float, dtype: str, mark_estimate: float | None = None) -> FigureOrSpec:
    """Central-difference estimates against the step, with the curves k*q(h) they must sit on.

    At small steps the outputs y+ and y- differ by a few ulps, so each estimate is
    an integer multiple of q(h) = ulp(y)/(2h): the points jump between the curves.
    ``mark_estimate`` (the estimate at ``mark_step``) is ringed and labelled.
    """
    fig = FigureSpec()
    spacing = float(np.median(table["quantum"] * 2 * table["step"]))
    steps = np.geomspace(table["step"].min(), table["step"].max(), 200)
    base = int(round(reference / mark_quantum)) if mark_quantum > 0 else 0
    for k in range(base - STAIR_MULTIPLES, base + STAIR_MULTIPLES + 1):
        fig.add_trace(dict(
            type="scatter", x=steps, y=k * spacing / (2 * steps), mode="lines",
            line=dict(color=GUIDE, width=1.5, dash="dot"),
            name="possible estimates k · ulp(y)/(2h)", legendgroup="k", showlegend=k == base,
            hoverinfo="skip",
        ))
    fig.add_trace(dict(
        type="scatter", x=as_array(table["step"]), y=as_array(table["estimate"]), mode="markers+lines",
        name=f"central difference ({dtype})",
        line=dict(color=FORMULA_B, width=1.5), marker=dict(color=FORMULA_B, size=6),
        customdata=np.stack([table["k"], table["quantum"], table["step_taken"]], axis=1),
        hovertemplate=("h = %{x:.3g}<br>estimate %{y:.6g}<br>= k·q with k = %{customdata[0]}, "
                       "q = %{customdata[1]:.3g}<br>step taken %{customdata[2]:.4g}<extra></extra>"),
    ))
    # Its label on the right, where the estimates have met it; the left is the marked estimate's.
    fig.add_hline(autograd, text=f"autograd {autograd:.3g}", position="bottom right", color=FORMULA_A, width=3)
    fig.add_trace(dict(type="scatter", x=[None], y=[None], mode="lines", name=f"autograd ({dtype})",
                       line=dict(color=FORMULA_A, width=3), hoverinfo="skip"))
    x_range = log_range(table["step"])
    fig.add_vline(mark_step, log_axis=True, text=f"dx = {mark_step:g}", position=beside(mark_step, x_range, "top"),
                  dash="dash", color=MARK)
    if mark_estimate is not None and np.isfinite(mark_estimate):
        k = int(round(mark_estimate / mark_quantum)) if mark_quantum > 0 else 0
        fig.add_trace(dict(
            type="scatter", x=[mark_step], y=[mark_estimate], mode="markers", name=f"dx = {mark_step:g}",
            marker=dict(color=MARK, size=16, symbol="circle-open", line=dict(width=3)),
            hovertemplate=f"dx = {mark_step:g}: estimate {mark_estimate:.6g} = {k} × {mark_quantum:.3g}"
                          "<extra></extra>",
        ))
        # Just beside the ring, towards the side with room: short offsets keep it clear of the
        # y tick labels (inside the plot) on a 390 px phone and on the first screen at 1280x720.
        left = np.log10(mark_step) - x_range[0] > 2
        fig.add_annotation(x=float(np.log10(mark_step)), y=mark_estimate, text=f"<b>{mark_estimate:.3g} = {k} × q</b>",
                           showarrow=True, arrowcolor=MARK, ax=-14 if left else 14, ay=-8,
                           xanchor="right" if left else "left", yanchor="middle")
    fig.update_yaxes(range=_staircase_range(reference, mark_quantum, mark_estimate, autograd))
    fig.update_xaxes(**LOG_AXIS, range=x_range)
    return layout_below(fig, "Estimates of ∂y/∂x = k × q, q = ulp(y)/(2h)", "step h", "", STAIRCASE_HEIGHT,
                         inside_y_ticks=True)


def _staircase_range(reference: float, quantum: float, estimate: float | None, autograd: float) -> list[float]:
    """The y range: the exact value, the marked estimate and 0, with one and a half quanta to spare."""
    shown = [reference, 0.0] + ([estimate] if estimate is not None and np.isfinite(estimate) else [])
    spare = max(1.5 * quantum, 0.25 * abs(autograd)) if np.isfinite(quantum) else 0.25 * abs(autograd)
    spare = spare or 1.0
    return [min(shown) - spare, max(shown) + spare]


def step_error_figure(sweep, mark_step: float, dtype: str) -> FigureOrSpec:
    """|estimate - reference| against the step of a :class:`gradlab.labs.network.engine.StepSweep`,
    log-log, with the sweep's best step (a star) and the theory's h* (a dotted line) each marked and
    named as the page's words name them: they differ (0.013 against 0.032 for the question's network).

    >>> from gradlab.labs.network.engine import NetworkSettings, step_sweep
    >>> names = [t["name"] for t in step_error_figure(step_sweep(NetworkSettings(points=9)), 1e-6, "float32").data]
    >>> names[1].startswith("best in this sweep: h = ")
    True
    """
    table, predicted_step, best = sweep.table, sweep.predicted_step, sweep.best_row()
    errors = table["ref_error"].where(table["ref_error"] > 0)  # exact zeros become gaps on a log axis
    fig = FigureSpec()
    fig.add_trace(dict(
        type="scatter", x=as_array(table["step"]), y=as_array(errors), mode="markers+lines",
        name=f"central difference ({dtype})",
        line=dict(color=FORMULA_B), marker=dict(size=5), connectgaps=False,
        hovertemplate="h = %{x:.3g}<br>error %{y:.3g}<extra></extra>",
    ))
    if best["ref_error"] > 0:
        fig.add_trace(dict(
            type="scatter", x=[float(best["step"])], y=[float(best["ref_error"])], mode="markers",
            name=f"best in this sweep: h = {best['step']:.2g}", marker=dict(symbol="star", size=14, color=TRUTH),
            hovertemplate="best in this sweep<br>h = %{x:.3g}<br>error %{y:.3g}<extra></extra>",
        ))
    x_range = log_range(table["step"])
    if np.isfinite(predicted_step):
        fig.add_vline(predicted_step, log_axis=True, text=f"theory's h* ≈ {predicted_step:.2g}",
                      position=beside(predicted_step, x_range, "top"), dash="dot", color=TRUTH)
    fig.add_vline(mark_step, log_axis=True, text=f"h = {mark_step:g}", position=beside(mark_step, x_range, "bottom"),
                  dash="dash", color=MARK)
    fig.update_xaxes(**LOG_AXIS, range=x_range)
    fig.update_yaxes(**LOG_AXIS)
    return layout_below(fig, "|error|: round-off left, truncation right", "step h", "", 400, inside_y_ticks=True)
