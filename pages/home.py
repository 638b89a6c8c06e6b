"""Home: what GradLab shows, and a gallery of questions that open a page preset."""

import streamlit as st

from gradlab.ui.navigation import PRESET_LINKS, PresetLink, available_pages
from gradlab.ui.bound_widgets import ensure_router

ensure_router()

st.title("GradLab")
st.markdown(
    "#### Why do autograd and finite differences disagree — and which one is right?"
)
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

present = {spec.url_path for spec in available_pages()}


def _card(link: PresetLink) -> None:
    with st.container(border=True, height="stretch"):
        st.markdown(f"**{link.question}**")
        st.caption(link.description)
        if link.url_path in present:
            st.page_link(
                link.page.path,
                label=link.title,
                icon=link.page.icon,
                query_params=link.as_query_params(),
                help=f"Open {link.page.title} with this example",
            )
        else:
            st.caption(f":material/schedule: {link.page.title} is coming soon.")


st.subheader("Start from a question")
COLUMNS = 3
for start in range(0, len(PRESET_LINKS), COLUMNS):
    row = PRESET_LINKS[start : start + COLUMNS]
    for column, link in zip(st.columns(COLUMNS), row, strict=False):
        with column:
            _card(link)

others = [spec for spec in available_pages() if not spec.default]
if others:
    st.subheader("All pages")
    for spec in others:
        st.page_link(spec.path, label=f"**{spec.title}** — {spec.blurb}", icon=spec.icon)

st.caption(
    "Every control is kept in the page's URL: copy the address bar to share the exact "
    "view. The same numbers are available from a terminal with `python -m gradlab`."
)
