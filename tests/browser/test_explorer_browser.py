"""The Explorer in Debian's Chromium: a shared link opens the view it names, and the URL follows the controls."""

from __future__ import annotations

import pytest
from browser_helpers import open_page, screenshot, wait_for_app

pytestmark = pytest.mark.browser

CHART = ".js-plotly-plot"
TRACE_NAMES = f"() => [...document.querySelectorAll('{CHART}')].flatMap(e => (e.data || []).map(t => t.name))"
SHARED_LINK = {
    "fn": "1/x", "x": "0.3",
    "dtypes": ["float32", "float64"], "schemes": ["Central", "Forward"],
}


def _sweep_traces(page) -> set[str]:
    page.wait_for_selector(CHART, timeout=60_000)
    page.wait_for_function(f"() => document.querySelector('{CHART}').data?.length > 0")
    return {n for n in page.evaluate(TRACE_NAMES) if "·" in n and "autograd" not in n}


def _wait_for_url(page, fragment: str) -> None:
    page.wait_for_function("f => decodeURIComponent(location.search).includes(f)", arg=fragment,
                           timeout=30_000)
    wait_for_app(page)


def test_a_shared_link_opens_its_view_and_the_url_follows_the_controls(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server, "explorer", SHARED_LINK, timeout=90_000)

    assert _sweep_traces(page) == {
        "float32 · forward", "float32 · central", "float64 · forward", "float64 · central",
    }
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("input[aria-label='point x']").input_value() == "0.3"
    screenshot(page, "explorer-shared-link")

    x_input = page.locator("input[aria-label='point x']")
    x_input.fill("0.7")
    x_input.press("Enter")
    _wait_for_url(page, "x=0.7")
    assert "fn=1/x" in page.url.replace("%2F", "/")
    page.wait_for_selector("text=0.7", timeout=30_000)  # the rounding table follows

    page.get_by_role("button", name="Presets").click()  # the presets sit in a popover
    page.get_by_role("button", name="sqrt(x) near 0").click()
    _wait_for_url(page, "fn=sqrt(x) near 0".replace(" ", "+"))
    assert "x=0.0001" in page.url
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "explorer-after-preset")




# The Explorer's first screen (1280x720 light and dark, 390x844) is measured with every other
# page's in test_first_screen_browser.py.


def test_a_hostile_expression_in_the_url_shows_an_error_not_a_chart(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server, "explorer",
              {"fn": "custom (type it)", "expr": "__import__('os').system('echo hi')"},
              timeout=90_000)
    assert page.locator("[data-testid='stAlertContentError']").count() >= 1
    assert page.locator(CHART).count() == 0
    assert page.locator("[data-testid='stException']").count() == 0
