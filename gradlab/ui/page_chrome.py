"""What every page does first, in one plain module.

Each script in ``pages/`` imports what it needs, then calls, as its first statement::

    start_page("explorer")  # the page's URL path; "" for home

Imports may come first because importing gradlab draws nothing: a page opened directly (a
first deep link in Streamlit's legacy pages mode, :func:`ensure_router`) still reaches
``start_page`` before its first element (tests/test_app_pages.py opens each page that way).

opens with one compact row, ``with title_row("Grad check", question): presets_popover(...)``,
puts its one plain answer sentence in ``with answer_box():`` and its main
chart in ``with main_chart_box():``. ``app.py`` calls :func:`finish_page` after
the page ran, for the chrome that needs the page's final widget values.

The first screen of a projector is 1280x720: the title row, one row of controls,
the answer and the whole main chart (each page's main figure is as tall as what
is left; tests/browser/test_first_screen_browser.py measures it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from gradlab.ui.compat import leave_legacy_pages_mode

__all__ = ["ensure_router", "start_page", "finish_page", "title_row", "answer_box", "main_chart_box",
           "main_chart_height", "details", "ANSWER_KEY", "MAIN_CHART_KEY", "TITLE_ROW_KEY",
           "QUIZ_KEY", "PRESENT_ALSO_KEY", "quiz_box", "present_also", "presenting_main_chart"]


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
#: Key of the page's first row: title, question, popovers (:func:`title_row`).
TITLE_ROW_KEY = "gl-title-row"
#: Key of the page's "predict, then look" question (:func:`quiz_box`), which presentation mode
#: shows in the chart's place when the lecturer switches "Quiz" on.
QUIZ_KEY = "gl-quiz"
#: Key of what a preset changes outside the answer and the chart (:func:`present_also`), which
#: presentation mode keeps on screen under the chart.
PRESENT_ALSO_KEY = "gl-present-also"
_QUIZ_DRAWN = "_gl_quiz_drawn"
_QUESTION = "_gl_page_question"  # the title row's question, this run (presentation mode shows it)

#: Outside presentation mode: the page starts right under Streamlit's header bar (3.75rem,
#: its menu button sits inside it) instead of 1.5rem further down, and a question written
#: beside the title reads as one short line. 21 px more for the chart on a 720 px screen.
_COMPACT_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 4rem !important; }
/* The question beside the title wraps inside the room the title and the popovers leave (its
   own width would push it onto a line of its own); on a phone it takes the next line. */
.st-key-gl-title-row > [data-testid="stElementContainer"]:has([data-testid="stMarkdown"]) {
  flex: 1 1 12rem !important; }
.st-key-gl-title-row [data-testid="stMarkdownContainer"] p { margin: 0; line-height: 1.35; }
/* A phone (390x844): the page's point on its first screen. The title, the answer and the main
   chart come first; every other block of the page (the long controls included) follows them,
   in its own order. Plotly's toolbar would sit over a chart's title (no hover on a phone). */
@media (max-width: 640px) {
  [data-testid="stMainBlockContainer"] { padding: 3.5rem 0.75rem 1rem !important; }  /* 10 px more chart width */
  [data-testid="stMainBlockContainer"] h1 { font-size: 1.6rem !important; }
  [data-testid="stMainBlockContainer"] > [data-testid="stVerticalBlock"]
    > :not(:has(.st-key-gl-main-chart, .st-key-gl-answer, .st-key-gl-title-row, h1, h2)) { order: 1; }
  .js-plotly-plot .modebar-container { display: none !important; }
}
</style>
"""

# What start_page left for finish_page in this script run (one run per session at a time).
_RUN_STATE = "_gl_chrome_run"


def start_page(page: str) -> None:
    """What every page calls first: the router check, then the shared chrome for ``page``.

    ``page`` is the page's URL path (``"explorer"``, ``"gradcheck"`` …, ``""`` for home).
    The chrome: chart axis text in the theme's text colour (WCAG AA in both themes),
    and either presentation mode (``?present=1``: no sidebar, large type, the main
    chart filling the screen, Previous / Next through the page's presets, Exit) or
    the sidebar's Present button and Light / Dark theme links.
    """
    from gradlab.ui.history_steps import history_steps
    from gradlab.ui.presentation import is_presenting, present_button, presentation_chrome
    from gradlab.ui.theme import contrast_css

    ensure_router()
    if is_presenting():
        contrast_css()
        slot = presentation_chrome(page)
    else:
        contrast_css(_COMPACT_CSS)
        present_button()
        slot = st.sidebar.empty()
    with st.sidebar:  # out of the main column's reading order
        history_steps()  # each change its own history entry: Back undoes one
    st.session_state[_RUN_STATE] = (page, slot)
    st.session_state.pop(_QUIZ_DRAWN, None)
    st.session_state.pop(_QUESTION, None)


