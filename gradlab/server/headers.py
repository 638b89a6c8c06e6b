"""HTTP response headers of a public GradLab link, and the Streamlit routes it refuses.

Every response of ``streamlit run serve.py`` carries :data:`SECURITY_HEADERS`:

* ``Content-Security-Policy`` (:data:`CSP`): the page may run only GradLab's own
  scripts, connect only to its own server, and be framed only by itself. An
  injected ``<script>`` or a link to another site's code does not run; a site that
  shows GradLab in an invisible frame to steer a visitor's clicks (clickjacking) is
  refused by ``frame-ancestors 'self'``;
* ``X-Frame-Options: SAMEORIGIN``: the same frame rule for older browsers;
* ``X-Content-Type-Options: nosniff``: a file is run or styled only as the type the
  server named, never as what a browser guesses from its bytes.

and no ``server: uvicorn`` banner (:func:`drop_server_header`): it only tells a
scanner which server and which of its bugs to try.

Two Streamlit routes answer no visitor of a public link: ``/_stcore/metrics`` (how
many sessions are open, how long they ran, how much the caches hold) answers 404
(:class:`MetricsRefused`), and ``/_stcore/upload_file/...`` (the file uploader's
store, every method) answers 403 (:class:`UploadsRefused`). No GradLab page has a
file uploader, and Streamlit keeps every file PUT there in memory for the session:
2,000 PUTs of 1 MB take a server from 503 MB to 2,499 MB.

Streamlit 1.67 has no setting for response headers; its documented way to add
behaviour to its server is ``st.App(..., middleware=[...])`` (Starlette
middleware), which ``streamlit run`` picks up from a script that defines
``app = st.App(...)``. ``serve.py`` at the repository root wraps ``app.py`` with
these; ``deploy/haproxy.cfg`` sends the same headers and refuses the same routes, so
a deployment keeps them whichever entry point the replicas run.

>>> dict(SECURITY_HEADERS)[b"x-content-type-options"]
b'nosniff'
>>> FRAME_GUARD.cls is FrameGuard
True
>>> is_metrics_path("/_stcore/metrics"), is_metrics_path("/gradlab/_stcore/metrics/"), is_metrics_path("/")
(True, True, False)
>>> is_upload_path("/_stcore/upload_file/abc/1"), is_upload_path("/gradlab/_stcore/upload_file"), is_upload_path("/")
(True, True, False)
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Awaitable, Callable

from starlette.middleware import Middleware

__all__ = ["CSP", "SECURITY_HEADERS", "FrameGuard", "FRAME_GUARD", "METRICS_PATH", "is_metrics_path",
           "MetricsRefused", "METRICS_REFUSED", "UPLOAD_PATH", "is_upload_path", "UploadsRefused",
           "UPLOADS_REFUSED", "uvicorn_config_loading", "drop_server_header"]

_LOG = logging.getLogger("gradlab.server")

#: What a page may load and where from, one directive a line; each source is there because
#: Streamlit or Plotly needs it (tests/browser/test_csp_browser.py opens every page under it
#: and fails on any violation). Everything else falls back to ``default-src 'self'``.
CSP = "; ".join((
    "default-src 'self'",
    # Streamlit's bundle; its index.html's one inline script (``window.prerenderReady =
    # false``), allowed by its hash, not by 'unsafe-inline'; 'wasm-unsafe-eval' for
    # protobuf.js's int64 helper, which compiles a tiny WebAssembly module (it falls back
    # without it, but each page load reports a violation); blob: for components v2, which
    # imports a component's JavaScript from a blob URL (the charts' slider listener,
    # gradlab/ui/slider_release.py). No 'unsafe-eval': Plotly (2D charts) runs without it.
    "script-src 'self' 'sha256-THxz9J9+wf7rhwR2YkXJoSZ13UCmYyC+3lNDv2+8ugA=' 'wasm-unsafe-eval' blob:",
    # Emotion (Streamlit's CSS-in-JS) and Plotly write <style> elements and style attributes.
    "style-src 'self' 'unsafe-inline'",
    # data: and blob: for Plotly's own images (the modebar's PNG export draws an SVG data URL);
    # no other site: the favicon is GradLab's own file (app.py), not Streamlit's icon CDN.
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",  # the websocket to this server (CSP 3: 'self' covers ws:/wss: of the same host)
    # No page starts a worker in Chromium; st.dataframe's CSV download builds one from a blob in
    # browsers without the File System Access API (its polyfill), and Streamlit's own are its files.
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
))

#: (name, value) pairs added to every HTTP response, lower-case as ASGI sends them.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"SAMEORIGIN"),
    (b"x-content-type-options", b"nosniff"),
)

#: Streamlit's metrics route, after ``server.baseUrlPath`` if one is set.
METRICS_PATH = "/_stcore/metrics"
#: Streamlit's file-upload route (``/_stcore/upload_file/<session>/<file>``), under any prefix.
UPLOAD_PATH = "/_stcore/upload_file"

_Message = dict[str, Any]
_Send = Callable[[_Message], Awaitable[None]]


def with_security_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` with :data:`SECURITY_HEADERS` in place of any earlier value of theirs.

    >>> [name for name, _ in with_security_headers([(b"X-Frame-Options", b"ALLOWALL"), (b"etag", b"1")])]
    [b'etag', b'content-security-policy', b'x-frame-options', b'x-content-type-options']
    """
    ours = {name for name, _ in SECURITY_HEADERS}
    return [(k, v) for k, v in headers if k.lower() not in ours] + list(SECURITY_HEADERS)


