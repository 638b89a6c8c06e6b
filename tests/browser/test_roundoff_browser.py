"""The Round-off lab in Chromium as a class sees it: projector light and dark, and a phone.

At 1280x720 the answer sentence and the whole main chart (down to its legend) lie inside the
first viewport; at 390x844 the main chart's plot area is at least 300 px wide and nothing
overflows sideways. Screenshots go to tests/artifacts/ (roundoff-*.png): look at them.
"""

from __future__ import annotations

import pytest
from browser_helpers import screenshot, wait_for_app

pytestmark = pytest.mark.browser

LOAD_MS = 120_000
ANSWER = ".st-key-gl-answer"
MAIN_CHART = ".st-key-gl-main-chart"

_BOX = """sel => { const e = document.querySelector(sel); if (!e) return null;
  const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, height: r.height}; }"""
_PLOT_AREA = """sel => { const p = document.querySelector(sel + ' .nsewdrag');
  return p ? p.getBoundingClientRect().width : 0; }"""
_OVERFLOW = """() => [document.documentElement, document.querySelector('[data-testid=stMain]')]
  .map(e => e.scrollWidth - e.clientWidth)"""


def _opened(browser, url: str, width: int, height: int, scheme: str):
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    page.goto(f"{url}/roundoff")
    wait_for_app(page, timeout=LOAD_MS)
    page.wait_for_selector(f"{MAIN_CHART} .js-plotly-plot .nsewdrag", timeout=LOAD_MS)
    assert page.locator("[data-testid='stException']").count() == 0
    return context, page


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_projector_first_screen_holds_the_answer_and_the_whole_main_chart(streamlit_server, reused_browser, scheme):
    context, page = _opened(reused_browser, streamlit_server, 1280, 720, scheme)
    try:
        answer, chart = page.evaluate(_BOX, ANSWER), page.evaluate(_BOX, MAIN_CHART)
        screenshot(page, f"roundoff-1280x720-{scheme}", full_page=False)
        assert answer and 0 <= answer["top"] and answer["bottom"] <= 720, answer
        assert page.locator(ANSWER).get_by_text("neither is wrong").is_visible()
        assert chart and 0 <= chart["top"] and chart["bottom"] <= 720, chart  # legend included
    finally:
        context.close()


def test_phone_keeps_a_300px_plot_and_no_sideways_overflow(streamlit_server, reused_browser):
    context, page = _opened(reused_browser, streamlit_server, 390, 844, "light")
    try:
        page.locator(MAIN_CHART).scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        screenshot(page, "roundoff-390x844", full_page=True)
        assert page.evaluate(_PLOT_AREA, MAIN_CHART) >= 300
        assert all(extra <= 0 for extra in page.evaluate(_OVERFLOW)), page.evaluate(_OVERFLOW)
        # the legend sits below the plot, not beside it eating the width
        legend = page.locator(f"{MAIN_CHART} .legend").bounding_box()
        plot = page.locator(f"{MAIN_CHART} .nsewdrag").bounding_box()
        assert legend["y"] >= plot["y"] + plot["height"]
    finally:
        context.close()
