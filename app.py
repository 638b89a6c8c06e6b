"""GradLab's entry point: a router only. Pages live in pages/; their list in gradlab/ui/navigation.py."""

from pathlib import Path

import streamlit as st

from gradlab.ui.navigation import st_page_arguments
from gradlab.ui.page_chrome import finish_page
from gradlab.ui.runtime import configure_runtime, release_session_on_disconnect
from gradlab.ui.visitor_turns import visitor_turn
from gradlab.ui.warm_views import start_warming

FAVICON = Path(__file__).resolve().parent / "gradlab" / "ui" / "favicon.png"  # the error-vs-step V

configure_runtime()  # torch on one thread per op; garbage collected in the background every 30 s
release_session_on_disconnect()  # the view is in the URL: a closed tab's session is freed, not kept
start_warming()  # every preset's view computed in the background, once per process (serve.py starts it sooner)

with visitor_turn():  # one script run at a time per visitor, however many tabs it has open
    # The favicon is ours, served by this server: a ":material/..." icon made every browser fetch it
    # from Google's icon CDN, the one request to another site (and a hole in the Content-Security-Policy).
    st.set_page_config(page_title="GradLab", page_icon=str(FAVICON), layout="wide")
    navigation = st.navigation([st.Page(**arguments) for arguments in st_page_arguments()])
    navigation.run()
    finish_page()  # chrome that needs the page's final widget values (theme links, preset position)
