"""A page's one engine call and its charts: a lab's view, computed once per settings and shared.

:func:`lab_view` runs a lab's ``view(settings)`` (a worker entry:
:func:`gradlab.server.worker_entries.worker_entry`) in a worker process through
:func:`gradlab.ui.worker_calls.heavy`, once per settings for every session, keyed by the settings'
text (:func:`gradlab.ui.cache_keys.settings_key`). The :class:`~gradlab.view.View` it returns is
shared read-only. :func:`warm_view` computes one into the same cache from a thread outside any
script run (:mod:`gradlab.ui.warm_views`). :func:`show_chart` draws one of its charts, built once
per settings and replayed on the next rerun (:func:`gradlab.ui.figures.replayed_chart`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Callable, TypeVar

import streamlit as st

from gradlab.limits import LIMITS
from gradlab.ui.cache_keys import settings_key
from gradlab.ui.figures import cached_figure, replayed_chart
from gradlab.ui.visitor_turns import turn_given_back
from gradlab.ui.worker_calls import heavy
from gradlab.view import Number, View

__all__ = ["lab_view", "view_key", "warm_view", "show_chart", "show_numbers", "replayed_section"]

S = TypeVar("S")

#: Seven labs of LIMITS.cache_entries settings each, as when each page had a cache of its own.
_ENTRIES = 8 * LIMITS.cache_entries


@st.cache_resource(max_entries=1, show_spinner=False)
def _computed() -> OrderedDict[tuple[str, str | bytes], None]:
    """The views computed in this process, newest last: a rerun that finds its view here draws no
    spinner (an element sent on every rerun otherwise; Streamlit's own shows only on a miss, but
    with one text for the whole cache). A cached resource itself, so the server's release of every
    cache (:mod:`gradlab.ui.runtime`) empties it with the views, whose next computation shows its
    spinner again."""
    return OrderedDict()


#: How many views this thread has computed (not found cached): :func:`warm_view` tells the two apart.
_THIS_THREAD = threading.local()


@st.cache_resource(max_entries=_ENTRIES, ttl=LIMITS.cache_seconds, show_spinner=False)
def _view(key: str | bytes, entry: str, _view_of: Callable[[S], View], _settings: S) -> View:
    view = heavy(_view_of, _settings)
    computed = _computed()
    computed[(entry, key)] = None
    while len(computed) > _ENTRIES:
        computed.popitem(last=False)
    _THIS_THREAD.computed = getattr(_THIS_THREAD, "computed", 0) + 1
    return view


def view_key(view_of: Callable[[S], View], settings: S) -> tuple[str, str | bytes]:
    """``(entry, key)``: what :func:`lab_view` caches ``view_of(settings)`` under, the entry's
    qualified name and the settings' text.

    >>> from gradlab.labs.summed import SummedLossSettings, view
    >>> view_key(view, SummedLossSettings()) == view_key(view, SummedLossSettings())
    True
    >>> view_key(view, SummedLossSettings())[0]
    'gradlab.labs.summed.page_view.view'
    """
    return f"{view_of.__module__}.{view_of.__qualname__}", settings_key(settings)


def lab_view(view_of: Callable[[S], View], settings: S, *, spinner: str = "Computing…") -> View:
    """``view_of(settings)`` in a worker, once per settings, shared read-only by every session.

    Keyed by the settings' text and the entry's name (every argument by name: Streamlit reads a
    signature again for each positional one). A GradLabError (a limit, a value out of range) is
    raised as it is, for the page's :func:`gradlab.ui.messages.stop_with_error`.
    """
    entry, key = view_key(view_of, settings)
    if (entry, key) in _computed():
        return _view(key=key, entry=entry, _view_of=view_of, _settings=settings)
    # Computed by this run, or by another session's at this moment, whose lock on the key this run
    # then waits for: either way without its visitor's turn (gradlab.ui.visitor_turns). Held, it
    # would keep the turn the computing run needs back when its worker is done, and both would
    # wait until one gave up after TURN_WAIT_SECONDS (a class opening the same preset links:
    # reruns of 10 s beside a p50 of 0.05 s).
    with st.spinner(spinner), turn_given_back():
        return _view(key=key, entry=entry, _view_of=view_of, _settings=settings)


def warm_view(view_of: Callable[[S], View], settings: S) -> bool:
    """``view_of(settings)`` put in :func:`lab_view`'s cache, nothing drawn (for a thread outside any
    script run); True if it was computed here, False if it was cached already. Raises as lab_view.

    >>> from gradlab.labs.summed import SummedLossSettings, view
    >>> settings = SummedLossSettings(shape=(3, 4))
    >>> warm_view(view, settings), warm_view(view, settings)
    (True, False)
    """
    before = getattr(_THIS_THREAD, "computed", 0)
    entry, key = view_key(view_of, settings)
    _view(key=key, entry=entry, _view_of=view_of, _settings=settings)
    return getattr(_THIS_THREAD, "computed", 0) > before


def show_chart(key: Hashable, view: View, name: str, file_name: str, **options) -> None:
    """``view.charts[name]`` drawn once per ``key`` (the page's settings) and then replayed.

    ``file_name`` names its PNG download; ``options`` are :func:`~gradlab.ui.figures.replayed_chart`'s
    (``height``, ``step``, ``chart_key``).
    """
    chart = view.charts[name]
    replayed_chart((key, name), file_name,
                   lambda: cached_figure((key, name), chart.build, *chart.args, **chart.kwargs), **options)


def show_numbers(numbers: tuple[Number, ...]) -> None:
    """A view's numbers as one row of metrics."""
    for column, number in zip(st.columns(len(numbers)), numbers):
        column.metric(number.label, number.value, help=number.help or None)


@st.cache_data(max_entries=_ENTRIES, ttl=LIMITS.cache_seconds, show_spinner=False)
def _replayed(key: str | bytes, name: str, _draw: Callable[[], None]) -> None:
    _draw()


def replayed_section(key: Hashable, name: str, draw: Callable[[], None]) -> None:
    """``draw()`` (elements, no widgets) run once per ``(key, name)``, then replayed from the cache.

    For what a page shows below its first screen: its tables (Arrow bytes) and charts (JSON,
    hashed into their element ids) are encoded once per settings instead of on every rerun.
    """
    _replayed(key=settings_key((key, name)), name=name, _draw=draw)
