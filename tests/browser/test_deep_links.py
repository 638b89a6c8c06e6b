"""A shared link to a page, opened first after a server start, still goes through app.py.

Streamlit 1.67 serves such a link from pages/ directly unless the page calls
gradlab.ui.page_chrome.ensure_router() (see its docstring).
"""

import pytest
from browser_helpers import open_page, screenshot

from gradlab.ui.navigation import PAGES

pytestmark = pytest.mark.browser


def test_first_visit_by_deep_link_uses_the_router(fresh_streamlit_server, browser_page):
    target = next(spec for spec in PAGES if not spec.default)
    open_page(browser_page, fresh_streamlit_server, target.url_path, {"unbound": "1"})

    assert browser_page.title() == "GradLab"  # st.set_page_config in app.py ran
    nav = browser_page.locator("[data-testid='stSidebarNav']")
    assert nav.get_by_text("app", exact=True).count() == 0  # no old-style page list
    assert browser_page.locator("[data-testid='stException']").count() == 0
    screenshot(browser_page, f"deep-link-{target.url_path}")


def _shows_the_home_page(page) -> None:
    assert page.get_by_role("heading", name="Start from a question").count() == 1
    assert page.get_by_text("Page not found").count() == 0
    assert page.locator("[data-testid='stException']").count() == 0


def test_home_as_a_first_url_opens_the_home_page(fresh_streamlit_server, browser_page):
    """/home is the home page's own path: first after a server start (the old-style pages mode,
    left by ensure_router) and again once st.navigation has run."""
    home = next(spec for spec in PAGES if spec.default)
    assert home.url_path == "home"
    for visit in ("first", "again"):
        open_page(browser_page, fresh_streamlit_server, home.url_path)
        assert browser_page.title() == "GradLab", visit
        _shows_the_home_page(browser_page)
    screenshot(browser_page, "deep-link-home")
