"""The door of a public link, against real servers on loopback: ``streamlit run serve.py``,
``streamlit run app.py`` and HAProxy with ``deploy/haproxy.cfg``.

* Uploads: with a real tab open (its session is what an upload names) and the XSRF token
  echoed as a browser would, 40 PUTs of 1 MB to ``/_stcore/upload_file/<session>/<n>`` are
  refused by serve.py (403), by HAProxy (403) and, for a plain ``streamlit run app.py``, by
  ``server.maxUploadSize = 0`` (413), and the server's resident memory stays within 20 MB
  (before, each PUT was kept: 2,000 of them took a server from 503 MB to 2,499 MB).
* Per-address limits: clients on distinct loopback addresses (Linux routes all of
  127.0.0.0/8 to lo) stand for a hog (127.0.0.2) and a victim (127.0.0.3). Past the cap
  (lowered here through GRADLAB_LIMITS) the hog's websocket handshakes are refused with
  429 and its page request gets the page that says why, while the victim's page and tab
  work; an untrusted client's X-Forwarded-For changes nothing, a trusted balancer's names
  the client. Through HAProxy the same, plus HAProxy's own limits per source.

Every loop is limited in count; nothing is sent to a non-loopback address.
"""

from __future__ import annotations

import asyncio
import http.client
import shutil
import socket
import urllib.parse
from contextlib import AsyncExitStack

import pytest
from async_helpers import run_async
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from deploy.run_local import Balancer
from gradlab.server.headers import CSP
from harness.processes import rss_kib
from harness.server import Server, free_port
from harness.session import StreamlitSession

pytestmark = [pytest.mark.server, pytest.mark.slow]

needs_haproxy = pytest.mark.skipif(shutil.which("haproxy") is None,
                                   reason="HAProxy is not installed (apt-get install -y haproxy)")

HOG, VICTIM = "127.0.0.2", "127.0.0.3"
PUTS, MEGABYTE = 40, 1_000_000
RSS_GROWTH_KIB = 20 * 1024
#: The limits the session tests lower the classroom numbers to, so a test reaches them in a few tabs.
CAP, BURST = 4, 8
LOW_LIMITS = f"sessions_per_address={CAP}, new_sessions_burst={BURST}, new_sessions_per_minute=1"


# ------------------------------------------------------------------ clients on loopback


