"""The layout the Network and Backward pages' figures share: a main chart's height, the legend
below the plot, log ranges and labels placed where they are not clipped.

>>> LEGEND_BELOW["orientation"], MAIN_CHART_HEIGHT
('h', 370)
>>> beside(1e-2, [-6.0, 0.0], "top")
'top left'
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gradlab.figures.spec import FigureOrSpec, FigureSpec
from gradlab.figures.style import HEATMAP_COLOURSCALE

__all__ = ["MAIN_CHART_HEIGHT", "LEGEND_BELOW", "BLUES", "log_range", "beside", "as_array", "plain_layout",
           "layout_below"]

#: The height (px) of each page's main chart (the staircase, the .grad rows): all of it, legend
#: included, on a 1280x720 first screen under the title row, one row of controls and the answer.
MAIN_CHART_HEIGHT = 370

#: The one dark-safe sequential scale (gradlab.figures.style), as [position, colour] pairs.
BLUES = [list(stop) for stop in HEATMAP_COLOURSCALE]


def log_range(values: pd.Series) -> list[float]:
    """An explicit log-axis range over the data (annotations must not stretch it)."""
    return [float(np.log10(values.min())), float(np.log10(values.max()))]


def beside(x: float, x_range: list[float], vertical: str) -> str:
    """Label position for a vertical line at x: on the side with more room, so it is not clipped."""
    middle = (x_range[0] + x_range[1]) / 2
    return f"{vertical} {'left' if np.log10(x) > middle else 'right'}"


def as_array(values) -> np.ndarray:
    """Plain numpy for the unvalidated figure (plotly's JSON encoder takes numpy as is)."""
    return np.asarray(values)


def plain_layout(fig: FigureSpec, title: str, x_title: str, y_title: str) -> FigureOrSpec:
    """Title at the left, legend above the plot at the right, small margins."""
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left"),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1),
        margin=dict(l=10, r=10, t=70, b=10), hovermode="closest",
    )
    fig.update_xaxes(title=dict(text=x_title))
    fig.update_yaxes(title=dict(text=y_title))
    return fig.figure()


#: Legend under the plot, in rows: at 390 px a legend beside the plot leaves it no room. Anchored to the
#: figure's bottom edge (``yref="container"``), so the plot area makes room for it whatever the figure's
#: height and the rows it wraps into; a distance below the plot area (``y=-0.22``) would overlap the
#: x axis title in a chart short enough for a projector's first screen.
LEGEND_BELOW = dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0)


def layout_below(fig: FigureSpec, title: str, x_title: str, y_title: str, height: int,
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
