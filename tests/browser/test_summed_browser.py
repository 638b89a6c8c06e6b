"""The Summed-loss page in Debian's Chromium: the answer and the main chart on the first screen."""

from __future__ import annotations

import pytest
from browser_helpers import FIRST_SCREEN, open_page, screenshot

pytestmark = pytest.mark.browser



@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1280, 720, "light"), (1280, 720, "dark"), (390, 844, "light")], ids=["projector", "dark", "phone"])
def test_the_answer_and_the_chart_are_on_the_first_screen(streamlit_server, reused_browser, width, height, scheme):
    context = reused_browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    try:
        open_page(page, streamlit_server, "summed", timeout=90_000)
        page.wait_for_selector(".st-key-gl-main-chart .js-plotly-plot .scatterlayer .point", timeout=60_000)
        page.wait_for_timeout(500)  # let Plotly settle its size
        seen = page.evaluate(FIRST_SCREEN)
        screenshot(page, f"summed-first-screen-{width}x{height}-{scheme}", full_page=False)
        assert page.locator("[data-testid='stException']").count() == 0
        assert "1.95" in seen["answerText"] and "round-off" in seen["answerText"]
        assert seen["points"] == 40  # the check's forward differences, one per sampled element
        assert seen["answer"] and 0 <= seen["answer"]["top"] and seen["answer"]["bottom"] <= height
        assert seen["chart"] and 0 <= seen["chart"]["top"] < height, seen  # the chart starts on screen
        if width > 600:  # a projector shows all of the chart, legend included; a phone scrolls to it
            assert seen["chart"]["bottom"] <= height, seen
        assert seen["plotWidth"] >= (300 if width < 600 else 600), seen
        assert seen["plotHeight"] >= 150, seen
        assert seen["overflow"] <= 0 and seen["mainOverflow"] <= 0, seen  # nothing sideways
    finally:
        context.close()
