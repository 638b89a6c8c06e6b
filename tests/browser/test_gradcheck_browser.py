"""Grad check page in Chromium: its tabs run lazily and the open tab is kept in the URL."""

import pytest
from browser_helpers import open_page, screenshot, wait_for_app

pytestmark = pytest.mark.browser

TAYLOR_TEXT = "This test needs no step and no tolerance"
SWEEP_CAPTION = "Each line is one sampled element"


def test_clicking_a_tab_computes_it_and_puts_it_in_the_url(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server, "gradcheck", {"shape": "12x10"})
    assert page.get_by_text(SWEEP_CAPTION).count() == 1
    assert page.get_by_text(TAYLOR_TEXT).count() == 0  # not computed while its tab is closed

    page.get_by_role("tab", name="Taylor test").click()
    page.get_by_text(TAYLOR_TEXT).wait_for(timeout=30_000)
    wait_for_app(page)
    assert "view=Taylor" in page.url, page.url
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "gradcheck-taylor-tab")

    page.reload()  # the shared link opens the same tab
    wait_for_app(page)
    page.get_by_text(TAYLOR_TEXT).wait_for(timeout=30_000)
