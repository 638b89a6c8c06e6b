"""The home page in a real Chromium: it renders, shows the gallery, and has no errors."""

import pytest
from browser_helpers import open_page, screenshot

from gradlab.teaching.presets import gallery, url_query
from gradlab.ui.navigation import PAGES

pytestmark = pytest.mark.browser


def test_home_page_shows_the_gallery(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server)

    assert page.get_by_role("heading", name="Start from a question").is_visible()
    for card in gallery():  # the gallery is the registry's, each card a link to its full view
        assert page.get_by_text(card.question, exact=True).is_visible(), card.question
        link = page.get_by_role("link", name=card.label)
        assert link.count() == 1, card.label
        href = link.get_attribute("href")
        assert href.split("?")[0].endswith(card.page) and "preset=" not in href, href
        assert all(f"{key}=" in href for key in url_query(card)), href
    assert page.get_by_text("coming soon").count() == 0
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert page.title() == "GradLab"
    screenshot(page, "home")


def test_every_page_is_in_the_sidebar(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server)
    nav = page.locator("[data-testid='stSidebarNav']")
    for spec in PAGES:
        assert nav.get_by_text(spec.title, exact=True).count() == 1, spec.title
