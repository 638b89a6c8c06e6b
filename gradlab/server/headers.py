"""HTTP headers that keep other sites from framing GradLab (clickjacking), and Streamlit's
metrics endpoint refused.

A public GradLab link could be shown inside an invisible frame on another site,
which then steers a visitor's clicks. Browsers refuse that when the page says
who may frame it: ``Content-Security-Policy: frame-ancestors 'self'`` (the
standard) and ``X-Frame-Options: SAMEORIGIN`` (for older browsers).

Streamlit 1.67 has no setting for response headers; its documented way to add
behaviour to its server is ``st.App(..., middleware=[...])`` (Starlette
middleware), which ``streamlit run`` picks up from a script that defines
``app = st.App(...)``. :data:`FRAME_GUARD` is that middleware; ``serve.py``
at the repository root wraps ``app.py`` with it, so ``streamlit run serve.py``
is ``streamlit run app.py`` plus these headers on every HTTP response (the
page, static files, ``/_stcore/health``, the websocket handshake is left
alone: it is not a document). The load balancer in ``deploy/`` adds the same
headers, so a deployment keeps them whichever entry point the replicas run.

Streamlit also answers ``/_stcore/metrics`` to anyone: how many sessions are open,
how long they ran, how much memory the caches hold. A public link has no reason to
tell that to every visitor, and no GradLab page uses it, so :data:`METRICS_REFUSED`
answers 404 there (``serve.py`` adds it inside :data:`FRAME_GUARD`, so the 404 carries
the headers too); ``deploy/haproxy.cfg`` refuses it as well.

>>> dict(SECURITY_HEADERS)[b"x-frame-options"]
b'SAMEORIGIN'
>>> FRAME_GUARD.cls is FrameGuard
True
>>> is_metrics_path("/_stcore/metrics"), is_metrics_path("/gradlab/_stcore/metrics/"), is_metrics_path("/")
(True, True, False)
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from starlette.middleware import Middleware

__all__ = ["SECURITY_HEADERS", "FrameGuard", "FRAME_GUARD", "METRICS_PATH", "is_metrics_path", "MetricsRefused",
           "METRICS_REFUSED"]

#: Streamlit's metrics route, after ``server.baseUrlPath`` if one is set.
METRICS_PATH = "/_stcore/metrics"

#: (name, value) pairs added to every HTTP response, lower-case as ASGI sends them.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", b"frame-ancestors 'self'"),
    (b"x-frame-options", b"SAMEORIGIN"),
)

_Message = dict[str, Any]


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
    >>> sorted(sent[0]["headers"])
    [(b'content-security-policy', b"frame-ancestors 'self'"), (b'x-frame-options', b'SAMEORIGIN')]
    """

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: _Message, receive: Any, send: Callable[[_Message], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: _Message) -> None:
            if message["type"] == "http.response.start":
                ours = {name for name, _ in SECURITY_HEADERS}
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in ours]
                message = {**message, "headers": headers + list(SECURITY_HEADERS)}
            await send(message)

        await self.app(scope, receive, send_with_headers)


#: What ``st.App(..., middleware=[FRAME_GUARD])`` takes.
FRAME_GUARD = Middleware(FrameGuard)


def is_metrics_path(path: str) -> bool:
    """Whether an HTTP request's (already percent-decoded) path is Streamlit's metrics route,
    under any base URL path, with or without a trailing slash (Starlette redirects that one)."""
    return path.rstrip("/").endswith(METRICS_PATH)


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

    async def __call__(self, scope: _Message, receive: Any, send: Callable[[_Message], Awaitable[None]]) -> None:
        if scope["type"] == "http" and is_metrics_path(scope.get("path", "")):
            body = b"Not Found"
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


#: What ``st.App(..., middleware=[FRAME_GUARD, METRICS_REFUSED])`` takes (the first is outermost).
METRICS_REFUSED = Middleware(MetricsRefused)
