"""The Grad check page's function check in a worker, a full check with its progress bar.

A full check perturbs every element (up to ``LIMITS.full_check_elements``, seconds of work), so it
draws a progress bar while it runs: :func:`gradlab.ui.worker_calls.heavy_with_progress` keeps its
finished view for every session (``st.cache_data`` would replay the bar's updates into another
session's run, where that bar does not exist). Any other mode is one :func:`gradlab.ui.views.lab_view`.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import streamlit as st

from gradlab.ui.runtime import CHECK_WORKERS
from gradlab.ui.views import lab_view
from gradlab.ui.worker_calls import heavy_with_progress
from gradlab.view import View

__all__ = ["checked_view", "PROGRESS_STEPS"]

S = TypeVar("S")

#: Redraws of the progress bar per full check.
PROGRESS_STEPS = 50


def checked_view(view_of: Callable[..., View], settings: S) -> View:
    """``view_of(settings)`` once per settings, a full check (``settings.mode``) drawing its progress;
    the bar is gone once it ends, also when the check was stopped (its message takes the place)."""
    if settings.mode != "full":
        return lab_view(view_of, settings, spinner="Checking…")
    bar = st.progress(0.0, text="Full check: perturbing every element…")
    last = {"shown": -1}

    def progress(done: int, total: int) -> None:
        step = int(PROGRESS_STEPS * done / max(total, 1))
        if step != last["shown"]:
            last["shown"] = step
            bar.progress(done / max(total, 1), text=f"Full check: {done:,} of {total:,} elements")

    try:
        return heavy_with_progress(view_of, settings, CHECK_WORKERS, progress=progress)
    finally:
        bar.empty()
