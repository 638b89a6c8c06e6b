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

from gradlab.figures.spec import LOG_AXIS, FigureOrSpec, FigureSpec
from gradlab.figures.style import FORMULA_A, FORMULA_B, GUIDE, HEATMAP_COLOURSCALE, MARK, MARKER_OUTLINE, NEUTRAL, TRUTH
from gradlab.literal_text import plotly_literal

__all__ = [
    "MAIN_CHART_HEIGHT",
    "staircase_figure",
    "step_error_figure",
    "jacobian_heatmap",
    "weighted_rows_figure",
    "vjp_rows_figure",
]

#: Curves k*q drawn on the staircase: the multiples nearest the truth, each side.
STAIR_MULTIPLES = 4
#: The height (px) of each page's main chart (the staircase, the .grad rows): all of it, legend
#: included, on a 1280x720 first screen under the title row, one row of controls and the answer.
MAIN_CHART_HEIGHT = 370

#: The one dark-safe sequential scale (gradlab.figures.style), as [position, colour] pairs.
BLUES = [list(stop) for stop in HEATMAP_COLOURSCALE]


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

#: Legend under the plot, in rows: at 390 px a legend beside the plot leaves it no room. Anchored to the
#: figure's bottom edge (``yref="container"``), so the plot area makes room for it whatever the figure's
#: height and the rows it wraps into; a distance below the plot area (``y=-0.22``) would overlap the
#: x axis title in a chart short enough for a projector's first screen.
LEGEND_BELOW = dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0)


