"""The door of a public link, without a server: serve.py's refused routes, its headers, and
the per-address session limits (gradlab/server/headers.py, gradlab/server/edge.py), as ASGI
calls; the numbers against the class they must serve; HAProxy's copy of the policy.

tests/test_edge_server.py runs the same against a real ``streamlit run serve.py`` and HAProxy.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
import streamlit
from async_helpers import run_async

from gradlab.limits import limits_from
from gradlab.server.edge import OPEN_RETRY_SECONDS, FORGET_ABOVE, SessionBook, SessionGate, address_key, scope_address
from gradlab.server.headers import CSP, SECURITY_HEADERS, UploadsRefused, is_upload_path
from gradlab.server.visitors import parse_networks

REPO_ROOT = Path(__file__).resolve().parents[1]
HAPROXY_CFG = (REPO_ROOT / "deploy" / "haproxy.cfg").read_text(encoding="utf-8")


# ------------------------------------------------------------------ uploads


@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "OPTIONS", "GET", "PATCH"])
@pytest.mark.parametrize("path", ["/_stcore/upload_file/0b2c/1", "/_stcore/upload_file", "/_stcore/upload_file/",
                                  "/gradlab/_stcore/upload_file/s/f", "//_stcore/upload_file/s/f"])
def test_every_method_on_the_upload_route_is_refused_before_streamlit_sees_it(method, path):
    reached = []

    async def streamlit_app(scope, receive, send):
        reached.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})

    sent = []

    async def send(message):
        sent.append(message)

    run_async(UploadsRefused(streamlit_app)({"type": "http", "method": method, "path": path}, None, send))
    assert reached == [] and sent[0]["status"] == 403, sent
    assert sent[1]["body"] == b"GradLab takes no file uploads."


@pytest.mark.parametrize("path", ["/", "/explorer", "/_stcore/health", "/_stcore/uploaded", "/upload_file/x",
                                  "/static/js/upload_file.js"])
def test_other_paths_are_not_upload_paths(path):
    assert not is_upload_path(path)


# ------------------------------------------------------------------ headers


def _inline_scripts(html: str) -> list[str]:
    return re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", html, re.S)


def test_the_policy_allows_streamlit_s_inline_script_by_its_hash_and_no_other_inline_script():
    html = (Path(streamlit.__file__).parent / "static" / "index.html").read_text(encoding="utf-8")
    hashes = {"'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
              for s in _inline_scripts(html)}
    script_src = next(d for d in CSP.split("; ") if d.startswith("script-src ")).split()[1:]
    assert hashes and hashes == {s for s in script_src if s.startswith("'sha256-")}, \
        "Streamlit's index.html changed its inline script: put its hash in gradlab/server/headers.py's CSP " \
        f"and deploy/haproxy.cfg ({sorted(hashes)})"
    assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src


def test_the_policy_keeps_the_frame_rule_and_refuses_plugins_and_other_sites():
    directives = dict(d.split(" ", 1) for d in CSP.split("; "))
    assert directives["frame-ancestors"] == "'self'" and directives["object-src"] == "'none'"
    assert directives["default-src"] == "'self'" and directives["connect-src"] == "'self'"
    assert directives["base-uri"] == "'self'" and directives["form-action"] == "'self'"
    assert "*" not in CSP and "http:" not in CSP and " https: " not in f"{CSP} "


def test_haproxy_sends_the_same_headers_on_every_answer_and_no_server_banner():
    csp = re.search(r'http-after-response set-header Content-Security-Policy "([^"]*)"', HAPROXY_CFG)
    assert csp and csp.group(1) == CSP, "deploy/haproxy.cfg's CSP differs from gradlab/server/headers.py's"
    for name, value in SECURITY_HEADERS[1:]:
        assert re.search(rf"http-after-response set-header {name.decode()} {value.decode()}\n",
                         HAPROXY_CFG, re.IGNORECASE), name
    assert "http-after-response del-header server" in HAPROXY_CFG
    assert "http-request deny deny_status 403 if { path,url_dec -m sub /_stcore/upload_file }" in HAPROXY_CFG


# ------------------------------------------------------------------ the session book


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_address_keeps_at_most_its_cap_open_and_gets_a_place_back_when_one_closes():
    book = SessionBook(max_open=3, burst=10, per_minute=60, clock=Clock())
    assert [book.admit("h") for _ in range(3)] == [None] * 3
    refused = book.admit("h")
    assert refused.reason == "open" and refused.retry_after == OPEN_RETRY_SECONDS and refused.limit == 3
    assert book.admit("v") is None  # another address is not affected
    book.release("h")
    assert book.admit("h") is None and book.open_sessions("h") == 3


def test_new_sessions_come_from_a_bucket_refilled_at_the_rate_and_a_refusal_costs_nothing():
    clock = Clock()
    book = SessionBook(max_open=100, burst=4, per_minute=30, clock=clock)  # one token every 2 s
    assert [book.admit("h") for _ in range(4)] == [None] * 4
    for _ in range(20):  # a reconnect loop, refused every time
        refused = book.admit("h")
        assert refused.reason == "rate" and refused.retry_after == 2
    clock.now += 2.0
    assert book.admit("h") is None  # the refusals took no token
    assert book.admit("h").retry_after == 2
    clock.now += 3600
    assert [book.admit("h") for _ in range(4)] == [None] * 4  # full again, never over the burst
    assert book.admit("h") is not None


def test_a_page_request_looks_without_taking():
    book = SessionBook(max_open=2, burst=2, per_minute=60, clock=Clock())
    assert all(book.refusal("h") is None for _ in range(10))
    assert book.admit("h") is None and book.admit("h") is None
    assert book.refusal("h").reason == "open"


def test_the_book_forgets_idle_addresses_with_a_full_bucket_not_open_ones():
    clock = Clock()
    book = SessionBook(max_open=5, burst=5, per_minute=60, clock=clock)
    book.admit("holder")
    book.admit("spent")
    for i in range(FORGET_ABOVE):
        book.refusal(f"10.0.{i // 256}.{i % 256}")
    assert len(book._entries) <= FORGET_ABOVE + 1
    assert book.open_sessions("holder") == 1  # an address with an open session is never forgotten


@pytest.mark.parametrize(("address", "key"), [
    ("203.0.113.7", "203.0.113.7"), ("::ffff:203.0.113.7", "203.0.113.7"),
    ("2001:db8:aa:bb:1::1", "2001:db8:aa:bb::/64"), ("2001:db8:aa:bb:ffff::2", "2001:db8:aa:bb::/64"),
    ("2001:db8:aa:bc::1", "2001:db8:aa:bc::/64")])
def test_an_ipv6_client_is_counted_by_its_64(address, key):
    assert address_key(address) == key


# ------------------------------------------------------------------ the gate, as ASGI


def _scope(kind: str, path: str, peer: str, forwarded: tuple[str, ...] = (), method: str = "GET") -> dict:
    headers = [(b"x-forwarded-for", f.encode()) for f in forwarded]
    scope = {"type": kind, "path": path, "client": (peer, 40000), "headers": headers}
    if kind == "http":
        scope["method"] = method
    else:
        scope["extensions"] = {"websocket.http.response": {}}
    return scope


class FakeStreamlit:
    """Accepts every websocket and holds it open until the test lets it close."""

    def __init__(self) -> None:
        self.open = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.accept"})
            self.open += 1
            message = await receive()  # the test's websocket.disconnect
            assert message["type"] == "websocket.disconnect"
            self.open -= 1
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"<html>the app</html>"})


async def _gate_story(gate: SessionGate, app: FakeStreamlit):
    """Three hog tabs, a refused fourth, the hog's page, the victim's page and tab, then one hog
    tab closes and the hog may open one more."""
    import asyncio

    outcomes = {}

    async def tab(peer, forwarded=()):
        inbox: asyncio.Queue = asyncio.Queue()
        await inbox.put({"type": "websocket.connect"})
        sent = []

        async def send(message):
            sent.append(message)

        task = asyncio.create_task(gate(_scope("websocket", "/_stcore/stream", peer, forwarded), inbox.get, send))
        for _ in range(100):
            await asyncio.sleep(0)
            if sent:
                break
        return task, inbox, sent

    async def page(peer, forwarded=()):
        sent = []

        async def send(message):
            sent.append(message)

        await gate(_scope("http", "/explorer", peer, forwarded), None, send)
        return sent

    hog = [await tab("127.0.0.2", (f"10.9.9.{i}",)) for i in range(3)]  # its own X-Forwarded-For: not believed
    fourth = await tab("127.0.0.2", ("127.0.0.3",))
    outcomes["hog accepted"] = [t[2][0]["type"] for t in hog]
    outcomes["fourth"] = fourth[2]
    outcomes["hog page"] = await page("127.0.0.2")
    outcomes["victim page"] = await page("127.0.0.3")
    victim = await tab("127.0.0.3")
    outcomes["victim"] = victim[2][0]["type"]
    outcomes["open in app"] = app.open
    task, inbox, _ = hog[0]
    await inbox.put({"type": "websocket.disconnect", "code": 1001})
    await task
    outcomes["after one closed"] = (await tab("127.0.0.2"))[2][0]["type"]
    return outcomes


def test_the_gate_refuses_the_handshake_and_the_page_over_the_cap_and_lets_others_in():
    app = FakeStreamlit()
    gate = SessionGate(app, max_open=3, burst=50, per_minute=60, trusted=())
    out = run_async(_gate_story(gate, app))
    assert out["hog accepted"] == ["websocket.accept"] * 3
    start, body = out["fourth"]
    assert start["type"] == "websocket.http.response.start" and start["status"] == 429
    assert dict(start["headers"])[b"retry-after"] == str(OPEN_RETRY_SECONDS).encode()
    assert b"3 tabs open from your network address" in body["body"]
    page_start, page_body = out["hog page"]
    assert page_start["status"] == 429 and dict(page_start["headers"])[b"content-type"].startswith(b"text/html")
    assert b"Close a few GradLab tabs, then reload this page in about 30 seconds." in page_body["body"]
    assert out["victim page"][0]["status"] == 200 and out["victim page"][1]["body"] == b"<html>the app</html>"
    assert out["victim"] == "websocket.accept" and out["open in app"] == 4
    assert out["after one closed"] == "websocket.accept"


def test_a_trusted_balancer_s_forwarded_address_is_counted_and_an_untrusted_one_is_not():
    trusted = parse_networks("127.0.0.4")
    through = _scope("websocket", "/_stcore/stream", "127.0.0.4", ("6.6.6.6", "203.0.113.7"))
    assert scope_address(through, trusted) == "203.0.113.7"  # the balancer's hop, not the client's own line
    assert scope_address(through, ()) == "127.0.0.4"
    direct = _scope("websocket", "/_stcore/stream", "127.0.0.2", ("203.0.113.7",))
    assert scope_address(direct, trusted) == "127.0.0.2"


def test_the_gate_lets_everything_but_pages_and_the_stream_through_when_an_address_is_over():
    app = FakeStreamlit()
    gate = SessionGate(app, max_open=1, burst=1, per_minute=1, trusted=())
    gate.book.admit("127.0.0.2")  # over both limits now
    for path in ("/_stcore/health", "/static/js/index.js", "/_stcore/host-config", "/favicon.png"):
        sent = []

        async def send(message, sent=sent):
            sent.append(message)

        run_async(gate(_scope("http", path, "127.0.0.2"), None, send))
        assert sent[0]["status"] == 200, path


# ------------------------------------------------------------------ the numbers


#: A class behind one school NAT address, as docs/DEPLOYMENT.md ("Limits at the door") counts it.
STUDENTS, TABS_EACH = 30, 3


@pytest.mark.parametrize("profile", ["", "classroom"])
def test_the_door_limits_hold_a_class_behind_one_address(profile):
    limits = limits_from(profile)
    assert limits.sessions_per_address >= STUDENTS * TABS_EACH * 4 // 3
    assert limits.new_sessions_burst >= STUDENTS * TABS_EACH  # every tab reconnecting at once
    assert limits.new_sessions_per_minute >= 2 * STUDENTS  # each student reloading every 30 s


def test_the_haproxy_limits_hold_the_same_class():
    defaults = dict(re.findall(r"presetenv (GRADLAB_LB_\w+) (\d+)", HAPROXY_CFG))
    connections, connection_rate, request_rate = (int(defaults[f"GRADLAB_LB_{n}"])
                                                  for n in ("CONNECTIONS", "CONNECTION_RATE", "REQUEST_RATE"))
    browser_connections, first_visit_requests = 6, 76  # Chromium: per host; files of a first visit (measured)
    assert connections >= STUDENTS * (browser_connections + TABS_EACH)
    assert connection_rate >= STUDENTS * (browser_connections + TABS_EACH)
    assert request_rate >= STUDENTS * first_visit_requests
