"""Every page opens under app.py's navigation without an exception or an error box.

Pages come from the one list in gradlab/ui/navigation.py and presets from the one
registry in gradlab/teaching/presets.py, so a new page or preset is tested as soon
as it is listed.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradlab.teaching.presets import PRESETS, url_query
from gradlab.ui.navigation import PAGES, page_by_url

REPO_ROOT = Path(__file__).resolve().parents[1]
APP = REPO_ROOT / "app.py"
TIMEOUT_S = 60  # a page's first run imports torch and may compute a small default view


def _open(page_path: str | None = None, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    at.run()
    if page_path is not None:
        if query:
            at.query_params.update(query)
        at.switch_page(page_path).run()
    return at


def _problems(at: AppTest) -> list[str]:
    """Exceptions and error boxes, but not a box answering that a gradient is wrong (a preset's point)."""
    from gradlab.ui.messages import WRONG_GRADIENT_ICON

    return [e.message for e in at.exception] + [e.value for e in at.error if e.proto.icon != WRONG_GRADIENT_ICON]


def test_app_router_runs_and_shows_home():
    at = _open()
    assert not _problems(at)
    assert at.title[0].value == "GradLab"


@pytest.mark.parametrize("spec", PAGES, ids=lambda s: s.url_path)
def test_page_opens_cleanly(spec):
    at = _open(spec.path)
    assert not _problems(at), f"{spec.path}: {_problems(at)}"


def _held(value):
    """A widget value as a preset writes it (multiselects and ranges as tuples)."""
    return tuple(value) if isinstance(value, list | tuple) else value


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: f"{p.page}-{p.key}")
def test_each_preset_url_sets_every_value(preset):
    """Opening a preset's URL gives every widget the preset's value: each parameter is accepted."""
    at = _open(page_by_url(preset.page).path, url_query(preset))
    assert not _problems(at), f"{preset.key}: {_problems(at)}"
    for key, value in preset.values.items():
        # A wrong key or URL form leaves the widget at its default (Streamlit ignores it).
        assert key in at.session_state, f"{preset.page}: no widget with key {key!r}"
        assert _held(at.session_state[key]) == value, (
            f"Preset {preset.key!r}: ?{key}={url_query(preset)[key]!r} gave "
            f"{at.session_state[key]!r}, not {value!r}")


@pytest.mark.parametrize("spec", PAGES, ids=lambda s: s.url_path)
def test_every_page_calls_ensure_router_before_it_draws(spec, monkeypatch):
    # gradlab.ui.page_chrome.ensure_router: without it a shared deep link opened first after a
    # server start bypasses app.py. Opened on its own, as such a link runs it, each page must
    # call it before it draws anything; the stand-in stops the page right there.
    import streamlit as st

    from gradlab.ui import page_chrome

    calls = []
    monkeypatch.setattr(page_chrome, "ensure_router", lambda: calls.append(spec.path) or st.stop())
    at = AppTest.from_file(str(REPO_ROOT / spec.path), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert calls == [spec.path], f"{spec.path} never called ensure_router (directly or through start_page)"
    drawn = [e.type for e in at.main if e is not at.main]
    assert drawn == [], f"{spec.path} drew {drawn} before ensure_router"


def test_registry_is_consistent():
    url_paths = [spec.url_path for spec in PAGES]
    assert len(set(url_paths)) == len(url_paths)
    assert sum(spec.default for spec in PAGES) == 1
    assert all(spec.path.startswith("pages/") for spec in PAGES)
    assert all((REPO_ROOT / spec.path).is_file() for spec in PAGES)


def test_every_preset_opens_a_listed_page():
    assert all(page_by_url(p.page) is not None for p in PRESETS)