class FrameGuard:
    """ASGI middleware: :data:`SECURITY_HEADERS` on every HTTP response, replacing any earlier value.

    Pure ASGI (no ``BaseHTTPMiddleware``), so streamed responses and websockets
    pass through untouched and nothing is buffered.

    >>> import asyncio
    >>> async def page(scope, receive, send):
    ...     await send({"type": "http.response.start", "status": 200, "headers": [(b"x-frame-options", b"ALLOWALL")]})
    >>> sent = []
    >>> async def send(message):
    ...     sent.append(message)
    >>> from concurrent.futures import ThreadPoolExecutor  # a thread: a test may hold a running loop
    >>> ThreadPoolExecutor(1).submit(asyncio.run, FrameGuard(page)({"type": "http"}, None, send)).result()
    >>> dict(sent[0]["headers"])[b"x-frame-options"]
    b'SAMEORIGIN'
    """

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: _Message, receive: Any, send: _Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: _Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": with_security_headers(list(message.get("headers", [])))}
            await send(message)

        await self.app(scope, receive, send_with_headers)


#: What ``st.App(..., middleware=[FRAME_GUARD])`` takes.
FRAME_GUARD = Middleware(FrameGuard)


def is_metrics_path(path: str) -> bool:
    """Whether an HTTP request's (already percent-decoded) path is Streamlit's metrics route,
    under any base URL path, with or without a trailing slash (Starlette redirects that one)."""
    return path.rstrip("/").endswith(METRICS_PATH)


def is_upload_path(path: str) -> bool:
    """Whether an HTTP request's (already percent-decoded) path is under Streamlit's upload route,
    under any base URL path (its files are ``<route>/<session>/<file>``)."""
    return f"{path.rstrip('/')}/".find(f"{UPLOAD_PATH}/") >= 0


async def send_plain(send: _Send, status: int, text: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    """One short ``text/plain`` response (the security headers come from :class:`FrameGuard` outside)."""
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


class MetricsRefused:
    """ASGI middleware: 404 for :data:`METRICS_PATH`, every method; everything else passes through.

    >>> import asyncio
    >>> async def streamlit(scope, receive, send):
    ...     await send({"type": "http.response.start", "status": 200, "headers": []})
    >>> sent = []
    >>> async def send(message):
    ...     sent.append(message)
    >>> from concurrent.futures import ThreadPoolExecutor  # a thread: a test may hold a running loop
    >>> guard = MetricsRefused(streamlit)
    >>> for path in ("/_stcore/metrics", "/_stcore/health"):
    ...     ThreadPoolExecutor(1).submit(asyncio.run, guard({"type": "http", "path": path}, None, send)).result()
    >>> [m["status"] for m in sent if m["type"] == "http.response.start"]
    [404, 200]
    """

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: _Message, receive: Any, send: _Send) -> None:
        if scope["type"] == "http" and is_metrics_path(scope.get("path", "")):
            await send_plain(send, 404, "Not Found")
            return
        await self.app(scope, receive, send)


#: What ``st.App(..., middleware=[FRAME_GUARD, METRICS_REFUSED])`` takes (the first is outermost).
METRICS_REFUSED = Middleware(MetricsRefused)

#: The body of a refused upload: what a curious visitor or a script's author reads.
UPLOAD_REFUSAL = "GradLab takes no file uploads."


