"""A Plotly figure built as plain dicts and turned into a ``go.Figure`` once, unvalidated.

Plotly validates every property on every ``add_*`` and ``update_*`` call: a
small chart with a few reference lines costs 20-100 ms that way, which under a
class of thirty tabs was a quarter of the server's time on the teaching pages
(a py-spy profile under the load test). Building dicts and constructing the
figure once without validation takes about a millisecond. The tests re-validate
every figure (``go.Figure(fig.to_plotly_json())``), so a misspelt property still
fails there.

Plotly quirk handled here: on a log axis *shapes* take data coordinates but
*annotations* take log10 coordinates, so :meth:`FigureSpec.add_vline` and
:meth:`FigureSpec.add_hline` need to know whether their axis is logarithmic
(plotly's own ``add_vline(annotation_text=...)`` puts the label at 10**x there).

>>> fig = FigureSpec()
>>> fig.add_trace({"type": "scatter", "x": [1e-3, 1e-1], "y": [1, 2]})
>>> fig.add_vline(1e-2, log_axis=True, text="h = 0.01", position="top left")
>>> fig.update_xaxes(type="log")
>>> f = fig.figure()
>>> f.layout.shapes[0].x0, f.layout.annotations[0].x, f.layout.annotations[0].xanchor
(0.01, -2.0, 'right')
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

__all__ = ["FigureSpec"]


def _anchor(position: str) -> tuple[str, str]:
    """'top left' -> ('top', 'left'): which side of the line the label sits on."""
    vertical, horizontal = position.split()
    return vertical, horizontal


class FigureSpec:
    """A figure as plain dicts: traces, layout, shapes and annotations."""

    def __init__(self) -> None:
        self.data: list[dict] = []
        self.layout: dict = {"shapes": [], "annotations": [], "xaxis": {}, "yaxis": {}}

    def add_trace(self, trace: dict) -> None:
        self.data.append(trace)

    def add_traces(self, traces: Sequence[dict]) -> None:
        self.data.extend(traces)

    def add_shape(self, **shape) -> None:
        self.layout["shapes"].append(shape)

    def add_annotation(self, **annotation) -> None:
        self.layout["annotations"].append(annotation)

    def update_xaxes(self, **axis) -> None:
        self.layout["xaxis"].update(axis)

    def update_yaxes(self, **axis) -> None:
        self.layout["yaxis"].update(axis)

    def update_layout(self, **layout) -> None:
        self.layout.update(layout)

    def add_vline(self, x: float, *, log_axis: bool = False, text: str | None = None,
                  position: str = "top right", **line) -> None:
        """A vertical line across the plot at data x, with an optional label beside it.

        ``position`` is 'top'/'bottom' and the side of the line ('left'/'right');
        ``line`` holds the line's properties (color, dash, width).
        """
        self.add_shape(type="line", xref="x", yref="y domain", x0=x, x1=x, y0=0, y1=1, line=line)
        if text is not None:
            vertical, side = _anchor(position)
            self.add_annotation(
                x=math.log10(x) if log_axis else x, xref="x", y=1 if vertical == "top" else 0,
                yref="y domain", xanchor="right" if side == "left" else "left",
                yanchor=vertical, text=text, showarrow=False)

    def add_hline(self, y: float, *, log_axis: bool = False, text: str | None = None,
                  position: str = "bottom left", **line) -> None:
        """A horizontal line across the plot at data y, with an optional label at one end."""
        self.add_shape(type="line", xref="x domain", yref="y", x0=0, x1=1, y0=y, y1=y, line=line)
        if text is not None:
            vertical, side = _anchor(position)
            self.add_annotation(
                x=0 if side == "left" else 1, xref="x domain", y=math.log10(y) if log_axis else y,
                yref="y", xanchor=side, yanchor="top" if vertical == "bottom" else "bottom",
                text=text, showarrow=False)

    def figure(self) -> go.Figure:
        return go.Figure(data=self.data, layout=self.layout, _validate=False)
