"""The one place that puts a Plotly figure on a page, so every chart behaves alike.

A figure shown on every rerun is best built once: :func:`prepare_figure` turns it
into the dict st.plotly_chart sends, and pages cache that (``st.cache_resource``,
shared read-only by every session) next to the result it draws.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any, Callable

import plotly.graph_objects as go
import streamlit as st

from gradlab.figures.spec import FigureOrSpec, FigureSpec, specs_only
from gradlab.limits import LIMITS
from gradlab.ui.cache_keys import settings_key
from gradlab.ui.compat import PreparedFigure
from gradlab.figures.layout import for_presentation, readable
from gradlab.figures.step_slider import with_step
from gradlab.ui.page_chrome import main_chart_height, presenting_main_chart

__all__ = ["figure_config", "prepare_figure", "cached_figure", "show_figure", "replayed_chart", "PreparedFigure"]

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


def prepare_figure(build: Callable[..., FigureOrSpec | dict], *args: Any, **kwargs: Any) -> PreparedFigure:
    """``build(*args, **kwargs)`` as st.plotly_chart will send it, for a page's figure cache.

    GradLab's plot functions assemble a FigureSpec; called here they hand over that
    spec (:func:`gradlab.figures.spec.specs_only`) and its dict is taken, so no
    ``go.Figure`` is built. A builder that returns a ``go.Figure`` works too, and one that
    returns the figure's dict already (a spec's, changed after it was taken) is used as it is.

    >>> prepared = prepare_figure(go.Figure, go.Scatter(x=[1, 2], y=[3, 4]))
    >>> prepared.to_dict()["data"][0]["type"], prepared.to_dict() is prepared.to_dict()
    ('scatter', True)
    """
    with specs_only():
        fig = build(*args, **kwargs)
    if isinstance(fig, dict):
        return PreparedFigure(fig)
    # a spec built here is ours alone: its lists need no copy (a go.Figure's to_dict copies anyway)
    return PreparedFigure(fig.to_dict(consume=True) if isinstance(fig, FigureSpec) else fig.to_dict())


@st.cache_resource(max_entries=4 * LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False)
def _cached_figure(key: Hashable, builder: str, _build: Callable[..., FigureOrSpec], _args: tuple,
                   _kwargs: dict) -> PreparedFigure:
    return prepare_figure(_build, *_args, **_kwargs)


def cached_figure(key: Hashable, build: Callable[..., FigureOrSpec], *args: Any, **kwargs: Any) -> PreparedFigure:
    """:func:`prepare_figure` built once per ``(build, key)`` and shared read-only by every session.

    ``key`` must decide the arguments: a page's frozen settings (which decide its cached result)
    and the view options drawn from it. Only the key is hashed, never the tables the figure is
    drawn from, so a rerun that shows the same figure costs a dictionary look-up instead of
    building it.

    >>> a = cached_figure(("demo", 1), go.Figure, go.Scatter(x=[1, 2], y=[3, 4]))
    >>> a is cached_figure(("demo", 1), go.Figure, go.Scatter(x=[5], y=[6]))  # same key: same figure
    True
    >>> a is cached_figure(("demo", 2), go.Figure, go.Scatter(x=[5], y=[6]))
    False
    """
    # The key as its text and every argument by name: Streamlit hashes a settings object field by field
    # and reads the signature again for each positional argument (gradlab.ui.cache_keys).
    return _cached_figure(key=settings_key(key), builder=f"{build.__module__}.{build.__qualname__}", _build=build,
                          _args=args, _kwargs=kwargs)


def show_figure(fig: go.Figure | PreparedFigure, name: str, key: str | None = None,
                height: int | str | None = None, step: float | None = None) -> None:
    """Display ``fig`` across the container's width with GradLab's chart config.

    ``name`` becomes the file name of the "download as PNG" button (made safe for a
    file system); ``key`` is needed only when two identical figures share a page.
    The chart uses ``theme="streamlit"`` so it follows the app's light/dark theme;
    inside ``main_chart_box()`` in presentation mode it fills the enlarged box. ``height``
    overrides that (``"stretch"``: fill a box whose height the page's CSS sets). The main chart of a
    presented page has its text scaled with the page's larger type
    (:func:`gradlab.figures.layout.for_presentation`: ticks and annotations at least 20 px).
    ``step``: a figure with a step slider (built once per view, cached) is shown at the stop
    nearest it (:func:`gradlab.figures.step_slider.with_step`: a few dictionary copies a rerun).
    """
    config = figure_config(name)
    if presenting_main_chart():  # a projected chart: large text, no toolbar over its title
        fig = _presented(fig)
        config["displayModeBar"] = False
    else:  # ticks and legends as large as the page's text (the theme's default is 0.75 of it)
        fig = _readable(fig)
    if step is not None:
        fig = PreparedFigure(with_step(fig.to_dict(), step))
    st.plotly_chart(
        fig,
        width="stretch",
        height=main_chart_height() if height is None else height,
        theme="streamlit",
        key=key,
        config=config,
    )


@st.cache_data(max_entries=4 * LIMITS.cache_entries, ttl=LIMITS.cache_seconds, show_spinner=False)
def _replayed(key: str, name: str, presented: bool, _figure: Callable[[], go.Figure | PreparedFigure],
              _options: dict) -> None:
    show_figure(_figure(), name, **_options)


def replayed_chart(key: Hashable, name: str, figure: Callable[[], go.Figure | PreparedFigure], *,
                   chart_key: str | None = None, height: int | str | None = None, step: float | None = None) -> None:
    """:func:`show_figure` of ``figure()`` drawn once per ``(key, name)`` and presentation, then replayed.

    st.plotly_chart encodes a chart to JSON and hashes it into its element id on every call; from
    st.cache_data the recorded element is sent again instead, and ``figure`` (a look-up in the page's
    caches) is not even called. ``key`` must decide the figure (a page's frozen settings, and any view
    option drawn on it); ``name`` names the chart (its PNG download) and tells a page's charts apart.
    The main chart of a presented page is drawn larger (:func:`show_figure`), so that is in the key too,
    as are show_figure's ``chart_key`` (its ``key``), ``height`` and ``step`` (a chart with a step
    slider: one recording per step shown, so its 51-61 frames are not encoded again on every rerun).

    >>> calls = []
    >>> def drawn():
    ...     calls.append(1)
    ...     return go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    >>> replayed_chart(("demo", 1), "demo-chart", drawn); replayed_chart(("demo", 1), "demo-chart", drawn)
    >>> len(calls)  # the second call replayed the first one's chart
    1
    >>> replayed_chart(("demo", 1), "demo-chart", drawn, step=2e-3); len(calls)  # another step: drawn anew
    2
    >>> replayed_chart(("demo", 1), "demo-chart", drawn, step=2e-3); len(calls)
    2
    """
    options = {"key": chart_key, "height": height, "step": step}
    _replayed(key=settings_key((key, tuple(options.values()))), name=name, presented=presenting_main_chart(),
              _figure=figure, _options=options)


def _presented(fig: go.Figure | PreparedFigure) -> PreparedFigure:
    """``fig`` with presentation mode's large text (:func:`_copied`)."""
    return _copied(fig, "_presented", for_presentation)


def _readable(fig: go.Figure | PreparedFigure) -> PreparedFigure:
    """``fig`` with no text a reader needs under the body text's size (gradlab.figures.layout.readable)."""
    return _copied(fig, "_readable", readable)


def _copied(fig: go.Figure | PreparedFigure, name: str, change: Callable[[dict], dict]) -> PreparedFigure:
    """``change`` of ``fig``'s dict; a cached figure keeps the copy under ``name``, so a rerun does
    not copy its layouts again (the Grid's chart has 61 frames)."""
    if not isinstance(fig, PreparedFigure):
        return PreparedFigure(change(fig.to_dict()))
    copy = fig.__dict__.get(name)
    if copy is None:
        copy = PreparedFigure(change(fig.to_dict()))
        object.__setattr__(fig, name, copy)  # read-only otherwise; the same copy for every session
    return copy
