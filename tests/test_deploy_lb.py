"""Two replicas behind the real HAProxy of ``deploy/``, on loopback, with a class running through it.

``benchmarks/load_test.py --lb haproxy`` starts two ``streamlit run app.py``
replicas, HAProxy with ``deploy/haproxy.cfg`` (its affinity cookie, health
checks and websocket tunnels) in front of them, and a class spread over every
page: each tab is a browser of its own that loads the page's HTML, keeps the
cookie HAProxy sets and opens its websocket through HAProxy, then reruns with
changed widget values (and the URL's query values) every 0.5-3 s. Partway
through, the second replica is killed (SIGKILL). The test checks:

* every browser's page loads and websockets reached one replica (HAProxy names
  it in ``X-GradLab-Replica``), until its replica was killed;
* the killed replica cost only its own sessions one lost run each: they
  reconnected through HAProxy to the other replica and the view came back from
  the URL (same page, same query values, a run that finished with no exception);
* the other sessions saw no error, and no run anywhere showed an exception;
* a class of 30 sessions, then a burst of 20 simultaneous reruns, run with
  zero errors and zero exception elements.

Its latencies are printed, not asserted: on this shared 2-core machine the class p95
with two replicas measured 0.35 s in one CI run and 1.24 s in the next (other jobs at
0.23 cores both times), and 1.5-1.6 s after the kill, when one replica serves the class.
``benchmarks/load_test.py`` states the targets met or missed; docs/DEPLOYMENT.md has the
figures.

"A replica killed mid-class only costs its own sessions a reconnect": the runs
lost on the killed replica and its sessions' reconnect runs (a new session on the
surviving replica, rebuilt from the URL) are that cost, counted and checked apart,
and left out of the class p95 (:func:`benchmarks.load_report.class_targets`). The memory
target (RSS back within 10 % a minute after the class) needs a minute of settling:
``benchmarks/load_test.py`` measures it, not CI.

A second, short test checks the security headers of a real ``streamlit run serve.py``
and of HAProxy (a page, a static file, the health check, and the refusals), and that
neither names its server software.
Set GRADLAB_TEST_PORT to choose the ports (HAProxy's; the replicas take the next two).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import urllib.error
import urllib.request

import pytest

from gradlab.server.headers import CSP
from gradlab.ui.navigation import PAGES

from benchmarks.load_test import main as load_test_main
from deploy.run_local import Balancer, local_config
from harness.server import Server, free_port

# Locally a missing HAProxy skips; .ci/run installs it, and a skipped test fails CI.
pytestmark = [pytest.mark.server, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("haproxy") is None,
                                 reason="HAProxy is not installed (apt-get install -y haproxy)")]

CLASS_SESSIONS = 30
BURST = 20
SECURITY_HEADERS = {"content-security-policy": CSP, "x-frame-options": "SAMEORIGIN",
                    "x-content-type-options": "nosniff"}


def _run_load_test(argv: list[str]) -> int:
    # A thread of its own: the browser tests' Playwright session keeps an event loop
    # running in the main thread, where asyncio.run() refuses to start.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(load_test_main, argv).result()


def _class(tmp_path, capsys) -> tuple[int, str, dict]:
    """A class of 30 sessions through HAProxy: (exit status, report, summary)."""
    summary_file = tmp_path / "summary.json"
    # 30 sessions over every page, 0.5-3 s between reruns, then a burst of 20; 20 s of class
    # (~250 runs on a quiet machine, fewer on a busy one), r2 killed 8 s in.
    argv = ["--page", "all", "--replicas", "2", "--lb", "haproxy", "--limits", "classroom",
            "--sessions", str(CLASS_SESSIONS), "--duration", "20", "--kill-at", "8",
            "--burst", str(BURST), "--browsers", "0", "--settle", "1", "--json", str(summary_file)]
    if os.environ.get("GRADLAB_TEST_PORT"):  # HAProxy's port; the replicas take the next two
        argv += ["--port", os.environ["GRADLAB_TEST_PORT"]]
    status = _run_load_test(argv)
    out = capsys.readouterr().out
    print(out)  # the figures, for the CI log (pytest -s or a failure shows them)
    return status, out, json.loads(summary_file.read_text())


def _check_the_class_behaved(status: int, out: str, summary: dict) -> None:
    """Stickiness, the kill's cost, and no error or exception anywhere."""
    assert summary["replicas_seen"] == ["r1", "r2"], out  # HAProxy spread the class
    assert summary["sticky_violations"] == [], out
    # The kill cost its own sessions one run each, and nothing else.
    assert summary["killed"]["replica"] == "r2", out
    reconnects = summary["reconnects"]
    assert reconnects, out  # sessions on r2 did rerun after the kill
    assert summary["protocol_errors_killed"] == len(reconnects), out
    assert summary["protocol_errors_unexpected"] == 0, out
    for back in reconnects:
        assert back["lost"] == "r2" and back["replica"] == "r1", back
        assert back["ok"] and back["exceptions"] == 0, back
        assert back["same_page"] and back["same_query"], back
    assert status == 0, out
    # Nobody saw an exception, a failed run, the generic error or a missing page.
    assert sum(p["failed_runs"] for p in summary["phases"].values()) == 0, out
    assert len(summary["pages"]) == len(PAGES), out  # the class ran on every page
    assert "Through HAProxy" in out and "with their view back" in out, out
    targets = summary["targets"]
    assert targets["errors"] == 0 and targets["exceptions"] == 0, targets
    assert targets["generic_errors"] == 0 and targets["page_not_found"] == 0, targets
    # a class, not a handful: every session reran a few times, however busy the machine
    assert targets["class_n"] >= 3 * CLASS_SESSIONS and targets["burst_n"] == BURST, targets
    assert targets["reconnects_left_out"] == len(reconnects), targets


