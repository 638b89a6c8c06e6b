"""HTTP headers that keep other sites from framing GradLab (clickjacking).

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

>>> dict(SECURITY_HEADERS)[b"x-frame-options"]
b'SAMEORIGIN'
>>> FRAME_GUARD.cls is FrameGuard
True
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from starlette.middleware import Middleware

__all__ = ["SECURITY_HEADERS", "FrameGuard", "FRAME_GUARD"]

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
