"""The one place that puts a Plotly figure on a page, so every chart behaves alike.

A figure shown on every rerun is best built once: :func:`prepare_figure` turns it
into the dict st.plotly_chart sends, and pages cache that (``st.cache_resource``,
shared read-only by every session) next to the result it draws.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import plotly.graph_objects as go
import streamlit as st
from plotly.basedatatypes import BaseFigure

from gradlab.figures.spec import specs_only

#: Modebar buttons that do nothing useful on GradLab's charts.
_REMOVED_BUTTONS = ("lasso2d", "select2d", "autoScale2d")


def _safe_filename(name: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return stem or "gradlab-figure"


def figure_config(name: str) -> dict[str, Any]:
    """The Plotly config every GradLab chart uses; ``name`` names the PNG download."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {
            "format": "png",
            "filename": _safe_filename(name),
            "scale": 2,
        },
        "modeBarButtonsToRemove": list(_REMOVED_BUTTONS),
        "scrollZoom": False,
        "responsive": True,
    }


class PreparedFigure(BaseFigure):
    """A figure reduced to the dict st.plotly_chart sends, computed once.

    st.plotly_chart takes ``fig.to_dict()`` of a Plotly figure without validating
    it again, and plotly.io.to_json then encodes that dict as it is; ``to_dict``
    deep-copies every trace and the template and base64-encodes the arrays, and
    plotly_chart calls it twice. For a figure drawn on every rerun those copies
    cost as much as building it (Round-off scatter: 14 ms a rerun). This object
    answers ``to_dict`` with the dict made once; it is read-only and holds
    nothing else (not even the figure: the dict is what the cache keeps).

    >>> prepared = prepare_figure(go.Figure, go.Scatter(x=[1, 2], y=[3, 4]))
    >>> prepared.to_dict()["data"][0]["type"], prepared.to_dict() is prepared.to_dict()
    ('scatter', True)
    """

    def __init__(self, spec: dict[str, Any]):  # noqa: D107 - no BaseFigure.__init__: no figure is built
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict[str, Any]:
        return self._spec

    def to_plotly_json(self) -> dict[str, Any]:
        return self._spec

    def __repr__(self) -> str:
        return f"PreparedFigure({len(self._spec.get('data', []))} traces)"


def prepare_figure(build: Callable[..., go.Figure], *args: Any, **kwargs: Any) -> PreparedFigure:
    """``build(*args, **kwargs)`` as st.plotly_chart will send it, for a page's figure cache.

    GradLab's plot functions assemble a FigureSpec; called here they hand over its
    dict directly (:func:`gradlab.figures.spec.specs_only`), and no ``go.Figure`` is built.
    """
    with specs_only():
        fig = build(*args, **kwargs)
    return PreparedFigure(fig.to_dict())


def show_figure(fig: go.Figure | PreparedFigure, name: str, key: str | None = None) -> None:
    """Display ``fig`` across the container's width with GradLab's chart config.

    ``name`` becomes the file name of the "download as PNG" button (made safe for a
    file system); ``key`` is needed only when two identical figures share a page.
    The chart uses ``theme="streamlit"`` so it follows the app's light/dark theme.
    """
    st.plotly_chart(
        fig,
        width="stretch",
        theme="streamlit",
        key=key,
        config=figure_config(name),
    )
