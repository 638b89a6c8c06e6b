"""Figures for the Network and Backward pages: pure functions, tidy DataFrame -> plotly Figure.

No streamlit here; the pages show the figures with :func:`gradlab.ui.figures.show_figure`.
The Round-off lab's figures are in :mod:`gradlab.figures.roundoff`.

>>> import numpy as np
>>> fig = jacobian_heatmap(np.eye(2), "J")
>>> fig.data[0].type
'heatmap'
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.colors

from gradlab.figures.spec import LOG_AXIS, FigureOrSpec, FigureSpec
from gradlab.figures.style import FORMULA_A, FORMULA_B, GUIDE, MARK, MARKER_OUTLINE, NEUTRAL, TRUTH
from gradlab.literal_text import plotly_literal

__all__ = [
    "staircase_figure",
    "step_error_figure",
    "jacobian_heatmap",
    "weighted_rows_figure",
]

#: Curves k*q drawn on the staircase: the multiples nearest the truth, each side.
STAIR_MULTIPLES = 4

#: Light for small entries, dark for large, as an explicit scale: plotly.js's own "Blues"
#: runs the other way, and the unvalidated figure would pass the bare name to it.
BLUES = plotly.colors.make_colorscale(plotly.colors.sequential.Blues)


def _log_range(values: pd.Series) -> list[float]:
    """An explicit log-axis range over the data (annotations must not stretch it)."""
    return [float(np.log10(values.min())), float(np.log10(values.max()))]


def _beside(x: float, log_range: list[float], vertical: str) -> str:
    """Label position for a vertical line at x: on the side with more room, so it is not clipped."""
    middle = (log_range[0] + log_range[1]) / 2
    return f"{vertical} {'left' if np.log10(x) > middle else 'right'}"


def _array(values) -> np.ndarray:
    """Plain numpy for the unvalidated figure (plotly's JSON encoder takes numpy as is)."""
    return np.asarray(values)


def _layout(fig: FigureSpec, title: str, x_title: str, y_title: str) -> FigureOrSpec:
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left"),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1),
        margin=dict(l=10, r=10, t=70, b=10), hovermode="closest",
    )
    fig.update_xaxes(title=dict(text=x_title))
    fig.update_yaxes(title=dict(text=y_title))
    return fig.figure()


# ---------------------------------------------------------------- network page


def staircase_figure(table: pd.DataFrame, autograd: float, reference: float, mark_step: float,
                     mark_quantum: float, dtype: str) -> FigureOrSpec:
    """Central-difference estimates against the step, with the curves k*q(h) they must sit on.

    At small steps the outputs y+ and y- differ by a few ulps, so each estimate is
    an integer multiple of q(h) = ulp(y)/(2h): the points jump between the curves.
    """
    fig = FigureSpec()
    spacing = float(np.median(table["quantum"] * 2 * table["step"]))
    steps = np.geomspace(table["step"].min(), table["step"].max(), 200)
    base = int(round(reference / mark_quantum)) if mark_quantum > 0 else 0
    for k in range(base - STAIR_MULTIPLES, base + STAIR_MULTIPLES + 1):
        fig.add_trace(dict(
            type="scatter", x=steps, y=k * spacing / (2 * steps), mode="lines",
            line=dict(color=GUIDE, width=1, dash="dot"),
            name="k · ulp(y)/(2h)", legendgroup="k", showlegend=k == base, hoverinfo="skip",
        ))
    fig.add_trace(dict(
        type="scatter", x=_array(table["step"]), y=_array(table["estimate"]), mode="markers+lines",
        name=f"central difference ({dtype})",
        line=dict(color=FORMULA_B, width=1), marker=dict(color=FORMULA_B, size=6),
        customdata=np.stack([table["k"], table["quantum"], table["step_taken"]], axis=1),
        hovertemplate=("h = %{x:.3g}<br>estimate %{y:.6g}<br>= k·q with k = %{customdata[0]}, "
                       "q = %{customdata[1]:.3g}<br>step taken %{customdata[2]:.4g}<extra></extra>"),
    ))
    fig.add_hline(autograd, text=f"autograd ({dtype}) {autograd:.6g}", position="bottom left",
                  color=FORMULA_A, width=2)
    x_range = _log_range(table["step"])
    fig.add_vline(mark_step, log_axis=True, text=f"h = {mark_step:g}", position=_beside(mark_step, x_range, "top"),
                  dash="dash", color=MARK)
    half_range = max(STAIR_MULTIPLES * mark_quantum, 0.5 * abs(autograd))
    fig.update_yaxes(range=[reference - half_range, reference + half_range])
    fig.update_xaxes(**LOG_AXIS, range=x_range)
    return _layout(fig, "Estimates are multiples of q = ulp(y)/(2h)", "step h", "estimate of ∂y/∂x")


