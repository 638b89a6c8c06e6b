"""Per-address limits at ``serve.py``'s door: how many sessions one client address may keep
open, and how fast it may open new ones.

Every browser tab is one Streamlit session: a websocket to ``/_stcore/stream`` whose first
run of the home page costs the server 25-28 ms of CPU (measured, warm) and whose state
stays in memory while the tab is open. Unchecked, one client can open hundreds:
300 websockets from one address, each loading home once, make another visitor's trivial
reruns take 3.4-11.5 s (0.05 s alone). :class:`SessionGate` counts per client
address (:func:`gradlab.server.visitors.client_address`: the TCP peer, or the address a
balancer named in ``GRADLAB_TRUSTED_PROXIES`` appended to ``X-Forwarded-For``; an IPv6
client by its /64, which one household or phone usually holds whole):

* open sessions: at most ``LIMITS.sessions_per_address`` websockets at once;
* new sessions: a token bucket holding ``LIMITS.new_sessions_burst`` tokens, refilled at
  ``LIMITS.new_sessions_per_minute``; each accepted websocket takes one (a refused one
  takes none, so a browser's reconnect attempts do not lock it out for longer).

Over either, the websocket handshake is refused (HTTP 429 with ``Retry-After``), and a
page request (the HTML a tab loads before it opens its websocket) is answered with a short
HTML page saying in two sentences what happened and when to retry, so a person sees that
instead of a spinner. A class behind one school NAT address is one address: the numbers
are chosen for 30 students with up to three tabs each (docs/DEPLOYMENT.md, "Limits at the
door"). Per-visitor fairness inside the server (whose script runs next) is
:mod:`gradlab.ui.visitor_turns` and :mod:`gradlab.server.lanes`; this only limits how many
sessions there are to be fair between.

>>> book = SessionBook(max_open=2, burst=3, per_minute=60, clock=lambda: 0.0)
>>> [book.admit("203.0.113.7") for _ in range(2)]
[None, None]
>>> book.admit("203.0.113.7").reason, book.admit("198.51.100.1") is None
('open', True)
>>> address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9")
True
"""

from __future__ import annotations

import ipaddress
import math
import time
from dataclasses import dataclass, field
from html import escape
from typing import Any, Awaitable, Callable

from starlette.middleware import Middleware

from gradlab.limits import LIMITS
from gradlab.server.visitors import client_address

__all__ = ["STREAM_PATH", "OPEN_RETRY_SECONDS", "Refusal", "SessionBook", "SessionGate", "SESSION_GATE",
           "address_key", "scope_address", "is_stream_path", "is_page_request", "refusal_page",
           "keep_tcp_peer"]

#: Streamlit's websocket route, after ``server.baseUrlPath`` if one is set.
STREAM_PATH = "/_stcore/stream"
#: Retry-After when the address has too many sessions open: a guess (nobody knows when a tab
#: closes), long enough that a browser's reload loop does not hammer the server.
OPEN_RETRY_SECONDS = 30
#: Above this many addresses the book forgets the idle ones whose bucket is full (they would
#: start from a full bucket anyway), so a scan of many addresses cannot grow it without end.
FORGET_ABOVE = 4096

#: Path segments of Streamlit's non-page routes: anything else a GET asks for is a page
#: (Streamlit answers every other path with its index.html).
_ASSET_SEGMENTS = frozenset({"_stcore", "static", "media", "component", "components"})

_Message = dict[str, Any]
_Send = Callable[[_Message], Awaitable[None]]


@dataclass(frozen=True)
class Refusal:
    """Why an address may not open a session now: ``"open"`` (too many open) or ``"rate"``
    (too many new ones lately), the limit, and the seconds after which to retry."""

    reason: str
    limit: float
    retry_after: int


@dataclass
class _Entry:
    open: int
    tokens: float
    stamp: float = field(default=0.0)


