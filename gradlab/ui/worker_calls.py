"""How a page runs heavy engine work: in a worker process, keyed by this session, within its limit.

What the heavy work is (a function, its time limit and forecast) its lab says where it defines
it (:func:`gradlab.server.worker_entries.worker_entry`); this module is the page's side of the call.

``heavy(fn, *args)`` runs such a function
through :func:`gradlab.server.pool.run_limited` within its limit
(``fn.worker_entry``), keyed by this Streamlit session
and admitted per visitor (its address and browser: :mod:`gradlab.server.visitors`), so a
newer rerun of the same session ends the older one's work, as does a
pending rerun or stop of this script run: Streamlit stops the run of a session
whose tab disconnects, so a reload (a new session in the same tab) ends the old
one's work too. Over a limit the worker is killed and a LimitError names the
limit: the page shows it like any other. A call its function forecasts
(``forecast_seconds``) past the pool's ``LONG_CALL_SECONDS`` starts in the pool's
long lane, leaving the short one to cheap calls (:mod:`gradlab.server.lanes`).

Why not a key per browser (a cookie), so that a reload ends the old tab's work
by the key alone: two tabs of one browser are two views that may both compute
(a projector's tab and a student's own), and a cookie is whatever the client
sends; the disconnect is what a reload always does.

>>> from gradlab.labs.explorer import formulas
>>> heavy(formulas, "sin(x)")
('\\\\sin{\\\\left(x \\\\right)}', '\\\\cos{\\\\left(x \\\\right)}')

``heavy_with_progress(fn, *args, progress=...)`` is the same call cached for every
session, for work that draws a progress bar while it runs (see its docstring).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable, Hashable

import streamlit as st

from gradlab.limits import LIMITS
from gradlab.server.pool import LONG_CALL_SECONDS, run_limited
from gradlab.ui.compat import run_will_be_interrupted, session_id
from gradlab.ui.visitor_turns import current_visitor, turn_given_back

__all__ = ["heavy", "heavy_with_progress"]


def heavy(fn: Callable, *args, progress: Callable[[int, int], None] | None = None, **kwargs):
    """``fn(*args, **kwargs)`` in a worker, within its worker entry's limit; see the module docstring."""
    entry = fn.worker_entry  # gradlab.server.worker_entries.worker_entry marked it
    session = session_id()
    forecast = getattr(fn, "forecast_seconds", None)
    with turn_given_back():  # waiting on a worker uses no CPU here: the visitor's other tabs may run
        return run_limited(fn, *args, seconds=entry.seconds(), what=entry.what, limit_name=entry.limit_name,
                           session=session, cancelled=run_will_be_interrupted if session else None,
                           progress=progress, long=forecast is not None and forecast(*args) >= LONG_CALL_SECONDS,
                           visitor=current_visitor(), **kwargs)


class _Results:
    """A size- and time-limited map of finished results, safe across sessions' threads."""

    def __init__(self, entries: int, seconds: float) -> None:
        self._entries, self._seconds = entries, seconds
        self._items: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable):
        with self._lock:
            item = self._items.get(key)
            if item is None or time.monotonic() - item[0] > self._seconds:
                self._items.pop(key, None)
                return None
            self._items.move_to_end(key)
            return item[1]

    def put(self, key: Hashable, value: object) -> None:
        with self._lock:
            self._items[key] = (time.monotonic(), value)
            self._items.move_to_end(key)
            while len(self._items) > self._entries:
                self._items.popitem(last=False)


@st.cache_resource(max_entries=1, show_spinner=False)
def _progress_results() -> _Results:
    # A cache_resource, so the server's cache release (gradlab.ui.runtime) empties it too.
    return _Results(LIMITS.cache_entries_large, LIMITS.cache_seconds)


def heavy_with_progress(fn: Callable, *args, progress: Callable[[int, int], None]):
    """``heavy(fn, *args, progress=progress)``, its result kept for every session.

    ``st.cache_data`` cannot hold such a call: it records the progress bar's updates
    made inside it and replays them in the next session's run, where that bar does
    not exist (``CacheReplayClosureError``: a second visitor's full check failed).
    Here nothing drawn is recorded; only the finished result is kept, keyed by
    ``(fn, *args)`` (plain, hashable settings), and is shared, not copied: treat it
    as read-only.
    """
    key = (fn.__module__, fn.__qualname__, *args)
    results = _progress_results()
    result = results.get(key)
    if result is None:
        result = heavy(fn, *args, progress=progress)
        results.put(key, result)
    return result
