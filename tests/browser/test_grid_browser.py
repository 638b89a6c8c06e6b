"""The Grid page in Debian's Chromium: answer and chart on the first screen (projector, dark,
phone), a shared link opens its view, and the definitions have their anchor."""

from __future__ import annotations

import pytest
from browser_helpers import FIRST_SCREEN, open_page, screenshot, wait_for_app

pytestmark = pytest.mark.browser



@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1280, 720, "light"), (1280, 720, "dark"), (390, 844, "light")], ids=["projector", "dark", "phone"])
def test_the_answer_and_the_chart_are_on_the_first_screen(streamlit_server, reused_browser, width, height, scheme):
    context = reused_browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    try:
        open_page(page, streamlit_server, "grid", {"h": "1e-07"}, timeout=90_000)
        page.wait_for_selector(".st-key-gl-main-chart .js-plotly-plot .scatterlayer .trace", timeout=60_000)
        page.wait_for_timeout(500)  # let Plotly settle its size
        seen = page.evaluate(FIRST_SCREEN)
        screenshot(page, f"grid-first-screen-{width}x{height}-{scheme}", full_page=False)
        assert seen["answer"] and 0 <= seen["answer"]["top"] and seen["answer"]["bottom"] <= height, seen
        assert seen["chart"] and 0 <= seen["chart"]["top"] < height, seen  # the chart starts on screen
        if width > 600:  # a projector shows all of the chart, legend included; a phone scrolls to it
            assert seen["chart"]["bottom"] <= height, seen
        assert seen["plotWidth"] >= 300 and seen["plotHeight"] >= 200, seen
        assert seen["overflow"] <= 0 and seen["mainOverflow"] <= 0, seen  # nothing sideways
        assert "1 ulp above x" in page.locator(".st-key-gl-answer").inner_text()
        assert page.locator("[data-testid='stException']").count() == 0
    finally:
        context.close()


def test_a_link_opens_the_8_bit_view_and_the_definitions_anchor(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server, "grid", {"dtype": "float8_e4m3fn (emulated)", "h": "1e-01"},
              timeout=90_000)
    page.wait_for_selector(".st-key-gl-main-chart .js-plotly-plot", timeout=60_000)
    assert "0.125, not 0.1" in page.locator(".st-key-gl-answer").inner_text()
    assert page.locator("#definitions").count() == 1  # other pages link to /grid#definitions
    screenshot(page, "grid-e4m3")

    page.get_by_role("button", name="Presets").click()
    page.get_by_role("button", name="h = 1e-8: no step").click()
    page.wait_for_function("() => decodeURIComponent(location.search).includes('h=1e-08')", timeout=30_000)
    wait_for_app(page)
    assert "rounds back to x" in page.locator(".st-key-gl-answer").inner_text()
    assert "float8" not in page.url  # back to float32, the default (so absent from the URL)
    assert page.locator("[data-testid='stException']").count() == 0


@pytest.mark.parametrize("touch", [False, True], ids=["mouse", "touch"])
def test_a_click_on_one_of_xs_bits_moves_x(streamlit_server, _browser, touch):
    """issue 37: x's bits are pills; a click (or a tap on a phone) on the fraction's last bit makes
    x the next float, 1 + 2^-23, and the page's point-x box shows it."""
    viewport = {"width": 390, "height": 844} if touch else {"width": 1280, "height": 720}
    context = _browser.new_context(viewport=viewport, has_touch=touch)
    page = context.new_page()
    try:
        open_page(page, streamlit_server, "grid", {"x": "1.0", "dtype": "float32"}, timeout=60_000)
        editor = page.locator(".st-key-gl-bit-editor")
        editor.scroll_into_view_if_needed()
        fraction = editor.locator("[data-testid=stButtonGroup]").nth(2).locator("button")
        fraction.nth(22).wait_for(timeout=30_000)  # drawn after the chart, on a slow machine later
        assert fraction.count() == 23
        last = fraction.nth(22)
        last.tap() if touch else last.click()
        wait_for_app(page, timeout=60_000)
        page.wait_for_function("() => document.querySelector('.st-key-x input').value.startsWith('1.0000001192')",
                               timeout=30_000)
        screenshot(page, f"grid-bit-clicked-{'touch' if touch else 'mouse'}", full_page=False)
    finally:
        context.close()