def _request(base: str, path: str, source: str = "127.0.0.1", method: str = "GET", body: bytes | None = None,
             headers: dict[str, str] | None = None, conn: http.client.HTTPConnection | None = None):
    """One HTTP request from ``source``: (connection, status, lower-cased headers, body)."""
    url = urllib.parse.urlsplit(base)
    conn = conn or http.client.HTTPConnection(url.hostname, url.port, source_address=(source, 0), timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    return conn, response.status, {k.lower(): v for k, v in response.getheaders()}, data


def _xsrf_token(base: str) -> str:
    """The ``_streamlit_xsrf`` cookie a browser gets from its first request."""
    conn, _, headers, _ = _request(base, "/_stcore/health")
    conn.close()
    return headers["set-cookie"].split(";")[0].split("=", 1)[1]


def _multipart(size: int) -> tuple[bytes, str]:
    boundary = "gradlab-upload-probe"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    return head + b"x" * size + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def _put(base: str, path: str, body: bytes, headers: dict[str, str]) -> int:
    """PUT ``body`` and read the answer's status, even when the server answers and closes before
    reading all of it (HAProxy's deny does: the client then sees a broken pipe while it sends)."""
    url = urllib.parse.urlsplit(base)
    head = "".join(f"{k}: {v}\r\n" for k, v in {**headers, "Host": url.netloc,
                                                 "Content-Length": str(len(body))}.items())
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        try:
            sock.sendall(f"PUT {path} HTTP/1.1\r\n{head}Connection: close\r\n\r\n".encode() + body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the answer came first; it is in the socket's buffer
        answer = sock.makefile("rb").readline()
    return int(answer.split()[1])


def _upload_statuses(base: str, session_id: str, token: str, count: int, size: int = MEGABYTE) -> dict[int, int]:
    """PUT ``count`` files of ``size`` bytes to the session's upload route, as the file uploader
    does (XSRF cookie and header): {status: how many}."""
    body, content_type = _multipart(size)
    headers = {"Cookie": f"_streamlit_xsrf={token}", "X-Xsrftoken": token, "Content-Type": content_type}
    statuses: dict[int, int] = {}
    for n in range(count):
        status = _put(base, f"/_stcore/upload_file/{session_id}/{n}", body, headers)
        statuses[status] = statuses.get(status, 0) + 1
    return statuses


async def _with_open_tab(base: str, token: str, work):
    """Open a real tab (the home page runs) with the browser's XSRF cookie; ``work(session_id)``
    runs in a thread while the tab stays open."""
    async with StreamlitSession(base, cookies={"_streamlit_xsrf": token}, run_timeout=90) as tab:
        first = await tab.open()
        assert first.ok, first.protocol_error or first.status
        return await asyncio.to_thread(work, tab.session_id)


async def _handshake(base: str, source: str, forwarded: str | None = None):
    """A websocket to /_stcore/stream from ``source``: (status, headers, body, open connection or None)."""
    url = base.replace("http", "ws", 1) + "/_stcore/stream"
    try:
        ws = await connect(url, subprotocols=["streamlit"], origin=base, local_addr=(source, 0), proxy=None,
                           open_timeout=30, additional_headers={"X-Forwarded-For": forwarded} if forwarded else None)
    except InvalidStatus as refused:
        response = refused.response
        return response.status_code, {k.lower(): v for k, v in response.headers.raw_items()}, bytes(response.body), None
    return 101, {}, b"", ws


# ------------------------------------------------------------------ uploads


def test_serve_py_refuses_uploads_to_an_open_session_and_its_memory_stays_flat():
    with Server(free_port(), app="serve.py") as server:
        token = _xsrf_token(server.base_url)

        def put_everything(session_id: str):
            before = rss_kib(server.proc.pid)
            statuses = _upload_statuses(server.base_url, session_id, token, PUTS)
            others = {}
            for method in ("POST", "DELETE", "OPTIONS", "PATCH"):
                conn, status, headers, body = _request(server.base_url, f"/_stcore/upload_file/{session_id}/0",
                                                       method=method, headers={"X-Xsrftoken": token})
                conn.close()
                others[method] = (status, body, headers.get("content-security-policy"))
            return statuses, others, rss_kib(server.proc.pid) - before

        statuses, others, growth = run_async(_with_open_tab(server.base_url, token, put_everything))
    assert statuses == {403: PUTS}, statuses
    assert all(o == (403, b"GradLab takes no file uploads.", CSP) for o in others.values()), others
    assert growth < RSS_GROWTH_KIB, f"RSS grew {growth / 1024:.0f} MB over {PUTS} refused uploads"


@needs_haproxy
def test_a_plain_streamlit_run_refuses_uploads_by_its_size_setting_and_haproxy_by_the_route():
    """``streamlit run app.py`` (no middleware) with .streamlit/config.toml's maxUploadSize = 0
    answers 413 before reading a body; HAProxy in front answers 403 to the route itself."""
    with Server(free_port(), app="app.py") as server, Balancer(free_port(), [server.port]) as lb:
        token = _xsrf_token(server.base_url)

        def put_both_ways(session_id: str):
            before = rss_kib(server.proc.pid)
            direct = _upload_statuses(server.base_url, session_id, token, PUTS)
            through = _upload_statuses(lb.url, session_id, token, PUTS)
            return direct, through, rss_kib(server.proc.pid) - before

        direct, through, growth = run_async(_with_open_tab(server.base_url, token, put_both_ways))
    assert direct == {413: PUTS}, direct
    assert through == {403: PUTS}, through
    assert growth < RSS_GROWTH_KIB, f"RSS grew {growth / 1024:.0f} MB over {2 * PUTS} refused uploads"


# ------------------------------------------------------------------ sessions per address


async def _fill(stack: AsyncExitStack, base: str, source: str, count: int, forwarded=lambda i: None) -> list[int]:
    """Open ``count`` websockets from ``source``, one after another, kept open on ``stack``: their statuses."""
    statuses = []
    for i in range(count):
        status, _, _, ws = await _handshake(base, source, forwarded(i))
        statuses.append(status)
        if ws is not None:
            stack.push_async_callback(ws.close)
    return statuses


async def _after_closing(base: str, source: str, tries: int = 50):
    """The first handshake from ``source`` not refused for open sessions, once closed ones are
    counted out (the server learns of a close a moment after the client sends it)."""
    for _ in range(tries):
        status, headers, body, ws = await _handshake(base, source)
        if status != 429 or b"tabs open" not in body:
            return status, headers, body, ws
        await asyncio.sleep(0.1)
    return status, headers, body, ws


async def _victim_tab(base: str):
    async with StreamlitSession(base, source=VICTIM, run_timeout=90) as tab:
        return await tab.open()


async def _direct_story(base: str) -> dict:
    out: dict = {}
    async with AsyncExitStack() as hog:
        # its own X-Forwarded-For (the victim's address, then others) is not believed
        out["hog"] = await _fill(hog, base, HOG, CAP + 2, forwarded=lambda i: VICTIM if i == CAP else f"198.51.100.{i}")
        out["hog refused"] = await _handshake(base, HOG)
        out["hog page"] = await asyncio.to_thread(_request, base, "/explorer", HOG)
        out["victim page"] = await asyncio.to_thread(_request, base, "/explorer", VICTIM)
        out["victim tab"] = await _victim_tab(base)
        # 127.0.0.1 is the one address uvicorn itself would believe X-Forwarded-For from
        async with AsyncExitStack() as local:
            out["loopback"] = await _fill(local, base, "127.0.0.1", CAP + 1, forwarded=lambda i: f"203.0.113.{i}")
        # a trusted balancer (GRADLAB_TRUSTED_PROXIES=127.0.0.4) names its clients
        async with AsyncExitStack() as balancer:
            out["trusted same client"] = await _fill(balancer, base, "127.0.0.4", CAP + 1,
                                                     forwarded=lambda i: "203.0.113.7")
            out["trusted other client"] = await _fill(balancer, base, "127.0.0.4", 1, forwarded=lambda i: "203.0.113.8")
    # the hog's tabs closed: it may open more, until its bucket (BURST new sessions) is empty
    async with AsyncExitStack() as hog:
        first = await _after_closing(base, HOG)
        if first[3] is not None:
            hog.push_async_callback(first[3].close)
        out["hog again"] = [first[0]] + await _fill(hog, base, HOG, BURST - CAP - 1)
    out["hog over the rate"] = await _after_closing(base, HOG)
    out["hog page over the rate"] = await asyncio.to_thread(_request, base, "/", HOG)
    return out


def _assert_refused_page(response, *sentences: str) -> None:
    conn, status, headers, body = response
    conn.close()
    assert status == 429, (status, body[:200])
    assert headers["content-type"].startswith("text/html") and int(headers["retry-after"]) >= 1, headers
    assert headers["content-security-policy"] == CSP and "server" not in headers, headers
    for sentence in sentences:
        assert sentence.encode() in body, body


def test_serve_py_refuses_a_hog_s_tabs_past_the_cap_and_the_rate_while_the_victim_gets_in():
    env = {"GRADLAB_LIMITS": LOW_LIMITS, "GRADLAB_TRUSTED_PROXIES": "127.0.0.4"}
    with Server(free_port(), app="serve.py", extra_env=env) as server:
        out = run_async(_direct_story(server.base_url))
    assert out["hog"] == [101] * CAP + [429, 429], out["hog"]
    status, headers, body, _ = out["hog refused"]
    assert status == 429 and headers["retry-after"] == "30", headers
    assert body.startswith(f"GradLab already has {CAP} tabs open from your network address".encode()), body
    _assert_refused_page(out["hog page"], f"GradLab already has {CAP} tabs open from your network address",
                         "Close a few GradLab tabs, then reload this page")
    assert out["victim page"][1] == 200 and b'<div id="root">' in out["victim page"][3]
    assert out["victim tab"].ok and out["victim tab"].exceptions == [], out["victim tab"].status
    assert out["loopback"] == [101] * CAP + [429], out["loopback"]  # its X-Forwarded-For was not believed
    assert out["trusted same client"] == [101] * CAP + [429], out["trusted same client"]
    assert out["trusted other client"] == [101]
    assert out["hog again"] == [101] * (BURST - CAP), out["hog again"]
    status, headers, body, _ = out["hog over the rate"]
    assert status == 429 and int(headers["retry-after"]) >= 1 and b"in a short time" in body, (status, body)
    _assert_refused_page(out["hog page over the rate"], "Too many new GradLab tabs were opened from your network "
                                                        "address in a short time. Reload this page in")


# ------------------------------------------------------------------ through HAProxy

#: HAProxy's per-source limits, lowered so a test reaches each in a few requests (one address each).
LB_CONNECTIONS, LB_CONNECTION_RATE, LB_REQUEST_RATE = 8, 20, 40
LB_ENV = {"GRADLAB_LB_CONNECTIONS": str(LB_CONNECTIONS), "GRADLAB_LB_CONNECTION_RATE": str(LB_CONNECTION_RATE),
          "GRADLAB_LB_REQUEST_RATE": str(LB_REQUEST_RATE)}


def _statuses(base: str, source: str, count: int, reuse: bool, keep: list | None = None):
    """``count`` GETs of /_stcore/health from ``source``: on one connection (``reuse``), or each on
    a new one (kept open on ``keep`` if given, else closed). Their statuses and the last answer."""
    conn, statuses, last = None, [], None
    for _ in range(count):
        last = _request(base, "/_stcore/health", source, conn=conn if reuse else None)
        statuses.append(last[1])
        if reuse:
            conn = last[0]
        elif keep is not None:
            keep.append(last[0])
        else:
            last[0].close()
    if conn is not None:
        conn.close()
    return statuses, last


async def _haproxy_story(base: str) -> dict:
    out: dict = {}
    async with AsyncExitStack() as hog:
        out["hog"] = await _fill(hog, base, HOG, CAP + 1, forwarded=lambda i: VICTIM)
        out["hog page"] = await asyncio.to_thread(_request, base, "/explorer", HOG)
        out["victim page"] = await asyncio.to_thread(_request, base, "/explorer", VICTIM)
        out["victim tab"] = await _victim_tab(base)
    kept: list = []
    out["connections"] = await asyncio.to_thread(_statuses, base, "127.0.0.5", LB_CONNECTIONS + 1, False, kept)
    for conn in kept:
        conn.close()
    out["connection rate"] = await asyncio.to_thread(_statuses, base, "127.0.0.6", LB_CONNECTION_RATE + 1, False)
    out["request rate"] = await asyncio.to_thread(_statuses, base, "127.0.0.7", LB_REQUEST_RATE + 1, True)
    out["victim after"] = await asyncio.to_thread(_statuses, base, VICTIM, 3, True)
    return out


@needs_haproxy
def test_through_haproxy_the_replica_counts_the_client_and_haproxy_limits_each_source():
    env = {"GRADLAB_LIMITS": LOW_LIMITS, "GRADLAB_TRUSTED_PROXIES": "127.0.0.1"}  # HAProxy on loopback
    with Server(free_port(), app="serve.py", extra_env=env) as server, \
            Balancer(free_port(), [server.port], env=LB_ENV) as lb:
        out = run_async(_haproxy_story(lb.url))
    # the replica counted the hog by the address HAProxy saw, whatever X-Forwarded-For it sent
    assert out["hog"] == [101] * CAP + [429], out["hog"]
    _assert_refused_page(out["hog page"], f"GradLab already has {CAP} tabs open from your network address")
    assert out["victim page"][1] == 200 and out["victim tab"].ok, out["victim tab"].status
    haproxy_page = "Too many connections or requests came from your network address in the last few seconds."
    for limit, count in (("connections", LB_CONNECTIONS), ("connection rate", LB_CONNECTION_RATE),
                         ("request rate", LB_REQUEST_RATE)):
        statuses, last = out[limit]
        assert statuses == [200] * count + [429], (limit, statuses)
        _assert_refused_page(last, haproxy_page, "Wait 10 seconds, then reload this page.")
        assert last[2]["retry-after"] == "10"
    assert out["victim after"][0] == [200] * 3
