"""The home page in a real Chromium: it renders, shows the gallery, and has no errors."""

import pytest
from browser_helpers import open_page, screenshot

from gradlab.ui.navigation import PRESET_LINKS, available_pages

pytestmark = pytest.mark.browser


def test_home_page_shows_the_gallery(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server)

    assert page.get_by_role("heading", name="Start from a question").is_visible()
    assert page.get_by_text(PRESET_LINKS[0].question).is_visible()
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert page.title() == "GradLab"
    screenshot(page, "home")


def test_every_page_is_in_the_sidebar(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server)
    nav = page.locator("[data-testid='stSidebarNav']")
    pages = available_pages()
    if len(pages) < 2:  # Streamlit shows no navigation for a single page
        assert nav.count() == 0
        return
    for spec in pages:
        assert nav.get_by_text(spec.title, exact=True).count() == 1, spec.title
