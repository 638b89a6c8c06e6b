"""Presentation mode, ``?present=1``: what a lecturer projects.

No sidebar, large type, the question on screen under the bar (the preset's, else the page's), the
page's main chart (``main_chart_box``) as wide as the screen and most of its height, the answer
sentence large, and a bar to step through
the page's presets (Previous / Next apply a preset exactly as the page's own preset
buttons do: :func:`gradlab.ui.presets.apply` as ``on_click``). The mode is one URL
parameter, so a link opens in it; Exit removes the parameter. On a page without
presets (home) the bar has only Exit and the theme links, and the page is just larger.

Call order (``gradlab.ui.page_chrome`` does it): :func:`presentation_chrome` before the
page's widgets, :func:`finish_presentation` after them (``app.py``), because which
preset is on screen is known only once the widgets have run.
"""

from __future__ import annotations

import streamlit as st

from gradlab.teaching.presets import Preset, presets_for
from gradlab.ui.navigation import page_by_url
from gradlab.ui.presets import apply, matching_preset

__all__ = ["PRESENT_PARAM", "PRESENT_QUESTION_KEY", "question_text", "is_presenting", "enter_presentation", "leave_presentation", "step_index",
           "present_button", "presentation_chrome", "finish_presentation", "current_preset", "position_text",
           "QUIZ_TOGGLE"]

PRESENT_PARAM = "present"
#: Key of the question's line under the bar (browser tests find it by its class).
PRESENT_QUESTION_KEY = "gl-present-question"


_CSS = """
<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"], [data-testid="stSidebarNav"] { display: none !important; }
html { font-size: 24px !important; }
/* The header keeps only its menu (the three dots), in a small box at the top right; the bar
   sits in the page's flow beside it. However many lines the bar takes (a long preset name at
   1280 px), what follows starts below it: nothing is ever drawn over the answer or the chart. */
[data-testid="stHeader"] { left: auto !important; width: 2.4rem !important; height: 2rem !important;
  background: transparent !important; }
[data-testid="stMainBlockContainer"] { max-width: 100% !important; padding: 0.3rem 1.2rem 0.6rem !important; }
[data-testid="stLayoutWrapper"]:has(> .st-key-gl-present-bar), .st-key-gl-present-bar {
  flex: none !important; height: auto !important; }
/* The bar is the lecturer's, not the room's: three quarters of the page's type, one row at 1280 px. */
.st-key-gl-present-bar { zoom: 0.75; margin-right: 2.6rem; align-items: center; row-gap: 0.2rem;
  flex-wrap: wrap !important; }
.st-key-gl-present-bar :is(p, [data-testid="stMarkdownContainer"]) { margin: 0 !important; }
.st-key-gl-present-position > [data-testid="stElementContainer"] { align-self: center; height: auto !important; }
/* (A keyed container sits in a column-direction wrapper: the row's flex goes on the wrapper.) */
[data-testid="stLayoutWrapper"]:has(> .st-key-gl-present-position) { flex: 1 1 14rem !important; min-width: 0; }
.st-key-gl-present-position { flex: none !important; height: auto !important; flex-wrap: nowrap !important;
  align-items: center; }
.st-key-gl-present-position > [data-testid="stElementContainer"]:has([data-testid="stMarkdown"]) {
  flex: 1 1 auto !important; min-width: 0; width: auto !important; }
.st-key-gl-present-position [data-testid="stLayoutWrapper"]:has(> .st-key-gl-theme-links) {
  flex: none !important; width: auto !important; }
.st-key-gl-theme-links span { white-space: nowrap; }
/* The question on screen, above the answer: the room reads what is asked before what answers it. */
.st-key-gl-present-question, [data-testid="stLayoutWrapper"]:has(> .st-key-gl-present-question) {
  flex: none !important; height: auto !important; }
.st-key-gl-present-question :is(p, strong, code) { font-size: 0.95rem !important; line-height: 1.25 !important;
  margin: 0 !important; }
.st-key-gl-answer, .st-key-gl-answer p, .st-key-gl-answer li { font-size: 1.2rem !important; line-height: 1.2 !important; }
.st-key-gl-answer [data-testid="stCaptionContainer"] { display: none !important; }  /* the chart needs the room */
/* The page is one screen tall and the main chart box takes what the answer leaves, however many
   lines the answer has: every block on the way down to the box grows, the box grows, the chart
   stretches to fill it (height="stretch"). */
[data-testid="stMainBlockContainer"]:has(.st-key-gl-main-chart) {
  height: 100vh; display: flex !important; flex-direction: column; box-sizing: border-box; }
[data-testid="stMainBlockContainer"]
  :is([data-testid="stVerticalBlock"], [data-testid="stLayoutWrapper"]):has(.st-key-gl-main-chart) {
  flex: 1 1 auto !important; min-height: 0 !important; height: auto !important; }
.st-key-gl-main-chart { flex: 1 1 auto !important; height: auto !important; min-height: 12rem; }
.st-key-gl-main-chart :is([data-testid="stElementContainer"], [data-testid="stPlotlyChart"]) {
  flex: 1 1 0 !important; min-height: 0 !important; }
/* What a preset changes outside the answer and the chart (Backward's steps): one compact row. */
.st-key-gl-present-also, [data-testid="stLayoutWrapper"]:has(> .st-key-gl-present-also) { flex: none !important; }
.st-key-gl-present-also :is(p, code, li) { font-size: 0.8rem !important; line-height: 1.35 !important; margin: 0 !important; }
.st-key-gl-present-also [data-testid="stMarkdownContainer"] { margin: 0 !important; }
/* On a page with a main chart, show only the answer and the chart: every block on the
   way down to them keeps only the children that hold one of them (controls, formulas
   and tables are a click on Exit away). A column holding them takes the full width. */
[data-testid="stMainBlockContainer"]:has(.st-key-gl-main-chart)
  :is([data-testid="stVerticalBlock"], [data-testid="stHorizontalBlock"]):has(KEPT)
  > :not(:has(KEPT, .st-key-gl-present-bar)):not(KEPT):not(.st-key-gl-present-bar) {
  display: none !important;
}
[data-testid="stMainBlockContainer"]:has(.st-key-gl-main-chart)
  [data-testid="stColumn"]:has(KEPT) { flex: 1 1 100% !important; width: 100% !important; }
</style>
"""
#: The blocks presentation mode keeps on screen (with the bar): the question on screen, the answer,
#: the main chart, and what a preset changes beside them.
_KEPT = (".st-key-gl-present-question", ".st-key-gl-main-chart", ".st-key-gl-answer", ".st-key-gl-present-also")
#: With the quiz shown: the page's quiz takes the chart's place (the question, then its reveal).
_QUIZ_CSS = """
<style>
[data-testid="stMainBlockContainer"]:has(.st-key-gl-quiz) .st-key-gl-main-chart { display: none !important; }
.st-key-gl-quiz { flex: none !important; }
.st-key-gl-quiz :is(p, label p, li) { font-size: 1rem !important; }
</style>
"""
#: The bar's quiz switch, one per page (a page that draws no quiz box never hides its chart).
QUIZ_TOGGLE = "gl-present-quiz"