def _layout_below(fig: FigureSpec, title: str, x_title: str, y_title: str, height: int,
                  inside_y_ticks: bool = False, y_nticks: int | None = 6) -> FigureOrSpec:
    """The Network and Backward figures' layout: legend below, few ticks, margins that grow to fit.

    ``inside_y_ticks`` writes the y tick labels inside the plot, above their grid lines:
    on a 390 px phone the 40 px they take outside are what keeps the plot 300 px wide.
    """
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left"), legend=LEGEND_BELOW, height=height,
        margin=dict(l=0, r=0, t=50, b=10), hovermode="closest",
    )
    fig.update_xaxes(title=dict(text=x_title), automargin=True, nticks=6)
    fig.update_yaxes(title=dict(text=y_title), automargin=True)
    if y_nticks:
        fig.update_yaxes(nticks=y_nticks)
    if inside_y_ticks:
        fig.update_yaxes(ticklabelposition="inside top")
    return fig.figure()


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
        type="scatter", x=_array(table["step"]), y=_array(table["estimate"]), mode="markers+lines",
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
    x_range = _log_range(table["step"])
    fig.add_vline(mark_step, log_axis=True, text=f"dx = {mark_step:g}", position=_beside(mark_step, x_range, "top"),
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
    return _layout_below(fig, "Estimates of ∂y/∂x = k · ulp(y)/(2h)", "step h", "", MAIN_CHART_HEIGHT,
                         inside_y_ticks=True)


def _staircase_range(reference: float, quantum: float, estimate: float | None, autograd: float) -> list[float]:
    """The y range: the exact value, the marked estimate and 0, with one and a half quanta to spare."""
    shown = [reference, 0.0] + ([estimate] if estimate is not None and np.isfinite(estimate) else [])
    spare = max(1.5 * quantum, 0.25 * abs(autograd)) if np.isfinite(quantum) else 0.25 * abs(autograd)
    spare = spare or 1.0
    return [min(shown) - spare, max(shown) + spare]


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
        fig.add_vline(predicted_step, log_axis=True, text=f"best h ≈ {predicted_step:.2g}",
                      position=_beside(predicted_step, x_range, "top"), dash="dot", color=TRUTH)
    fig.add_vline(mark_step, log_axis=True, text=f"h = {mark_step:g}", position=_beside(mark_step, x_range, "bottom"),
                  dash="dash", color=MARK)
    fig.update_xaxes(**LOG_AXIS, range=x_range)
    fig.update_yaxes(**LOG_AXIS)
    return _layout_below(fig, "|error|: round-off left, truncation right", "step h", "", 400, inside_y_ticks=True)


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
    # Legend below: three entries above the plot overlapped the title on a 390 px phone.
    return _layout_below(fig, "vᵀJ is a weighted sum of the rows of J", "input entry",
                         "contribution to x.grad", 460)


def vjp_rows_figure(table: pd.DataFrame) -> FigureOrSpec:
    """One row per entry: ∂yᵢ/∂inputᵢ (what v = 1 gives) and .grad = vᵢ · ∂yᵢ/∂inputᵢ from backward(v).

    Rows instead of columns, so nine entries fit a phone's width; the .grad value is
    written beside its marker, on the side away from ∂yᵢ/∂inputᵢ (rows stay apart on a
    chart short enough for a projector's first screen). A log axis when every value is
    positive (v spans decades), a linear one otherwise. The entry names sit inside the plot, left of
    the data (the x range leaves them room), so a 390 px phone keeps 300 px of plot.
    """
    labels = [f"{name}[{i}]" for name, i in zip(table["input"], table["i"])]
    jac, grad, v = (table[c].to_numpy(dtype=float) for c in ("jacobian", "grad", "v"))
    values = np.concatenate([jac, grad])
    log_axis = bool(np.all(values > 0) and np.all(np.isfinite(values)))
    segments_x = [p for a, b in zip(jac, grad) for p in (a, b, None)]
    segments_y = [p for label in labels for p in (label, label, None)]
    fig = FigureSpec()
    fig.add_trace(dict(type="scatter", x=segments_x, y=segments_y, mode="lines", name="× vᵢ",
                       line=dict(color=GUIDE, width=2), hoverinfo="skip"))
    fig.add_trace(dict(
        type="scatter", x=_array(jac), y=labels, mode="markers", name="∂yᵢ/∂inputᵢ (v = 1)",
        marker=dict(symbol="circle-open", size=11, color=NEUTRAL, line=dict(width=2)),
        hovertemplate="∂y/∂%{y} = %{x:.6g}<extra></extra>",
    ))
    fig.add_trace(dict(
        type="scatter", x=_array(grad), y=labels, mode="markers+text", name=".grad from y.backward(v)",
        marker=dict(symbol="diamond", size=13, color=FORMULA_A, line=dict(color=MARKER_OUTLINE, width=1)),
        # Each value beside its diamond, on the side away from the circle: rows stay apart on a short chart.
        text=[f"{g:.4g}" for g in grad], textposition=["middle left" if g < j else "middle right"
                                                       for g, j in zip(grad, jac)], cliponaxis=False,
        customdata=_array(v), hovertemplate="%{y}.grad = %{customdata:g} × ∂y/∂%{y} = %{x:.6g}<extra></extra>",
    ))
    fig.update_yaxes(autorange="reversed", type="category", ticklabelposition="inside", showgrid=True)
    fig.update_xaxes(range=_rows_range(values[np.isfinite(values)], log_axis))
    if log_axis:
        fig.update_xaxes(**LOG_AXIS)
    # The question's nine entries fit MAIN_CHART_HEIGHT; more grow the chart below the first screen.
    height = MAIN_CHART_HEIGHT + ROW_HEIGHT * max(0, len(labels) - FIRST_SCREEN_ROWS)
    return _layout_below(fig, ".grad = vᵢ × ∂yᵢ/∂inputᵢ", "value (log scale)" if log_axis else "value", "",
                         height, y_nticks=None)


#: The .grad rows chart: entries that fit MAIN_CHART_HEIGHT (a, b and c of three), and the height (px)
#: each further entry adds (its value is written beside its marker).
FIRST_SCREEN_ROWS, ROW_HEIGHT = 9, 26
#: Room left of the data for the entry names written inside the plot, as a share of the data's span.
ROW_LABEL_ROOM = 0.22


def _rows_range(values: np.ndarray, log_axis: bool) -> list[float]:
    """The x range of the rows figure: the data, room for the names on the left, room on the right for
    a value written beside the rightmost marker."""
    if not values.size:
        return [0.0, 1.0]
    low, high = (np.log10(values.min()), np.log10(values.max())) if log_axis else (values.min(), values.max())
    span = (high - low) or 1.0
    return [float(low - ROW_LABEL_ROOM / (1 - ROW_LABEL_ROOM) * span - 0.05 * span), float(high + 0.15 * span)]
