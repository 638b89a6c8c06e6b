"""Shared test settings.

Browser tests need the ``playwright`` Python package and Debian's Chromium at
``/usr/bin/chromium`` (override with ``GRADLAB_CHROMIUM``). Where either is
missing they are skipped locally, but under CI (``CI`` set to anything but
``false``/``0``) or with ``GRADLAB_REQUIRE_BROWSER=1`` the fixtures fail instead:
a browser test that silently does not run is not a pass.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# The start-up warm-up (gradlab.ui.warm_views) computes every preset's view in the background: off in
# AppTests and in the servers tests start (they inherit it), whose CPU and worker calls tests count;
# tests/test_warm_views.py turns it on where it tests it.
os.environ.setdefault("GRADLAB_WARM_PRESETS", "0")
CHROMIUM = Path(os.environ.get("GRADLAB_CHROMIUM", "/usr/bin/chromium"))


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("", "0", "false", "no")


def browser_required() -> bool:
    """True under CI or with GRADLAB_REQUIRE_BROWSER=1: browser tests must run."""
    return _truthy(os.environ.get("CI")) or _truthy(os.environ.get("GRADLAB_REQUIRE_BROWSER"))


def browser_missing_reason() -> str | None:
    """Why browser tests cannot run here, or None when they can."""
    if importlib.util.find_spec("playwright") is None:
        return "the playwright Python package is not installed (pip install -r requirements-dev.txt)"
    if not CHROMIUM.is_file():
        return f"Chromium is not at {CHROMIUM} (apt-get install -y chromium)"
    return None


def skip_or_fail_without_browser() -> None:
    """Skip the calling test when no browser is available, or fail under CI."""
    reason = browser_missing_reason()
    if reason is None:
        return
    if browser_required():
        pytest.fail(f"Browser tests are required here (CI) but {reason}.", pytrace=False)
    pytest.skip(f"browser test skipped: {reason}")


def pytest_report_header(config: pytest.Config) -> str:
    reason = browser_missing_reason()
    state = "available" if reason is None else f"unavailable ({reason})"
    return f"gradlab: browser {state}; required: {browser_required()}"


@pytest.fixture(scope="session")
def require_browser() -> Path:
    """Chromium's path; skips (or, under CI, fails) when no browser is available."""
    skip_or_fail_without_browser()
    return CHROMIUM