def _css(quiz: bool) -> str:
    """The presentation CSS; with ``quiz``, the page's quiz box is kept too and the chart steps aside.

    >>> ".st-key-gl-quiz" in _css(True), ".st-key-gl-quiz" in _css(False)
    (True, False)
    """
    kept = ", ".join((*_KEPT, ".st-key-gl-quiz") if quiz else _KEPT)
    return _CSS.replace("KEPT", kept) + (_QUIZ_CSS if quiz else "")


def is_presenting() -> bool:
    """Whether the page is in presentation mode (``?present=1`` in its URL)."""
    return st.query_params.get(PRESENT_PARAM) == "1"


def enter_presentation() -> None:
    """``on_click`` of the Present button: put ``present=1`` into the URL."""
    st.query_params[PRESENT_PARAM] = "1"


def leave_presentation() -> None:
    """``on_click`` of Exit: take ``present`` out of the URL (the view's values stay)."""
    if PRESENT_PARAM in st.query_params:
        del st.query_params[PRESENT_PARAM]


def step_index(count: int, current: int | None, delta: int) -> int:
    """The preset to show after stepping ``delta`` from ``current`` among ``count``, cyclically.

    From no preset, Next opens the first and Previous the last.

    >>> step_index(3, 2, +1), step_index(3, 0, -1), step_index(3, None, +1), step_index(3, None, -1)
    (0, 2, 0, 2)
    """
    if count <= 0:
        raise ValueError("There is no preset to step to: the page has none.")
    if current is None:
        return 0 if delta > 0 else count - 1
    return (current + delta) % count


_STEPPED = "_gl_present_stepped"  # the preset Previous / Next applied last: (page, key)


def _holds(p: Preset) -> bool:
    """Whether the widgets hold every value of ``p`` now."""
    def same(current, wanted) -> bool:
        if isinstance(wanted, tuple | list):
            return isinstance(current, tuple | list) and tuple(current) == tuple(wanted)
        return current == wanted
    return all(k in st.session_state and same(st.session_state[k], v) for k, v in p.values.items())


