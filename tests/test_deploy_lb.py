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
* the class targets of issue 16 hold for the class of 30 it names while two replicas
  serve it: class p95 < 1 s before the kill, burst (20 simultaneous reruns) p95 < 2 s,
  zero errors, zero exception elements.

"A replica killed mid-class only costs its own sessions a reconnect": the runs
lost on the killed replica and its sessions' reconnect runs (a new session on the
surviving replica, rebuilt from the URL) are that cost, counted and checked apart,
and left out of the class p95 (:func:`benchmarks.load_test.class_targets`). After
the kill one replica serves the whole class: that is the one-process case, whose p95
is printed, not asserted (CI measured 1.61 s there on 2026-11-26; issue 16's
one-process target is not met, see docs/DEPLOYMENT.md). The memory target (RSS back within 10 % a minute after the
class) needs a minute of settling: ``benchmarks/load_test.py`` measures it, not CI.

Latencies measured beside another job are partly that job's: when a latency target is
missed while other processes on this 2-core machine used :data:`BUSY_NEIGHBOURS` cores or more
(``class_other_cores``: a CI run beside this one), the class is measured once more, and that
measurement must meet every target (errors, exceptions and stickiness are never excused).

Measured here (2 cores): ~550-640 class runs; before the kill (~230 runs) p95 0.14-0.78 s
with other jobs under ~0.35 cores, 1.0-1.4 s with them at 0.4+ cores; after it 1.61 s in a
quiet CI run; burst p95 0.49-1.2 s. A second, short test checks the security
headers of a real ``streamlit run serve.py`` and of HAProxy.
Set GRADLAB_TEST_PORT to choose the ports (HAProxy's; the replicas take the next two).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import urllib.request

import pytest

from gradlab.ui.navigation import PAGES

from benchmarks.load_test import TARGET_BURST_P95, TARGET_CLASS_P95, Server, free_port
from benchmarks.load_test import main as load_test_main
from deploy.run_local import Balancer, local_config

# Locally a missing HAProxy skips; .ci/run installs it, and a skipped test fails CI.
pytestmark = pytest.mark.skipif(shutil.which("haproxy") is None,
                                reason="HAProxy is not installed (apt-get install -y haproxy)")

CLASS_SESSIONS = 30
BURST = 20
#: Cores other jobs on the machine used during the class from which its latencies say more
#: about them than about GradLab (a quarter of one of this machine's 2 cores)
BUSY_NEIGHBOURS = 0.25
FRAME_HEADERS = {"content-security-policy": "frame-ancestors 'self'", "x-frame-options": "SAMEORIGIN"}


def _run_load_test(argv: list[str]) -> int:
    # A thread of its own: the browser tests' Playwright session keeps an event loop
    # running in the main thread, where asyncio.run() refuses to start.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(load_test_main, argv).result()


def _class(tmp_path, attempt: int, capsys) -> tuple[int, str, dict]:
    """Issue 16's class through HAProxy: (exit status, report, summary)."""
    summary_file = tmp_path / f"summary-{attempt}.json"
    # 30 sessions over every page, 0.5-3 s between reruns, then a burst of 20; 40 s of class
    # (~600 runs, for a p95 that means something), r2 killed 15 s in.
    argv = ["--page", "all", "--replicas", "2", "--lb", "haproxy", "--limits", "classroom",
            "--sessions", str(CLASS_SESSIONS), "--duration", "40", "--kill-at", "15",
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
    assert targets["class_n"] >= 300 and targets["burst_n"] == BURST, targets  # enough runs for a p95
    assert targets["reconnects_left_out"] == len(reconnects), targets


def _latency_missed(targets: dict) -> list[str]:
    """The latency targets missed: class p95 < 1 s while two replicas serve, burst p95 < 2 s."""
    missed = []
    if not targets["class_p95_before_kill"] < TARGET_CLASS_P95:
        missed.append(f"class p95 before the kill {targets['class_p95_before_kill']:.3f} s "
                      f">= {TARGET_CLASS_P95:g} s")
    if not targets["burst_p95"] < TARGET_BURST_P95:
        missed.append(f"burst p95 {targets['burst_p95']:.3f} s >= {TARGET_BURST_P95:g} s")
    return missed


def test_a_class_through_haproxy_sticks_to_replicas_and_survives_losing_one(tmp_path, capsys):
    status, out, summary = _class(tmp_path, 1, capsys)
    _check_the_class_behaved(status, out, summary)
    targets = summary["targets"]
    missed = _latency_missed(targets)
    if missed and max(targets["class_other_cores"], targets["burst_other_cores"]) >= BUSY_NEIGHBOURS:
        # Another job held a good part of this 2-core machine meanwhile (a CI run beside this
        # one): the latencies were partly its. The class is measured once more, and that one must
        # meet every target; nothing else is excused (errors, exceptions, stickiness: above).
        print(f"measured again: {'; '.join(missed)} while other jobs used "
              f"{targets['class_other_cores']:.2f} cores (class) and {targets['burst_other_cores']:.2f} (burst)")
        status, out, summary = _class(tmp_path, 2, capsys)
        _check_the_class_behaved(status, out, summary)
        targets = summary["targets"]
        missed = _latency_missed(targets)
    assert not missed, f"{'; '.join(missed)}: {targets}"


def _headers(url: str) -> dict[str, str]:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        return {k.lower(): v for k, v in response.headers.items()}


def test_serve_py_and_haproxy_forbid_framing_by_other_sites():
    with Server(free_port(), app="serve.py") as server:
        direct = {path: _headers(server.base_url + path) for path in ("/", "/explorer", "/_stcore/health")}
        with Balancer(free_port(), [server.port]) as lb:
            through = {path: _headers(lb.url + path) for path in ("/", "/_stcore/health")}
    for path, headers in {**{f"direct {p}": h for p, h in direct.items()},
                          **{f"haproxy {p}": h for p, h in through.items()}}.items():
        for name, value in FRAME_HEADERS.items():
            assert headers.get(name) == value, (path, name, headers)
    assert through["/"]["x-gradlab-replica"] == "r1"
    assert "GRADLAB_REPLICA=" in through["/"]["set-cookie"] and "HttpOnly" in through["/"]["set-cookie"]


def test_the_local_config_is_the_compose_config_with_loopback_servers():
    text = local_config([9001, 9002, 9003])
    servers = [line.split() for line in text.splitlines() if line.strip().startswith("server ")]
    assert [s[1:3] for s in servers] == [["r1", "127.0.0.1:9001"], ["r2", "127.0.0.1:9002"],
                                        ["r3", "127.0.0.1:9003"]]
    assert all("check" in s for s in servers)
    for needed in ("cookie GRADLAB_REPLICA insert", "timeout tunnel 1h", "option httpchk GET /_stcore/health",
                   "http-check expect string ok", "option redispatch",
                   """http-response set-header Content-Security-Policy "frame-ancestors 'self'\"""",
                   "http-response set-header X-Frame-Options SAMEORIGIN"):
        assert needed in text, needed
