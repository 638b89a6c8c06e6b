"""GradLab with its HTTP security headers: ``streamlit run serve.py``.

The same app as ``streamlit run app.py`` (this file only points Streamlit at
``app.py``) plus ``Content-Security-Policy: frame-ancestors 'self'`` and
``X-Frame-Options: SAMEORIGIN`` on every response, so no other site can frame
it (gradlab/server/headers.py), and ``/_stcore/metrics`` (session counts and
durations) answers 404. ``streamlit run`` sees the ``st.App`` below and
serves it; every ``--server.*`` option and ``.streamlit/config.toml`` apply as
they do to ``app.py``. The image and ``deploy/`` start this file.
"""

import streamlit as st

from gradlab.server.headers import FRAME_GUARD, METRICS_REFUSED

app = st.App("app.py", middleware=[FRAME_GUARD, METRICS_REFUSED])