def step_error_figure(table: pd.DataFrame, predicted_step: float, mark_step: float, dtype: str) -> FigureOrSpec:
    """|estimate - reference| against the step, log-log, with the theory's best step marked."""
    errors = table["ref_error"].where(table["ref_error"] > 0)  # exact zeros become gaps on a log axis
    fig = FigureSpec()
    fig.add_trace(dict(
        type="scatter", x=_array(table["step"]), y=_array(errors), mode="markers+lines",
        name=f"central difference ({dtype})",
        line=dict(color=FORMULA_B), marker=dict(size=5), connectgaps=False,
        hovertemplate="h = %{x:.3g}<br>error %{y:.3g}<extra></extra>",
    ))
    x_range = _log_range(table["step"])
    if np.isfinite(predicted_step):
        fig.add_vline(predicted_step, log_axis=True, text=f"predicted best h ≈ {predicted_step:.2g}",
                      position=_beside(predicted_step, x_range, "top"), dash="dot", color=TRUTH)
    fig.add_vline(mark_step, log_axis=True, text=f"h = {mark_step:g}", position=_beside(mark_step, x_range, "bottom"),
                  dash="dash", color=MARK)
    fig.update_xaxes(**LOG_AXIS, range=x_range)
    fig.update_yaxes(**LOG_AXIS)
    return _layout(fig, "Error: round-off left, truncation right",
                   "step h", "|estimate − exact derivative|")


# ---------------------------------------------------------------- backward page


def jacobian_heatmap(matrix: np.ndarray, title: str, row_label: str = "y", col_label: str = "x") -> FigureOrSpec:
    """A small Jacobian with every entry written in its cell."""
    rows, cols = matrix.shape
    text = [[f"{v:.4g}" for v in row] for row in matrix]
    fig = FigureSpec()
    fig.add_trace(dict(
        type="heatmap", z=np.asarray(matrix), x=[f"{col_label}{j}" for j in range(cols)],
        y=[f"{row_label}{i}" for i in range(rows)],
        text=text, texttemplate="%{text}", colorscale=BLUES, showscale=False,
        hovertemplate="∂%{y}/∂%{x} = %{z:.6g}<extra></extra>",
    ))
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(height=max(180, 60 * rows + 90))
    return _layout(fig, title, "", "")


def weighted_rows_figure(table: pd.DataFrame, grad: tuple[float, ...]) -> FigureOrSpec:
    """Stacked bars: v_i times row i of J, per column; their sum is x.grad (diamonds)."""
    fig = FigureSpec()
    for row, part in table.groupby("row"):
        v = float(part["v"].iloc[0])
        fig.add_trace(dict(
            type="bar", x=[f"x{j}" for j in part["column"]], y=_array(part["weighted"]),
            name=f"v{row} · row {row} (v{row} = {v:g})", hovertemplate="%{y:.6g}<extra></extra>",
        ))
    fig.add_trace(dict(
        type="scatter", x=[f"x{j}" for j in range(len(grad))], y=list(grad), mode="markers",
        name="x.grad from backward(v)",
        marker=dict(symbol="diamond", size=14, color=NEUTRAL, line=dict(color=MARKER_OUTLINE, width=1)),
    ))
    fig.update_layout(barmode="relative")
    return _layout(fig, "vᵀJ is a weighted sum of the rows of J", "input entry", "contribution to x.grad")
