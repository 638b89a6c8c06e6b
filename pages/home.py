"""Home: what GradLab shows, and a gallery of questions that open a page preset."""

import streamlit as st

from gradlab.teaching.presets import Preset, gallery, url_query
from gradlab.ui.page_chrome import answer_box, start_page
from gradlab.ui.navigation import PAGES, page_by_url

start_page("")

st.title("GradLab")
st.markdown(
    "#### Why do autograd and finite differences disagree — and which one is right?"
)
with answer_box():
    # Home has no chart: its first screen is this answer and the gallery below it.
    st.markdown(
        "**Usually neither is wrong.** Autograd is off from the exact derivative by a few "
        "rounding steps; a finite difference is off by its step: too large a step bends the "
        "answer, too small a step drowns it in rounding. Pick a question below to see which, "
        "and by how much."
    )
with st.expander("How GradLab tells them apart"):
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



def _card(preset: Preset) -> None:
    page = page_by_url(preset.page)
    with st.container(border=True, height="stretch"):
        st.markdown(f"**{preset.question}**")
        st.caption(preset.note or page.blurb)
        # The link carries every value of the view, so the page opens on it and its URL
        # stays a complete description after any later change.
        st.page_link(page.path, label=preset.label, icon=page.icon, query_params=url_query(preset),
                     help=f"Open {page.title} with this example")


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
