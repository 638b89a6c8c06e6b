"""Fixtures for browser tests: a live Streamlit server and a headless Chromium page."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from browser_helpers import ARTIFACTS, CHROMIUM_ARGS

from deploy.run_local import stop_process, streamlit_command, wait_healthy

REPO_ROOT = Path(__file__).resolve().parents[2]

HEALTH_TIMEOUT_S = 60


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_app(log_name: str = "streamlit-server") -> Iterator[str]:
    """Start ``streamlit run app.py`` on a free port, wait for health, yield the base URL."""
    port = _free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # one log per parallel worker
    log_path = ARTIFACTS / f"{log_name}{'-' + worker if worker else ''}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(streamlit_command("app.py", port), cwd=REPO_ROOT, stdout=log,
                                stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            try:
                wait_healthy(url, HEALTH_TIMEOUT_S, proc)
            except RuntimeError as err:
                pytest.fail(f"{err}; see {log_path}")
            yield url
        finally:
            stop_process(proc)


@pytest.fixture(scope="session")
def streamlit_server(require_browser: Path) -> Iterator[str]:
    """A GradLab server shared by the browser tests; yields its base URL."""
    with running_app() as url:
        yield url


@pytest.fixture()
def fresh_streamlit_server(require_browser: Path) -> Iterator[str]:
    """A server of this test's own, so the test makes its very first request."""
    with running_app("streamlit-fresh-server") as url:
        yield url


@pytest.fixture(scope="session")
def _browser(require_browser: Path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(require_browser), headless=True, args=list(CHROMIUM_ARGS)
        )
        yield browser
        browser.close()


DEFAULT_VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture(scope="session")
def _tabs(_browser):
    """One browser tab per (width, height, colour scheme, role), reused by every test that asks
    for it; a role (say "recipient") is a context of its own, sharing nothing with the others."""
    tabs: dict = {}

    def get(viewport: dict, scheme: str, role: str = ""):
        key = (viewport["width"], viewport["height"], scheme, role)
        if key not in tabs:
            tabs[key] = _browser.new_context(viewport=dict(viewport), color_scheme=scheme).new_page()
        return tabs[key]

    yield get
    for page in tabs.values():
        page.context.close()


@pytest.fixture()
def tab(_tabs):
    """A tab of the given viewport and colour scheme: ``tab({"width": 1280, "height": 720}, "dark")``.

    Each test's ``page.goto`` loads a fresh document, so each visit is a new Streamlit
    session, as a first visit is; only the browser's caches are warm. Reusing the tab
    halves a visit (2.1 s against 4.9 s on a 2-core machine: a new tab is a new renderer
    process that compiles Streamlit's and Plotly's JavaScript again), which keeps CI under
    its 20 minutes (the browser suite took 840 s with new contexts, about 450 s reusing
    tabs). A test that changes what a tab keeps (local storage, a theme picked in the menu,
    listeners) opens a context of its own instead.
    """
    used = []

    def get(viewport: dict | None = None, scheme: str = "light"):
        page = _tabs(viewport or DEFAULT_VIEWPORT, scheme)
        used.append(page)
        return page

    yield get
    for page in used:
        page.goto("about:blank")  # ends the test's Streamlit session (its websocket closes)


@pytest.fixture()
def browser_page(tab):
    """A headless Chromium tab (1400x900, light) for one test, reused across tests (see ``tab``)."""
    return tab(DEFAULT_VIEWPORT)


class _ReusedContext:
    """A browser context's two calls, on a reused tab: ``close`` ends the visit, not the tab."""

    def __init__(self, page) -> None:
        self.page = page

    def new_page(self):
        return self.page

    def close(self) -> None:
        self.page.goto("about:blank")


class _ReusedBrowser:
    def __init__(self, tabs, role: str = "") -> None:
        self._tabs, self._role = tabs, role

    def new_context(self, viewport: dict | None = None, color_scheme: str = "light") -> _ReusedContext:
        return _ReusedContext(self._tabs(viewport or DEFAULT_VIEWPORT, color_scheme, self._role))


@pytest.fixture()
def reused_browser(_tabs) -> _ReusedBrowser:
    """Stands in for the browser where a test opens one context per visit and closes it after:
    ``new_context(viewport=..., color_scheme=...)`` hands out the reused tab (see ``tab``)."""
    return _ReusedBrowser(_tabs)


@pytest.fixture()
def recipient_browser(_tabs) -> _ReusedBrowser:
    """Like ``reused_browser``, in a context apart from every other tab's: whoever a link was
    sent to (no cookies, storage or session of the sender's)."""
    return _ReusedBrowser(_tabs, role="recipient")
