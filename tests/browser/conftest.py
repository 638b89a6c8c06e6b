"""Fixtures for browser tests: a live Streamlit server and a headless Chromium page."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from browser_helpers import ARTIFACTS, CHROMIUM_ARGS

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


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def running_app(log_name: str = "streamlit-server") -> Iterator[str]:
    """Start ``streamlit run app.py`` on a free port, wait for health, yield the base URL."""
    port = _free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log_path = ARTIFACTS / f"{log_name}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py",
             "--server.headless", "true", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
            cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + HEALTH_TIMEOUT_S
            while not _healthy(url):
                if proc.poll() is not None:
                    pytest.fail(f"streamlit exited with code {proc.returncode}; see {log_path}")
                if time.monotonic() > deadline:
                    pytest.fail(f"streamlit was not healthy within {HEALTH_TIMEOUT_S} s; see {log_path}")
                time.sleep(0.25)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


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


@pytest.fixture()
def browser_page(_browser):
    """A fresh headless Chromium page (1400×900) for one test."""
    context = _browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    yield page
    context.close()
