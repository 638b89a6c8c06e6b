"""A Plotly figure built as plain dicts and turned into a ``go.Figure`` once, unvalidated.

Plotly validates every property on every ``add_*`` and ``update_*`` call: a
small chart with a few reference lines costs 20-100 ms that way, a quarter of the
server's time on the teaching pages under a class of thirty tabs. Building dicts and constructing the
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
>>> f = fig.to_figure()
>>> f.layout.shapes[0].x0, f.layout.annotations[0].x, f.layout.annotations[0].xanchor
(0.01, -2.0, 'right')

A page that only sends a figure to the browser needs its dict, not a
``go.Figure``. GradLab's plot functions end with ``return fig.figure()``, and
:meth:`FigureSpec.figure` returns a ``go.Figure`` *except inside*
:func:`specs_only`, where it returns the FigureSpec itself: so a plot function
returns :data:`FigureOrSpec`, and a caller inside ``specs_only()`` gets a spec
(use ``.to_dict()``, which both types have). :meth:`FigureSpec.to_dict` gives what
``to_figure().to_dict()`` would, without building the figure or deep-copying it
(each of the two is about a third of the cost of sending the Round-off lab's
scatter). Code that needs a ``go.Figure`` whatever the context calls
:meth:`FigureSpec.to_figure`.

Side-by-side panels sharing one y axis (what ``make_subplots(cols=n,
shared_yaxes=True)`` draws) come from :meth:`FigureSpec.side_by_side`; a trace
goes into a panel with ``xaxis=<its id>``, a line with ``add_hline(..., xaxis=<its id>)``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Union

from gradlab.compat import encode_typed_arrays, unvalidated_figure

__all__ = ["FigureSpec", "FigureOrSpec", "LOG_AXIS", "specs_only"]

if TYPE_CHECKING:  # Plotly is the web lab's: a lab's figures module imports without it (NO_PLOTLY)
    import plotly.graph_objects as go

_SPECS_ONLY = contextvars.ContextVar("gradlab_specs_only", default=False)


@contextlib.contextmanager
def specs_only() -> Iterator[None]:
    """Within it (in this thread and context), :meth:`FigureSpec.figure` returns the spec itself.

    For callers that send a plot function's figure as a dict
    (:func:`gradlab.ui.figures.prepare_figure`): the plot functions need no
    second variant, and nothing outside the block changes.

    >>> def plot():
    ...     fig = FigureSpec()
    ...     fig.add_trace({"type": "bar", "y": [1, 2]})
    ...     return fig.figure()
    >>> with specs_only():
    ...     type(plot()).__name__
    'FigureSpec'
    >>> type(plot()).__name__
    'Figure'
    """
    token = _SPECS_ONLY.set(True)
    try:
        yield
    finally:
        _SPECS_ONLY.reset(token)


def _default_template() -> dict:
    """The template ``go.Figure`` writes into every layout now, as a dict (built once per name:
    importing Streamlit's chart element makes its own template the default)."""
    import plotly.io as pio

    return _template(pio.templates.default)


@functools.cache
def _template(name: str) -> dict:
    import plotly.graph_objects as go

    return go.Figure().to_dict()["layout"]["template"]


def _copy_containers(value):
    """A copy of the dicts and lists (what encode_typed_arrays rewrites), sharing the arrays."""
    if isinstance(value, dict):
        return {k: _copy_containers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_containers(v) if isinstance(v, (dict, list, tuple)) else v for v in value]
    return value


#: A layout key naming an x axis (xaxis, xaxis2, ...) or a y axis.
_AXIS_KEYS = {letter: re.compile(letter + r"axis\d*") for letter in "xy"}

#: GradLab's log axes: ticks as powers of ten (1e-08 reads badly on a projector).
LOG_AXIS = {"type": "log", "exponentformat": "power", "showexponent": "all"}
#: Plotly's font size for subplot titles (make_subplots).
PANEL_TITLE_SIZE = 16


def _anchor(position: str) -> tuple[str, str]:
    """'top left' -> ('top', 'left'): which side of the line the label sits on."""
    vertical, horizontal = position.split()
    return vertical, horizontal


def _font(font: dict | None) -> dict:
    """The label's font as annotation properties: none given, plotly's default."""
    return {} if font is None else {"font": font}


class FigureSpec:
    """A figure as plain dicts: traces, layout, shapes and annotations."""

    def __init__(self) -> None:
        self.data: list[dict] = []
        self.layout: dict = {"shapes": [], "annotations": [], "xaxis": {}, "yaxis": {}}
        self.frames: list[dict] = []  # animation frames (a slider's stops), sent only when there are some

    def add_trace(self, trace: dict) -> None:
        self.data.append(trace)

    def add_traces(self, traces: Sequence[dict]) -> None:
        self.data.extend(traces)

    def add_shape(self, **shape) -> None:
        self.layout["shapes"].append(shape)

    def add_annotation(self, **annotation) -> None:
        self.layout["annotations"].append(annotation)

    def _update_axes(self, letter: str, axis: dict) -> None:
        pattern = _AXIS_KEYS[letter]
        for key in self.layout:
            if pattern.fullmatch(key):
                self.layout[key].update(axis)

    def update_xaxes(self, **axis) -> None:
        """Set properties on every x axis (all panels), as plotly's ``update_xaxes`` does."""
        self._update_axes("x", axis)

    def update_yaxes(self, **axis) -> None:
        """Set properties on every y axis, as plotly's ``update_yaxes`` does."""
        self._update_axes("y", axis)

    def side_by_side(self, titles: Sequence[str], spacing: float | None = None) -> list[str]:
        """Split the width into one panel per title, all sharing the y axis; return their x axis ids.

        Panel i is x axis ``ids[i]`` ('x', 'x2', ...) over its own slice of the width
        (``domain``), anchored to the one y axis: the panels share y's range, type and
        title, and y's tick labels are drawn once, on the left. Slices and titles are
        placed as ``make_subplots(rows=1, cols=n, shared_yaxes=True, subplot_titles=titles,
        horizontal_spacing=spacing)`` places them; ``spacing`` (a fraction of the width,
        default 0.2/n as there) separates the panels. No titles, no panels.

        >>> fig = FigureSpec()
        >>> fig.side_by_side(["a", "b"], spacing=0.1)
        ['x', 'x2']
        >>> fig.layout["xaxis2"], [a["x"] for a in fig.layout["annotations"]]
        ({'anchor': 'y', 'domain': [0.55, 1.0]}, [0.225, 0.775])
        """
        n = len(titles)
        if n == 0:
            return []
        spacing = 0.2 / n if spacing is None else spacing
        width = (1 - spacing * (n - 1)) / n
        ids = ["x"] + [f"x{i}" for i in range(2, n + 1)]
        self.layout["yaxis"]["anchor"] = "x"
        for i, (axis_id, title) in enumerate(zip(ids, titles, strict=True)):
            start = i * (width + spacing)
            self.layout.setdefault("xaxis" + axis_id[1:], {}).update(anchor="y", domain=[start, start + width])
            self.add_annotation(x=start + width / 2, xref="paper", y=1, yref="paper", xanchor="center",
                                yanchor="bottom", text=title, showarrow=False, font={"size": PANEL_TITLE_SIZE})
        return ids

    def update_layout(self, **layout) -> None:
        self.layout.update(layout)

    def add_vline(self, x: float, *, log_axis: bool = False, text: str | None = None,
                  position: str = "top right", xaxis: str = "x", font: dict | None = None, **line) -> None:
        """A vertical line across the plot at data x, with an optional label beside it.

        ``position`` is 'top'/'bottom' and the side of the line ('left'/'right');
        ``xaxis`` is the panel's x axis (see :meth:`side_by_side`); ``font`` is the
        label's; ``line`` holds the line's properties (color, dash, width).
        """
        self.add_shape(type="line", xref=xaxis, yref="y domain", x0=x, x1=x, y0=0, y1=1, line=line)
        if text is not None:
            vertical, side = _anchor(position)
            self.add_annotation(
                x=math.log10(x) if log_axis else x, xref=xaxis, y=1 if vertical == "top" else 0,
                yref="y domain", xanchor="right" if side == "left" else "left",
                yanchor=vertical, text=text, showarrow=False, **_font(font))

    def add_hline(self, y: float, *, log_axis: bool = False, text: str | None = None,
                  position: str = "bottom left", xaxis: str = "x", font: dict | None = None, **line) -> None:
        """A horizontal line across the panel of ``xaxis`` at data y, with an optional label at one end."""
        self.add_shape(type="line", xref=f"{xaxis} domain", yref="y", x0=0, x1=1, y0=y, y1=y, line=line)
        if text is not None:
            vertical, side = _anchor(position)
            self.add_annotation(
                x=0 if side == "left" else 1, xref=f"{xaxis} domain", y=math.log10(y) if log_axis else y,
                yref="y", xanchor=side, yanchor="top" if vertical == "bottom" else "bottom",
                text=text, showarrow=False, **_font(font))

    def figure(self) -> "FigureOrSpec":
        """What a plot function returns: :meth:`to_figure`, or inside :func:`specs_only` this spec."""
        if _SPECS_ONLY.get():
            return self
        return self.to_figure()

    def to_figure(self) -> go.Figure:
        """The ``go.Figure`` this spec describes, built once without validation."""
        fig = unvalidated_figure(self.data, self.layout)
        if self.frames:
            fig.update(frames=self.frames)
        return fig

    def to_dict(self, *, consume: bool = False) -> dict:
        """What ``self.to_figure().to_dict()`` returns, without building the figure.

        The layout gets plotly's default template and numeric arrays become
        base64 typed arrays, as there; the spec itself is left unchanged, unless
        ``consume``: a caller that drops the spec takes its containers as they are
        (copying every list of a figure with frames costs a third of building the
        Explorer's chart) and must not use the spec again.

        >>> fig = FigureSpec()
        >>> fig.add_trace({"type": "bar", "y": [1, 2]})
        >>> fig.to_dict() == fig.to_figure().to_dict()
        True
        >>> expected = fig.to_dict(); fig.to_dict(consume=True) == expected
        True
        """
        copy = (lambda value: value) if consume else _copy_containers
        out = {"data": copy(self.data), "layout": dict(copy(self.layout))}
        if self.frames:
            out["frames"] = copy(self.frames)
        encode_typed_arrays(out)
        out["layout"]["template"] = _default_template()  # plotly's own dict: its arrays are typed already
        return out


#: What a plot function returns: a ``go.Figure``, or its FigureSpec inside :func:`specs_only`.
FigureOrSpec = Union["go.Figure", FigureSpec]
