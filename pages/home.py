"""Home: what GradLab shows, and a gallery of questions that open a page preset."""

import streamlit as st

from gradlab.labs.explorer import default_sweep_settings, view
from gradlab.ui.messages import show_error
from gradlab.ui.navigation import PAGES, page_by_url
from gradlab.ui.page_chrome import answer_box, main_chart_box, start_page
from gradlab.ui.presentation import is_presenting
from gradlab.ui.presets import Preset, gallery, url_query
from gradlab.ui.views import lab_view, show_chart

start_page("")

#: The Explorer's first view: the sweep behind its default widgets (the page shares its view).
FIRST_VIEW = default_sweep_settings()


def _hero() -> None:
    """The answer's picture: also loads the chart library while the visitor reads, so the
    page they pick next draws its chart at once (Plotly's code is fetched on first use)."""
    try:
        shown = lab_view(view, FIRST_VIEW, spinner="Computing the sweep…")
    except Exception as err:  # noqa: BLE001 - a message, never a traceback, on the front page
        show_error(err)
        return
    # Presenting home keeps the gallery on screen (the lecturer picks the question there), so the
    # hero is not marked as the main chart the presentation would enlarge alone: it is drawn larger
    # here, its text at the presented size like every other page's chart. Built once, then replayed.
    if is_presenting():
        with st.container():
            show_chart(FIRST_VIEW, shown, "first view presented", "gradlab-the-v")
    else:
        with main_chart_box():
            show_chart(FIRST_VIEW, shown, "first view", "gradlab-the-v")
    explorer = page_by_url("explorer")
    st.page_link(explorer.path, label="Explore it in the Explorer", icon=explorer.icon)


st.title("GradLab")
st.markdown(
    "#### Why do autograd and finite differences disagree — and which one is right?"
)
answer_column, chart_column = st.columns([1, 1], gap="medium")
with answer_column, answer_box():
    st.markdown(
        "**Usually neither is wrong.** Autograd is off from the exact derivative by a few "
        "rounding steps; a finite difference is off by its step: too large a step bends the "
        "answer, too small a step drowns it in rounding. Pick a question below to see which, "
        "and by how much. The chart: a central difference's error against its step, in "
        "float32 and float64."
    )
with answer_column, st.expander("How GradLab tells them apart"):
    st.markdown(
    """
Autograd applies the chain rule to the operations your code actually ran, rounding
each one in the tensor's dtype. A finite difference divides a difference of two
function values by a step *h*, so it carries **truncation** error that shrinks with
*h* and **round-off** error that grows as *h* shrinks — the best step sits where they
meet, and it depends on the **dtype** far more than on any habit like `1e-6`.
GradLab measures both against the **exact derivative**, computed at high precision
at the dtype-rounded point, so you can see which one is off and by how much. It also
shows why a loss's `sum` or `mean` reduction does not rescue a float32 gradient check:
both scale the loss and its gradient alike.
"""
    )
with chart_column:
    _hero()


def _card(preset: Preset) -> None:
    page = page_by_url(preset.page)
    with st.container(border=True, height="stretch"):
        st.markdown(f"**{preset.question}**")
        st.caption(preset.note or page.blurb)
        # The link carries every value of the view, so the page opens on it and its URL
        # stays a complete description after any later change.
        st.page_link(page.path, label=preset.label, icon=page.icon, query_params=url_query(preset),
                     help=f"Open {page.title} with this example")


#: Page-link labels wrap on every page (gradlab.ui.theme); a card's label is a sentence, so here
#: its lines sit closer and start at the top of the card.
_WRAPPED_LINKS_CSS = """<style>
.st-key-gl-home-links [data-testid="stPageLink-NavLink"] :is(span, p, [data-testid="stMarkdownContainer"]) {
  line-height: 1.4; }
.st-key-gl-home-links [data-testid="stPageLink-NavLink"] { align-items: flex-start; }
</style>"""
st.html(_WRAPPED_LINKS_CSS)

with st.container(key="gl-home-links"):
    st.subheader("Start from a question")
    COLUMNS = 3
    cards = gallery()
    for start in range(0, len(cards), COLUMNS):
        for column, preset in zip(st.columns(COLUMNS), cards[start : start + COLUMNS], strict=False):
            with column:
                _card(preset)

    st.subheader("All pages")
    for spec in PAGES:
        if not spec.default:
            st.page_link(spec.path, label=f"**{spec.title}** — {spec.blurb}", icon=spec.icon)

st.caption(
    "Every control is kept in the page's URL: copy the address bar to share the exact "
    "view. The same numbers are available from a terminal with `python -m gradlab`."
)
