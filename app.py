"""GradLab's entry point: a router only. Pages live in pages/; their list in gradlab/ui/pages.py."""

import streamlit as st

from gradlab.ui.pages import available_pages
from gradlab.ui.runtime import configure_runtime, housekeeping

configure_runtime()  # torch on one thread per op: one heavy request cannot take every core
housekeeping()  # garbage of closed sessions, collected at most every 30 s (not after every rerun)

st.set_page_config(page_title="GradLab", page_icon=":material/functions:", layout="wide")

navigation = st.navigation(
    [
        st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path,
                default=spec.default)
        for spec in available_pages()
    ]
)
navigation.run()
