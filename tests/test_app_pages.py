"""Every page opens under app.py's navigation without an exception or an error box.

Pages come from the one registry in gradlab/ui/navigation.py, so a new page is tested
as soon as its script exists.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradlab.ui.navigation import PAGES, PRESET_LINKS, available_pages

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
    return [e.message for e in at.exception] + [e.value for e in at.error]


def test_app_router_runs_and_shows_home():
    at = _open()
    assert not _problems(at)
    assert at.title[0].value == "GradLab"


@pytest.mark.parametrize("spec", available_pages(), ids=lambda s: s.url_path)
def test_page_opens_cleanly(spec):
    at = _open(spec.path)
    assert not _problems(at), f"{spec.path}: {_problems(at)}"


def test_preset_links_open_cleanly_and_every_parameter_is_used():
    # One test looping over the presets whose page exists (none may yet): a
    # parametrisation over an empty set would be reported as a skip, and CI
    # fails on skips.
    for link in PRESET_LINKS:
        if not link.page.exists:
            continue
        at = _open(link.page.path, link.as_query_params())
        assert not _problems(at), f"{link.title}: {_problems(at)}"
        for key in link.query_params:
            # Streamlit removes a bound parameter that no widget accepted: an
            # unknown value, or one equal to the widget's default.
            assert key in at.session_state and key in at.query_params, (
                f"Preset {link.title!r}: query parameter {key!r} was not accepted by "
                f"{link.page.path} (no widget with that key, an invalid value, or "
                "the widget's default value)."
            )


def test_every_page_calls_ensure_router_first():
    # See gradlab.ui.bound_widgets.ensure_router: without it a shared deep link opened
    # first after a server start bypasses app.py.
    for spec in available_pages():
        source = (REPO_ROOT / spec.path).read_text()
        assert "ensure_router()" in source, f"{spec.path} must call ensure_router() first"


def test_registry_is_consistent():
    url_paths = [spec.url_path for spec in PAGES]
    assert len(set(url_paths)) == len(url_paths)
    assert sum(spec.default for spec in PAGES) == 1
    assert all(spec.path.startswith("pages/") for spec in PAGES)
    assert PAGES[0].exists, "the home page must exist"
