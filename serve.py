"""GradLab for a public link: ``streamlit run serve.py``.

The same app as ``streamlit run app.py`` (this file only points Streamlit at ``app.py``),
with what a public link needs at its door (docs/DEPLOYMENT.md, "Limits at the door"):

* every response carries a Content-Security-Policy (GradLab's own scripts only, framed
  only by itself), ``X-Frame-Options: SAMEORIGIN`` and ``X-Content-Type-Options:
  nosniff``, and no ``server: uvicorn`` banner (gradlab/server/headers.py);
* one client address keeps at most ``LIMITS.sessions_per_address`` tabs open and opens
  new ones at ``LIMITS.new_sessions_per_minute`` after a burst of
  ``LIMITS.new_sessions_burst``; over that its websocket handshake is refused and its
  page request gets a short page saying when to retry (gradlab/server/edge.py). Behind a
  load balancer, name it in ``GRADLAB_TRUSTED_PROXIES`` so its ``X-Forwarded-For`` is read;
* ``/_stcore/metrics`` answers 404 and ``/_stcore/upload_file/...`` 403 (no page uploads);
* every preset's view is computed as the server starts, before its first visitor
  (gradlab/ui/warm_views.py; ``GRADLAB_WARM_PRESETS=0`` turns it off).

``streamlit run`` sees the ``st.App`` below and serves it; every ``--server.*`` option
and ``.streamlit/config.toml`` apply as they do to ``app.py``. uvicorn imports this file
while it loads its configuration, which is when its banner and its own reading of
``X-Forwarded-For`` can be turned off. The image and ``deploy/`` start this file.
"""

from contextlib import asynccontextmanager

import streamlit as st

from gradlab.server.edge import SESSION_GATE, keep_tcp_peer
from gradlab.server.headers import (FRAME_GUARD, METRICS_REFUSED, UPLOADS_REFUSED, drop_server_header,
                                    uvicorn_config_loading)
from gradlab.ui.warm_views import start_warming

_uvicorn = uvicorn_config_loading()
drop_server_header(_uvicorn)
keep_tcp_peer(_uvicorn)


@asynccontextmanager
async def _warm_at_start(_app):
    start_warming()  # a background thread: the server answers meanwhile
    yield


# Outermost first: every answer, a refusal included, carries the headers.
app = st.App("app.py", lifespan=_warm_at_start,
             middleware=[FRAME_GUARD, METRICS_REFUSED, UPLOADS_REFUSED, SESSION_GATE])