class UploadsRefused:
    """ASGI middleware: 403 for anything under :data:`UPLOAD_PATH` (PUT, POST, DELETE, OPTIONS,
    any method), before Streamlit reads a byte of the body; everything else passes through.

    ``server.maxUploadSize = 0`` (``.streamlit/config.toml``) stops Streamlit storing a file
    with a body, but it still parses chunked bodies of up to 1 MB and keeps empty files;
    this answers before any of that.

    >>> import asyncio
    >>> async def streamlit(scope, receive, send):
    ...     await send({"type": "http.response.start", "status": 204, "headers": []})
    >>> sent = []
    >>> async def send(message):
    ...     sent.append(message)
    >>> from concurrent.futures import ThreadPoolExecutor  # a thread: a test may hold a running loop
    >>> guard = UploadsRefused(streamlit)
    >>> for method, path in (("PUT", "/_stcore/upload_file/s/1"), ("OPTIONS", "/_stcore/upload_file/s/1"),
    ...                      ("GET", "/_stcore/health")):
    ...     scope = {"type": "http", "method": method, "path": path}
    ...     ThreadPoolExecutor(1).submit(asyncio.run, guard(scope, None, send)).result()
    >>> [m["status"] for m in sent if m["type"] == "http.response.start"]
    [403, 403, 204]
    """

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: _Message, receive: Any, send: _Send) -> None:
        if scope["type"] == "http" and is_upload_path(scope.get("path", "")):
            await send_plain(send, 403, UPLOAD_REFUSAL)
            return
        await self.app(scope, receive, send)


#: What ``st.App(..., middleware=[..., UPLOADS_REFUSED])`` takes.
UPLOADS_REFUSED = Middleware(UploadsRefused)


def uvicorn_config_loading() -> Any | None:
    """The ``uvicorn.Config`` that is importing the caller's module right now, or None.

    Internal: ``streamlit run serve.py`` hands uvicorn the import string ``serve:app``
    (``streamlit.web.bootstrap.run_asgi_app`` -> ``UvicornRunner``), and uvicorn
    imports it inside ``Config.load()``, whose frame's ``self`` is the Config. Why: the
    server banner and the proxy-header rewriting are ``uvicorn.Config`` options
    (``server_header``, ``proxy_headers``) that Streamlit 1.67 builds itself
    (``starlette_server._get_uvicorn_config_kwargs``, no setting or hook reaches
    them), and the Config exists before ``serve.py`` runs, so the only moment to
    change it from ``serve.py`` is while it loads the app. If it goes (uvicorn loads
    the app elsewhere, or Streamlit stops using uvicorn): None, logged; the banner
    comes back and uvicorn believes ``X-Forwarded-For`` from loopback again;
    tests/test_compat.py and the header tests in tests/test_deploy_lb.py fail.

    >>> uvicorn_config_loading() is None  # a doctest is not imported by uvicorn
    True
    """
    try:
        from uvicorn.config import Config
    except ImportError:
        return None
    frame = sys._getframe(1)  # noqa: SLF001 - see the docstring
    while frame is not None:
        if frame.f_code is Config.load.__code__:
            config = frame.f_locals.get("self")
            return config if isinstance(config, Config) else None
        frame = frame.f_back
    return None


def drop_server_header(config: Any | None) -> bool:
    """Stop uvicorn sending ``server: uvicorn`` on every response; False when ``config`` is None.

    Internal: ``uvicorn.Config.encoded_headers``, computed in ``Config.load()`` before it
    imports the app (``server_header=True`` puts ``(b"server", b"uvicorn")`` first), and
    copied to every response by the server's tick (``Server.on_tick``) from then on. An
    ASGI middleware cannot remove it: uvicorn writes it in front of the app's headers.
    Call it with :func:`uvicorn_config_loading` from the module uvicorn imports.
    If it goes: the banner comes back (tests/test_compat.py, tests/test_deploy_lb.py).

    >>> class Loaded: encoded_headers = [(b"server", b"uvicorn"), (b"x-a", b"1")]; server_header = True
    >>> config = Loaded(); drop_server_header(config), config.encoded_headers
    (True, [(b'x-a', b'1')])
    """
    if config is None:
        _LOG.warning("uvicorn is not loading this module: its server banner stays")
        return False
    config.server_header = False
    config.encoded_headers = [(k, v) for k, v in config.encoded_headers if k.lower() != b"server"]
    return True
