"""Production settings: the health endpoint, no error details for visitors, a load smoke test.

Each test starts a real ``streamlit run`` on 127.0.0.1 with the repository's
``.streamlit/config.toml`` and talks to it over Streamlit's websocket protocol
(:mod:`harness.session`), the way a browser tab does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchmarks.load_test import main as load_test_main
from deploy.run_local import health
from harness.runs import exception_text
from harness.server import Server, free_port
from harness.session import StreamlitSession

pytestmark = pytest.mark.server  # every test starts a Streamlit server

REPO_ROOT = Path(__file__).resolve().parents[1]
CONFIG = REPO_ROOT / ".streamlit" / "config.toml"
SECRET = "SECRET-123"


def _open(base_url: str, page: str = "", query: str = ""):
    async def go():
        async with StreamlitSession(base_url, keep_messages=True, run_timeout=60) as tab:
            return await tab.open(page, query)

    # A thread of its own: Playwright's sync API (the browser tests' session fixture)
    # keeps an event loop running in the main thread, where asyncio.run() refuses to start.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, go()).result()


def _image_env() -> dict[str, str]:
    """The environment the Dockerfile's ENV sets (runtime settings: malloc, threads, ...)."""
    pairs = " ".join(a for k, a in _dockerfile_instructions() if k == "ENV").split()
    env = dict(p.split("=", 1) for p in pairs)
    # the server under test listens where the test says, not where the image does
    return {k: v for k, v in env.items() if k not in ("STREAMLIT_SERVER_ADDRESS", "STREAMLIT_SERVER_PORT")}


@pytest.mark.server
def test_app_is_healthy_and_serves_its_pages_with_production_settings():
    env = _image_env()
    assert env["PYTHONMALLOC"] == "malloc" and env["MALLOC_ARENA_MAX"] == "2"
    with Server(free_port(), app="serve.py", extra_env=env) as server:  # the image's CMD
        assert health(server.base_url) == "ok"
        with urllib.request.urlopen(server.base_url + "/", timeout=5) as response:
            assert response.status == 200
        with pytest.raises(urllib.error.HTTPError) as refused:  # session counts and durations: nobody's business
            urllib.request.urlopen(server.base_url + "/_stcore/metrics", timeout=5)
        assert refused.value.code == 404
        home = _open(server.base_url)
        assert home.ok, home.protocol_error or home.status
        assert home.elements["heading"] > 0
        assert home.exceptions == []
        for page in ("roundoff", "gradcheck"):  # Arb, torch and Plotly under the image's malloc
            view = _open(server.base_url, page)
            assert view.ok and view.exceptions == [], (page, view.protocol_error or view.status)
            assert view.elements["plotly_chart"] > 0, page


def _through_metrics_refused(scope: dict) -> list[dict]:
    """The messages MetricsRefused sends for one request to an app that answers 200 to everything."""
    from gradlab.server.headers import MetricsRefused

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"the app"})

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # a test may hold a running loop
        pool.submit(asyncio.run, MetricsRefused(app)(scope, None, send)).result()
    return sent


@pytest.mark.parametrize(("path", "refused"), [
    ("/_stcore/metrics", True), ("/_stcore/metrics/", True), ("/gradlab/_stcore/metrics", True),
    ("/_stcore/health", False), ("/", False), ("/explorer", False), ("/_stcore/metricsx", False)])
def test_the_metrics_middleware_refuses_the_metrics_path_and_nothing_else(path, refused):
    sent = _through_metrics_refused({"type": "http", "method": "GET", "path": path})
    assert sent[0]["status"] == (404 if refused else 200)
    assert (sent[-1]["body"] == b"the app") is not refused


def test_the_metrics_middleware_lets_websockets_through():
    sent = _through_metrics_refused({"type": "websocket", "path": "/_stcore/stream"})
    assert sent[0]["status"] == 200


# An exception in the entry script, in a page run by st.navigation, and a syntax
# error in such a page. (A syntax error in the entry script itself is reported by
# Streamlit 1.67 with its source line whatever client.showErrorDetails says, so
# app.py stays a router with no logic; AppTest runs it in the test suite.)
_ENTRY_RAISES = f"""
import streamlit as st

def load(token):
    raise RuntimeError("cannot open the vault with " + token)

st.write("before the error")
load("{SECRET}")
"""
_ROUTER = """
import streamlit as st

st.navigation([st.Page("broken.py", title="Broken", default=True)]).run()
"""
_PAGE_RAISES = f"""
import streamlit as st

st.write("before the error")
{{}}["{SECRET}"]
"""
_PAGE_SYNTAX_ERROR = f"""
import streamlit as st

st.write("before the error")
token = "{SECRET}" +
"""

# name -> (files, whether the page draws its line before failing)
BROKEN_APPS = {
    "entry script raises": ({"app.py": _ENTRY_RAISES}, True),
    "page raises": ({"app.py": _ROUTER, "broken.py": _PAGE_RAISES}, True),
    "page has a syntax error": ({"app.py": _ROUTER, "broken.py": _PAGE_SYNTAX_ERROR}, False),
}