def current_preset(page: str) -> Preset | None:
    """The preset on screen: the one stepped to last if the widgets still hold it, else the first that matches.

    Presets may set only some widgets ("v = ones" sets v and keeps the steps of the
    preset before it), so after a step more than one can match; the stepped one wins.
    """
    stepped = st.session_state.get(_STEPPED)
    for p in presets_for(page):
        if stepped == (page, p.key) and _holds(p):
            return p
    return matching_preset(page)


def _step(page: str, delta: int) -> None:
    """``on_click`` of Previous / Next: apply the neighbouring preset the page's buttons would."""
    presets = presets_for(page)
    current = current_preset(page)
    index = step_index(len(presets), presets.index(current) if current in presets else None, delta)
    apply(presets[index])
    st.session_state[_STEPPED] = (page, presets[index].key)


def present_button() -> None:
    """The sidebar's way into presentation mode."""
    st.sidebar.button("Present", key="gl-present", icon=":material/slideshow:", on_click=enter_presentation,
                      help="Large type, the chart filling the screen, Previous / Next through the "
                           "page's examples; for a projector. The link keeps it (?present=1).")


def presentation_chrome(page: str):
    """Before the page's widgets: the CSS and the bar; returns the bar's slot for :func:`finish_presentation`.

    The bar's buttons carry no hover help: a tooltip stays over the answer after a click
    while the pointer rests on the button, and their labels say what they do.
    """
    st.html(_css(bool(st.session_state.get(f"{QUIZ_TOGGLE}-{page}"))))
    presets = presets_for(page)
    with st.container(horizontal=True, key="gl-present-bar", gap="small"):
        if presets:
            st.button("Previous", key="gl-present-prev", icon=":material/arrow_back:", on_click=_step,
                      args=(page, -1))
            st.button("Next", key="gl-present-next", icon=":material/arrow_forward:", on_click=_step,
                      args=(page, +1), type="primary")
        slot = st.empty()
        st.button("Exit", key="gl-present-exit", icon=":material/close:", on_click=leave_presentation)
    with st.container(key=PRESENT_QUESTION_KEY):
        asked = st.empty()
    return slot, asked


def position_text(page: str, current: Preset | None) -> str:
    """Where the view stands among the page's presets, in words.

    >>> position_text("backward", None)
    '3 examples; Next opens the first'
    >>> from gradlab.teaching.presets import preset
    >>> position_text("backward", preset("backward", "accumulate"))
    '2 of 3: Backward twice, then once more'
    """
    presets = presets_for(page)
    if not presets:
        return ""
    if current is None or current not in presets:
        return f"{len(presets)} examples; Next opens the first"
    return f"{presets.index(current) + 1} of {len(presets)}: {current.label}"


def question_text(page: str, current: Preset | None, page_question: str | None) -> str:
    """The question presentation mode keeps above the answer: the preset's on screen, else the
    page's own (its title row's), else what the page is for.

    >>> from gradlab.teaching.presets import preset
    >>> question_text("network", preset("network", "scipy_derivative"), None).startswith("The question: ")
    True
    >>> question_text("grid", None, None)[:45]
    'Representable grid: why (x+h) − x is not h: x'
    """
    if current is not None:
        return f"The question: {current.question}"
    if page_question:
        return f"The question: {page_question}"
    spec = page_by_url(page)
    if spec is None:
        return ""
    return f"{spec.title}: {spec.blurb[0].lower()}{spec.blurb[1:]}" if spec.blurb else spec.title


def finish_presentation(page: str, slots, quiz: bool = False, page_question: str | None = None) -> None:
    """After the page's widgets: fill the bar's slot with the position among the presets, the quiz
    switch (``quiz``: the page drew one, :func:`gradlab.ui.page_chrome.quiz_box`) and the theme links,
    and the question's slot under the bar with :func:`question_text` (``page_question``: the title
    row's)."""
    from gradlab.literal_text import markdown_literal
    from gradlab.ui.theme import theme_links

    slot, asked = slots
    current = current_preset(page)
    if text := question_text(page, current, page_question):
        label, found, words = text.partition(": ")
        asked.markdown(f"**{markdown_literal(label)}:** {markdown_literal(words)}" if found else markdown_literal(text))
    with slot.container(horizontal=True, gap="small", key="gl-present-position"):
        text = position_text(page, current)
        if text:
            st.markdown(markdown_literal(text))
        if quiz:
            st.toggle("Quiz", key=f"{QUIZ_TOGGLE}-{page}", width="content")
        theme_links()