class SessionBook:
    """Open sessions and a token bucket of new sessions, per address. No I/O, no locks:
    every call comes from the server's one event loop.

    >>> now = [0.0]
    >>> book = SessionBook(max_open=10, burst=2, per_minute=6, clock=lambda: now[0])
    >>> book.admit("a"), book.admit("a"), book.admit("a")
    (None, None, Refusal(reason='rate', limit=6, retry_after=10))
    >>> now[0] = 10.0; book.admit("a") is None  # one token back after 60/6 s
    True
    >>> book.release("a"); book.open_sessions("a")
    2
    """

    def __init__(self, max_open: int, burst: int, per_minute: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_open, self.burst, self.per_minute = max_open, burst, per_minute
        self.clock = clock
        self._entries: dict[str, _Entry] = {}

    def _entry(self, address: str) -> _Entry:
        now = self.clock()
        entry = self._entries.get(address)
        if entry is None:
            if len(self._entries) >= FORGET_ABOVE:
                self._forget_idle(now)
            entry = self._entries[address] = _Entry(open=0, tokens=float(self.burst), stamp=now)
        else:
            entry.tokens = min(float(self.burst), entry.tokens + (now - entry.stamp) * self.per_minute / 60.0)
            entry.stamp = now
        return entry

    def _forget_idle(self, now: float) -> None:
        full = [a for a, e in self._entries.items()
                if e.open == 0 and e.tokens + (now - e.stamp) * self.per_minute / 60.0 >= self.burst]
        for address in full:
            del self._entries[address]
        if len(self._entries) >= FORGET_ABOVE:  # a flood of addresses: forget every idle one
            for address in [a for a, e in self._entries.items() if e.open == 0]:
                del self._entries[address]

    def refusal(self, address: str) -> Refusal | None:
        """Why a new session from ``address`` would be refused now (None: it would not), taking nothing."""
        entry = self._entry(address)
        if entry.open >= self.max_open:
            return Refusal("open", self.max_open, OPEN_RETRY_SECONDS)
        if entry.tokens < 1.0:
            wait = math.ceil((1.0 - entry.tokens) * 60.0 / self.per_minute)
            return Refusal("rate", self.per_minute, max(1, wait))
        return None

    def admit(self, address: str) -> Refusal | None:
        """Count a new session from ``address`` (one token, one open session), or say why not."""
        refused = self.refusal(address)
        if refused is None:
            entry = self._entries[address]
            entry.open += 1
            entry.tokens -= 1.0
        return refused

    def release(self, address: str) -> None:
        """A session of ``address`` has ended."""
        entry = self._entries.get(address)
        if entry is not None and entry.open > 0:
            entry.open -= 1

    def open_sessions(self, address: str) -> int:
        entry = self._entries.get(address)
        return entry.open if entry else 0


def address_key(address: str) -> str:
    """The key an address is counted under: an IPv4 address as it is, an IPv6 one by its /64
    (an IPv4-mapped one as the IPv4 address); anything unreadable as it is.

    >>> address_key("::ffff:192.0.2.1"), address_key("2001:db8::5"), address_key("unix")
    ('192.0.2.1', '2001:db8::/64', 'unix')
    """
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def scope_address(scope: _Message, trusted=None) -> str:
    """The client address of an ASGI request or websocket, as :func:`address_key` counts it.

    Every ``X-Forwarded-For`` line is read, in order: a client may send its own line before
    the balancer's (HAProxy adds a line of its own; ``deploy/haproxy.cfg`` also deletes the
    client's), and only the hops appended by trusted balancers count (``trusted``: networks,
    by default ``GRADLAB_TRUSTED_PROXIES``).

    >>> from gradlab.server.visitors import parse_networks
    >>> scope = {"client": ("127.0.0.1", 5000), "headers": [(b"x-forwarded-for", b"6.6.6.6"),
    ...                                                    (b"x-forwarded-for", b"203.0.113.7")]}
    >>> scope_address(scope, trusted=()), scope_address(scope, trusted=parse_networks("127.0.0.1"))
    ('127.0.0.1', '203.0.113.7')
    """
    client = scope.get("client")
    peer = client[0] if client else None
    forwarded = ", ".join(value.decode("latin-1") for name, value in scope.get("headers", [])
                          if name.lower() == b"x-forwarded-for")
    return address_key(client_address(peer, forwarded or None, trusted))


def is_stream_path(path: str) -> bool:
    """Whether a (percent-decoded) path is Streamlit's websocket route, under any base URL path."""
    return path.rstrip("/").endswith(STREAM_PATH)


def is_page_request(scope: _Message) -> bool:
    """Whether an HTTP request asks for a page (the HTML a tab loads before its websocket):
    a GET or HEAD of a path that is none of Streamlit's asset or API routes and names no file.

    >>> [is_page_request({"type": "http", "method": "GET", "path": p})
    ...  for p in ("/", "/explorer", "/gradlab/grid", "/static/js/index.js", "/_stcore/health", "/favicon.png")]
    [True, True, True, False, False, False]
    """
    if scope.get("type") != "http" or scope.get("method") not in ("GET", "HEAD"):
        return False
    segments = [s for s in scope.get("path", "/").split("/") if s]
    return not _ASSET_SEGMENTS.intersection(segments) and not (segments and "." in segments[-1])


def refusal_sentences(refused: Refusal) -> str:
    """What the 429 page says: what happened, and when to try again.

    >>> refusal_sentences(Refusal("rate", 60, 4))
    'Too many new GradLab tabs were opened from your network address in a short time. Reload this page in 4 seconds.'
    """
    if refused.reason == "open":
        return (f"GradLab already has {refused.limit:g} tabs open from your network address, the most it "
                f"serves one address at once. Close a few GradLab tabs, then reload this page in about "
                f"{refused.retry_after} seconds.")
    return ("Too many new GradLab tabs were opened from your network address in a short time. "
            f"Reload this page in {refused.retry_after} second{'s' if refused.retry_after != 1 else ''}.")


def refusal_page(refused: Refusal) -> bytes:
    """The HTML of a refused page request (no script, no style: it must show under any CSP)."""
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>GradLab: too many tabs</title></head>\n<body><h1>Too many GradLab tabs</h1>\n"
            f"<p>{escape(refusal_sentences(refused))}</p></body></html>\n").encode()


