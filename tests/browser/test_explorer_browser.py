"""The Explorer in Debian's Chromium: a shared link opens the view it names, and the URL follows the controls."""

from __future__ import annotations

import pytest
from browser_helpers import FIRST_SCREEN, open_page, screenshot, wait_for_app

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




@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1280, 720, "light"), (1280, 720, "dark"), (390, 844, "light")], ids=["projector", "dark", "phone"])
def test_the_answer_and_the_chart_are_on_the_first_screen(streamlit_server, reused_browser, width, height, scheme):
    context = reused_browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    try:
        open_page(page, streamlit_server, "explorer", timeout=90_000)
        page.wait_for_selector(".st-key-gl-main-chart .js-plotly-plot .scatterlayer .trace", timeout=60_000)
        page.wait_for_timeout(500)  # let Plotly settle its size
        seen = page.evaluate(FIRST_SCREEN)
        screenshot(page, f"explorer-first-screen-{width}x{height}-{scheme}", full_page=False)
        assert seen["answer"] and 0 <= seen["answer"]["top"] and seen["answer"]["bottom"] <= height
        assert seen["chart"] and 0 <= seen["chart"]["top"] < height  # the chart starts on screen
        assert seen["plotWidth"] >= 300, seen  # the plot area, not just the figure
        assert seen["overflow"] <= 0 and seen["mainOverflow"] <= 0, seen  # nothing sideways
    finally:
        context.close()


def test_a_hostile_expression_in_the_url_shows_an_error_not_a_chart(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server, "explorer",
              {"fn": "custom (type it)", "expr": "__import__('os').system('echo hi')"},
              timeout=90_000)
    assert page.locator("[data-testid='stAlertContentError']").count() >= 1
    assert page.locator(CHART).count() == 0
    assert page.locator("[data-testid='stException']").count() == 0