@pytest.mark.parametrize(("files", "runs_until_error"), BROKEN_APPS.values(), ids=BROKEN_APPS.keys())
def test_an_error_shows_visitors_no_details(tmp_path, files, runs_until_error):
    (tmp_path / ".streamlit").mkdir()
    shutil.copy(CONFIG, tmp_path / ".streamlit" / "config.toml")
    for name, source in files.items():
        (tmp_path / name).write_text(source)
    log = tmp_path / "server.log"

    with Server(free_port(), cwd=tmp_path, log=log) as server:
        run = _open(server.base_url)

    assert run.ok, run.protocol_error or run.status
    assert run.elements["markdown"] == int(runs_until_error)
    assert len(run.exceptions) == 1  # ... and the visitor sees that it failed
    shown = exception_text(run.exceptions[0])
    assert SECRET not in shown
    assert list(run.exceptions[0].stack_trace) == []
    assert "Traceback" not in shown and "File " not in shown and ".py" not in shown
    assert not run.exceptions[0].type  # not even the exception's class
    for msg in run.forward_msgs:  # nothing else sent to the browser carries it either
        assert SECRET.encode() not in msg.SerializeToString()
    # The details are in the server's log, for the operator.
    assert SECRET in log.read_text()


def test_quick_load_test_has_no_protocol_errors_or_exceptions(tmp_path, capsys):
    summary_file = tmp_path / "summary.json"
    argv = ["--quick", "--rounds", "2", "--replicas", "2", "--page", "explorer", "--browsers", "0",
            "--clear-caches", "--json", str(summary_file)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # see _open
        status = pool.submit(load_test_main, argv).result()
    out = capsys.readouterr().out

    summary = json.loads(summary_file.read_text())
    assert status == 0, out
    assert summary["protocol_errors"] == 0, out
    assert summary["exceptions"] == 0, out
    assert summary["page_not_found"] == 0, out
    runs = sum(p["n"] for k, p in summary["phases"].items() if k.endswith("/all"))
    failed = sum(p["failed_runs"] for p in summary["phases"].values())
    assert runs >= 6 and failed == 0, out
    assert "RSS after each round" in out, out
    assert summary["info"]["replicas"] == 2 and "2 replica(s)" in out, out
    # what makes a noisy machine's numbers readable, and the caches' share of memory
    assert re.search(r"\d+ ms per request", out) and "stolen by the hypervisor" in out, out
    assert 0 <= summary["info"]["class_steal"] <= 1, out
    assert "After clearing the caches" in out and summary["info"]["rss_cleared"] > 0, out


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1] if " " in ln.strip() else "")
            for ln in joined.splitlines() if ln.strip()]


def test_dockerfile_is_slim_cpu_only_non_root_headless_with_a_healthcheck():
    steps = _dockerfile_instructions()
    kinds = [k for k, _ in steps]
    args = {k: [a for kk, a in steps if kk == k] for k in kinds}
    assert args["FROM"][0].startswith("python:") and args["FROM"][0].endswith("-slim")
    torch_install = next(a for a in args["RUN"] if "torch==" in a)
    assert "download.pytorch.org/whl/cpu" in torch_install and '"torch==2.13.0"' in torch_install
    assert kinds.index("RUN") < kinds.index("USER")  # installed as root, then dropped
    assert args["USER"][-1] not in ("root", "0")
    assert kinds.index("USER") < kinds.index("CMD")
    assert "/_stcore/health" in args["HEALTHCHECK"][0]
    env = " ".join(args["ENV"])
    for setting in ("STREAMLIT_SERVER_HEADLESS=true", "MALLOC_ARENA_MAX=2", "PYTHONMALLOC=malloc",
                    "OMP_NUM_THREADS=1", "ONEDNN_PRIMITIVE_CACHE_CAPACITY=16"):
        assert setting in env
    copied = " ".join(args["COPY"])
    for needed in ("app.py", "serve.py", "pages/", "gradlab/", ".streamlit/", "requirements.txt"):
        assert needed in copied  # everything `streamlit run serve.py` reads
    # the served script is the one that sends the anti-framing headers
    assert '"run", "serve.py"' in args["CMD"][-1]
    assert "torch==2.13.0" in (REPO_ROOT / "requirements.txt").read_text(encoding="utf-8")


def test_the_image_runs_with_the_public_classroom_limits():
    """A public link must not offer a visitor a million-element check: the image runs with a
    named profile that lowers every heavy limit, and the profile exists and parses."""
    from gradlab.limits import PROFILES, Limits, limits_from

    profile = _image_env()["GRADLAB_LIMITS"]
    assert profile in PROFILES
    image, defaults = limits_from(profile), Limits()
    for limit in ("tensor_elements", "sampled_elements", "full_check_elements", "full_check_seconds",
                  "roundoff_samples", "roundoff_seconds", "evaluation_seconds"):
        assert getattr(image, limit) < getattr(defaults, limit), limit
    # the Dockerfile says why, next to the setting
    assert "public links" in (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")


def test_production_config_limits_the_cache_and_skips_the_per_rerun_collection():
    import tomllib

    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False  # a full collection per rerun froze every session
    assert config["client"]["showErrorDetails"] == "none"
    size = config["server"]["maxCacheDataSize"]
    assert size.endswith("mb") and 16 <= int(size[:-2]) <= 256  # every st.cache_data entry together