def finish_page() -> None:
    """After the page ran (``app.py``): the chrome that shows the page's final state.

    The theme links carry the URL the page's widgets just wrote, and the
    presentation bar names the preset on screen; both are known only now.
    """
    from gradlab.ui.presentation import finish_presentation, is_presenting
    from gradlab.ui.theme import theme_links

    run = st.session_state.pop(_RUN_STATE, None)
    if run is None:  # the page did not call start_page
        return
    page, slot = run
    if is_presenting():
        finish_presentation(page, slot, quiz=bool(st.session_state.pop(_QUIZ_DRAWN, None)),
                            page_question=st.session_state.pop(_QUESTION, None))
    else:
        with slot.container():
            theme_links()
        words_on_this_page(page)


WORDS_KEY = "gl-words"


def words_on_this_page(page: str) -> None:
    """The page's words and their definitions (gradlab.teaching.glossary.PAGE_TERMS), folded at its
    end: a widget's help is a hover, which a phone does not have."""
    from gradlab.teaching.glossary import PAGE_TERMS, definition

    terms = PAGE_TERMS.get(page, ())
    if not terms:
        return
    with st.container(key=WORDS_KEY), st.expander("Words on this page", icon=":material/menu_book:"):
        st.markdown("\n".join(f"- **{name.replace('_', ' ')}**: {definition(name)}" for name in terms))


@contextmanager
def title_row(title: str, question: str | None = None, *, help: str | None = None) -> Iterator[None]:
    """The page's first row: its title, its question in one short line, then what the ``with`` body draws.

    The body's elements (a "Presets" popover, say) sit at the right end; on a phone
    the row wraps. ``help`` is the question's hover help (the question's full wording,
    its code), or the title's when there is no question.

    ``with title_row("Grad check", "my float32 check fails: is the gradient wrong?"): presets_popover(...)``
    """
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key=TITLE_ROW_KEY):
        st.title(title, anchor=False, width="content", help=None if question else help)
        if question:
            st.markdown(f"**The question:** {question}", help=help, width="stretch")
            st.session_state[_QUESTION] = question  # presentation mode shows it above the answer
        else:
            st.space("stretch")
        yield


def answer_box():
    """The container for the page's one plain sentence answering its question.

    ``with answer_box(): st.success(...)`` — browser tests find it by its key.
    """
    return st.container(key=ANSWER_KEY)


_IN_MAIN_CHART = "_gl_in_main_chart"


class _MainChartBox:
    """``st.container(key=MAIN_CHART_KEY)`` that knows, while entered, that a chart drawn now is the main one."""

    def __init__(self) -> None:
        self._box = st.container(key=MAIN_CHART_KEY)

    def __enter__(self):
        st.session_state[_IN_MAIN_CHART] = True
        return self._box.__enter__()

    def __exit__(self, *exc):
        st.session_state.pop(_IN_MAIN_CHART, None)
        return self._box.__exit__(*exc)

    def __getattr__(self, name: str):  # box.plotly_chart(...) etc. still work
        return getattr(self._box, name)


def main_chart_box():
    """The container for the page's main chart (first screen at 1280x720): ``with main_chart_box(): ...``.

    In presentation mode CSS makes it fill most of the screen, and a chart drawn
    inside it with ``gradlab.ui.figures.show_figure`` stretches to fill it
    (:func:`main_chart_height`).
    """
    return _MainChartBox()


def presenting_main_chart() -> bool:
    """Whether a chart drawn now is the main chart of a page in presentation mode."""
    from gradlab.ui.presentation import is_presenting

    return bool(st.session_state.get(_IN_MAIN_CHART)) and is_presenting()


def main_chart_height() -> str:
    """The ``height=`` for ``st.plotly_chart``: ``"stretch"`` for the main chart in presentation mode.

    Otherwise ``"content"``: the figure's own height.
    """
    return "stretch" if presenting_main_chart() else "content"


def quiz_box(**kwargs):
    """The container of the page's "predict, then look" question: ``with quiz_box(border=True): ...``.

    Presentation mode offers a "Quiz" switch on pages that draw one, which shows this box
    where the chart was: the question first, its reveal once a choice is clicked.
    """
    st.session_state[_QUIZ_DRAWN] = True
    return st.container(key=QUIZ_KEY, **kwargs)


def present_also():
    """A container presentation mode keeps on screen with the answer and the chart, in one compact row.

    For what a preset changes outside them (Backward's steps after "Backward twice, then once
    more"), so each preset a lecturer steps to looks different: ``with present_also(): ...``.
    """
    return st.container(key=PRESENT_ALSO_KEY)


def details(label: str, key: str, **kwargs):
    """An expander below the first screen whose content is drawn only while it is open.

    Returns the expander when open, else None: ``if (box := details(...)) : with box: ...``.
    Streamlit draws a closed expander's content too, and a data grid, a syntax-highlighted
    block or a chart in it costs the browser a second on every visit (bench_browser.py).
    ``key`` keeps the open state (``st.session_state[key]``); opening reruns the page.
    """
    box = st.expander(label, key=key, on_change="rerun", **kwargs)
    return box if box.open else None
