"""The Backward page's figures: a Jacobian as a heatmap, vᵀJ as weighted rows, .grad per entry.

Pure functions, tidy DataFrame -> Plotly figure; the page shows them with
:func:`gradlab.ui.figures.show_figure`.

>>> import numpy as np
>>> fig = jacobian_heatmap(np.eye(2), "J")
>>> fig.data[0].type
'heatmap'
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gradlab.figures.layout import BLUES, MAIN_CHART_HEIGHT, as_array, layout_below, plain_layout
from gradlab.figures.spec import LOG_AXIS, FigureOrSpec, FigureSpec
from gradlab.figures.style import FORMULA_A, GUIDE, MARKER_OUTLINE, NEUTRAL

__all__ = ["jacobian_heatmap", "weighted_rows_figure", "vjp_rows_figure", "FIRST_SCREEN_ROWS", "ROW_HEIGHT"]

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
    return plain_layout(fig, title, "", "")


def weighted_rows_figure(table: pd.DataFrame, grad: tuple[float, ...]) -> FigureOrSpec:
    """Stacked bars: v_i times row i of J, per column; their sum is x.grad (diamonds)."""
    fig = FigureSpec()
    for row, part in table.groupby("row"):
        v = float(part["v"].iloc[0])
        fig.add_trace(dict(
            type="bar", x=[f"x{j}" for j in part["column"]], y=as_array(part["weighted"]),
            name=f"v{row} · row {row} (v{row} = {v:g})", hovertemplate="%{y:.6g}<extra></extra>",
        ))
    fig.add_trace(dict(
        type="scatter", x=[f"x{j}" for j in range(len(grad))], y=list(grad), mode="markers",
        name="x.grad from backward(v)",
        marker=dict(symbol="diamond", size=14, color=NEUTRAL, line=dict(color=MARKER_OUTLINE, width=1)),
    ))
    fig.update_layout(barmode="relative")
    # Legend below: three entries above the plot overlapped the title on a 390 px phone.
    return layout_below(fig, "vᵀJ is a weighted sum of the rows of J", "input entry",
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
        type="scatter", x=as_array(jac), y=labels, mode="markers", name="∂yᵢ/∂inputᵢ (v = 1)",
        marker=dict(symbol="circle-open", size=11, color=NEUTRAL, line=dict(width=2)),
        hovertemplate="∂y/∂%{y} = %{x:.6g}<extra></extra>",
    ))
    fig.add_trace(dict(
        type="scatter", x=as_array(grad), y=labels, mode="markers+text", name=".grad from y.backward(v)",
        marker=dict(symbol="diamond", size=13, color=FORMULA_A, line=dict(color=MARKER_OUTLINE, width=1)),
        # Each value beside its diamond, on the side away from the circle: rows stay apart on a short chart.
        text=[f"{g:.4g}" for g in grad], textposition=["middle left" if g < j else "middle right"
                                                       for g, j in zip(grad, jac)], cliponaxis=False,
        customdata=as_array(v), hovertemplate="%{y}.grad = %{customdata:g} × ∂y/∂%{y} = %{x:.6g}<extra></extra>",
    ))
    # every entry labelled (a crowded category axis labels every other one: a presented chart shows
    # only a[2] and b[2])
    fig.update_yaxes(autorange="reversed", type="category", ticklabelposition="inside", showgrid=True,
                     tickmode="array", tickvals=labels, ticktext=labels)
    fig.update_xaxes(range=_rows_range(values[np.isfinite(values)], log_axis))
    if log_axis:
        fig.update_xaxes(**LOG_AXIS)
    # The question's nine entries fit MAIN_CHART_HEIGHT; more grow the chart below the first screen.
    height = MAIN_CHART_HEIGHT + ROW_HEIGHT * max(0, len(labels) - FIRST_SCREEN_ROWS)
    return layout_below(fig, ".grad = vᵢ × ∂yᵢ/∂inputᵢ", "value (log scale)" if log_axis else "value", "",
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