def test_a_class_through_haproxy_sticks_to_replicas_and_survives_losing_one(tmp_path, capsys):
    status, out, summary = _class(tmp_path, capsys)
    _check_the_class_behaved(status, out, summary)


def _headers(url: str, method: str = "GET") -> dict[str, str]:
    """The answer's headers (names lower-cased, repeated ones joined), and its status as ``:status``."""
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10)
    except urllib.error.HTTPError as err:
        response = err
    with response:
        headers: dict[str, str] = {}
        for k, v in response.headers.items():
            headers[k.lower()] = f"{headers[k.lower()]}, {v}" if k.lower() in headers else v
        return {**headers, ":status": str(response.status)}


def _static_file(base_url: str) -> str:
    """The path of Streamlit's main script, as the page names it."""
    with urllib.request.urlopen(base_url + "/", timeout=10) as response:
        return "/" + re.search(r'src="\./(static/js/index\.[^"]+\.js)"', response.read().decode()).group(1)


def _status(url: str, method: str = "GET") -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


#: Streamlit's metrics (open sessions, their durations, cache sizes) as a visitor may ask for them:
#: plainly, with a trailing slash, percent-encoded (Streamlit decodes it), with a query.
METRICS_URLS = ("/_stcore/metrics", "/_stcore/metrics/", "/_stcore/%6detrics", "/_stcore/metrics?families=session_events")


@pytest.mark.server
def test_serve_py_and_haproxy_send_the_security_headers_and_no_server_banner():
    """On a page, a static file, the health check and every refusal: the CSP of
    gradlab/server/headers.py, X-Frame-Options, nosniff, and no ``server`` header."""
    with Server(free_port(), app="serve.py") as server:
        static = _static_file(server.base_url)
        paths = ("/", "/explorer", static, "/_stcore/health", "/_stcore/metrics", "/_stcore/upload_file/s/1")
        direct = {path: _headers(server.base_url + path) for path in paths}
        direct["PUT /_stcore/upload_file/s/1"] = _headers(server.base_url + "/_stcore/upload_file/s/1", "PUT")
        refused = {path: _status(server.base_url + path) for path in METRICS_URLS}
        refused["OPTIONS /_stcore/metrics"] = _status(server.base_url + METRICS_URLS[0], "OPTIONS")
        with Balancer(free_port(), [server.port]) as lb:
            through = {path: _headers(lb.url + path) for path in paths}
    assert set(refused.values()) == {404}, refused
    statuses = {"/_stcore/metrics": "404", "/_stcore/upload_file/s/1": "403", "PUT /_stcore/upload_file/s/1": "403"}
    for where, answers in (("direct", direct), ("haproxy", through)):
        for path, headers in answers.items():
            assert headers[":status"] == statuses.get(path, "200"), (where, path, headers)
            for name, value in SECURITY_HEADERS.items():
                assert headers.get(name) == value, (where, path, name, headers)
            assert "server" not in headers, (where, path, headers["server"])
    assert through["/"]["x-gradlab-replica"] == "r1"
    assert "GRADLAB_REPLICA=" in through["/"]["set-cookie"] and "HttpOnly" in through["/"]["set-cookie"]


@pytest.mark.server
def test_haproxy_refuses_the_metrics_that_a_plain_streamlit_run_serves():
    """``streamlit run app.py`` (no middleware) answers /_stcore/metrics; HAProxy in front refuses it."""
    with Server(free_port(), app="app.py") as server:
        plain = _status(server.base_url + METRICS_URLS[0])
        with Balancer(free_port(), [server.port]) as lb:
            through = {path: _status(lb.url + path) for path in METRICS_URLS}
            health = _status(lb.url + "/_stcore/health")
    assert plain == 200  # what there is to refuse
    assert set(through.values()) == {404}, through
    assert health == 200


def test_the_local_config_is_the_compose_config_with_loopback_servers():
    text = local_config([9001, 9002, 9003])
    servers = [line.split() for line in text.splitlines() if line.strip().startswith("server ")]
    assert [s[1:3] for s in servers] == [["r1", "127.0.0.1:9001"], ["r2", "127.0.0.1:9002"],
                                        ["r3", "127.0.0.1:9003"]]
    assert all("check" in s for s in servers)
    for needed in ("cookie GRADLAB_REPLICA insert", "timeout tunnel 1h", "option httpchk GET /_stcore/health",
                   "http-check expect string ok", "option redispatch",
                   f'http-after-response set-header Content-Security-Policy "{CSP}"',
                   "http-after-response set-header X-Frame-Options SAMEORIGIN",
                   "http-after-response set-header X-Content-Type-Options nosniff",
                   "http-after-response del-header server", "option forwardfor",
                   "http-request deny deny_status 404 if { path,url_dec -m end /_stcore/metrics",
                   "http-request deny deny_status 403 if { path,url_dec -m sub /_stcore/upload_file }"):
        assert needed in text, needed
