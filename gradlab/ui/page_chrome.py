"""What every page does first, in one plain module.

Each script in ``pages/`` starts with::

    from gradlab.ui.page_chrome import ensure_router
    ensure_router()
"""

from __future__ import annotations

import streamlit as st

from gradlab.ui.compat import leave_legacy_pages_mode


def ensure_router() -> None:
    """Make sure this page runs under ``app.py``'s ``st.navigation``; call it first in every page.

    Streamlit 1.67 quirk: while no session has run ``st.navigation`` yet, a
    server whose entry point sits next to a ``pages/`` directory treats the app
    as an old-style multipage app. If the first visit after a (re)start is a
    shared deep link such as ``/explorer?...``, Streamlit runs
    ``pages/explorer.py`` directly: no ``st.set_page_config``, a sidebar listing
    "app", and the mode sticks for every session until someone opens ``/``.
    This switches the server to ``st.navigation`` mode
    (:func:`gradlab.ui.compat.leave_legacy_pages_mode`) and reruns, so the same
    URL (and its query parameters) is served through ``app.py``.
    """
    if leave_legacy_pages_mode():
        st.rerun()


#: Keys of the two elements every page puts on its first screen; browser tests find
#: them by their classes (``.st-key-gl-answer``, ``.st-key-gl-main-chart``).
ANSWER_KEY = "gl-answer"
MAIN_CHART_KEY = "gl-main-chart"


def start_page(page: str) -> None:
    """What every page calls first: the router check, then the shared chrome for ``page``.

    ``page`` is the page's URL path (``"explorer"``, ``"gradcheck"`` …, ``""`` for home).
    """
    ensure_router()


def answer_box():
    """The container for the page's one plain sentence answering its question.

    ``with answer_box(): st.success(...)`` — browser tests find it by its key.
    """
    return st.container(key=ANSWER_KEY)


def main_chart_box():
    """The container for the page's main chart (first screen at 1280x720)."""
    return st.container(key=MAIN_CHART_KEY)