def _refusal_headers(refused: Refusal, content_type: bytes, body: bytes) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", content_type), (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(refused.retry_after).encode()), (b"cache-control", b"no-store")]


class SessionGate:
    """ASGI middleware: :class:`SessionBook`'s limits on the websocket handshake of
    ``/_stcore/stream`` (refused: 429 and ``Retry-After`` where the server can send a
    response to a handshake, else closed before it is accepted) and on page requests
    (refused: :func:`refusal_page`, 429, ``Retry-After``). A page request only looks at the
    book (a tab's websocket then takes the token); everything else passes through.

    ``max_open``, ``burst`` and ``per_minute`` default to ``LIMITS.sessions_per_address``,
    ``LIMITS.new_sessions_burst`` and ``LIMITS.new_sessions_per_minute``.
    """

    def __init__(self, app: Callable[..., Awaitable[None]], *, max_open: int | None = None,
                 burst: int | None = None, per_minute: float | None = None,
                 clock: Callable[[], float] = time.monotonic, trusted=None) -> None:
        self.app = app
        self.trusted = trusted
        self.book = SessionBook(LIMITS.sessions_per_address if max_open is None else max_open,
                                LIMITS.new_sessions_burst if burst is None else burst,
                                LIMITS.new_sessions_per_minute if per_minute is None else per_minute, clock)

    async def __call__(self, scope: _Message, receive: Any, send: _Send) -> None:
        if scope["type"] == "websocket" and is_stream_path(scope.get("path", "")):
            address = scope_address(scope, self.trusted)
            refused = self.book.admit(address)
            if refused is not None:
                await _refuse_handshake(scope, receive, send, refused)
                return
            try:
                await self.app(scope, receive, send)
            finally:
                self.book.release(address)
            return
        if is_page_request(scope):
            refused = self.book.refusal(scope_address(scope, self.trusted))
            if refused is not None:
                body = refusal_page(refused)
                await send({"type": "http.response.start", "status": 429,
                            "headers": _refusal_headers(refused, b"text/html; charset=utf-8", body)})
                await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})
                return
        await self.app(scope, receive, send)


async def _refuse_handshake(scope: _Message, receive: Any, send: _Send, refused: Refusal) -> None:
    """Refuse a websocket before accepting it: an HTTP 429 where the server supports the ASGI
    ``websocket.http.response`` extension (uvicorn does), else a close (HTTP 403)."""
    message = await receive()  # websocket.connect: the handshake the client sent
    if message.get("type") != "websocket.connect":
        return  # the client left already
    if "websocket.http.response" in scope.get("extensions", {}):
        body = refusal_sentences(refused).encode()
        await send({"type": "websocket.http.response.start", "status": 429,
                    "headers": _refusal_headers(refused, b"text/plain; charset=utf-8", body)})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})


#: What ``st.App(..., middleware=[..., SESSION_GATE, ...])`` takes.
SESSION_GATE = Middleware(SessionGate)


def keep_tcp_peer(config: Any | None) -> bool:
    """Stop uvicorn replacing the client address with ``X-Forwarded-For`` from loopback peers;
    False when ``config`` is None.

    Internal: ``uvicorn.Config.proxy_headers`` (default True), read at the end of
    ``Config.load()``, after the app's module is imported, to wrap the app in
    ``ProxyHeadersMiddleware``, which believes ``X-Forwarded-For`` from
    ``forwarded_allow_ips`` (``FORWARDED_ALLOW_IPS``, by default 127.0.0.1). Why: GradLab
    believes that header only from ``GRADLAB_TRUSTED_PROXIES``
    (:mod:`gradlab.server.visitors`), and the session limits must see the TCP peer to
    apply that rule; any process on the machine could otherwise pick its address. Call it
    with :func:`gradlab.server.headers.uvicorn_config_loading` from the module uvicorn
    imports. If it goes: a loopback client's own ``X-Forwarded-For`` is believed again
    (tests/test_compat.py and tests/test_edge_server.py fail).

    >>> class Loading: proxy_headers = True
    >>> config = Loading(); keep_tcp_peer(config), config.proxy_headers
    (True, False)
    """
    if config is None:
        return False
    config.proxy_headers = False
    return True
