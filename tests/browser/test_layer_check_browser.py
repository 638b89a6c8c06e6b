"""The Grad check's model view in Chromium: the "wrong layer 3" preset's link at 1280x720 shows
module 3 failing and every other module passing on the first screen, and the same link opened
in a new tab brings the same view back. Screenshots go to tests/artifacts."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from browser_helpers import SCRIPT_FINISHED, screenshot, wait_for_app

from gradlab.teaching.presets import preset, url_query

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
LOAD_MS = 120_000  # a first run imports torch and checks ten (module, side) pairs
ANSWER, CHART = ".st-key-gl-answer", ".st-key-gl-main-chart"
FAILING = "Module 3 (WrongSwish, a custom autograd.Function): wrong gradient with respect to its input"

BOX = """sel => { const e = document.querySelector(sel); if (!e) return null;
  const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom}; }"""
#: The chart's bars: each (module · side) label on the y axis with its bar's colour, top to bottom.
BARS = """() => { const chart = document.querySelector('.st-key-gl-main-chart .js-plotly-plot');
  return chart.data.flatMap(t => t.y.map(y => [y, t.name])); }"""
#: The lowest edge the chart draws (plot, axis title, legend) and its y tick labels' bottom.
CHART_BOTTOM = """() => Math.max(...[...document.querySelectorAll(['.st-key-gl-main-chart .main-svg',
  '.st-key-gl-main-chart .legend', '.st-key-gl-main-chart .g-xtitle', '.st-key-gl-main-chart .ytick'].join(', '))]
  .map(e => e.getBoundingClientRect().bottom))"""


def _view(page) -> dict:
    """What the first screen says: the answer, each bar's state, the whole-model box, where they sit."""
    page.locator(f"{CHART} .main-svg").first.wait_for(timeout=LOAD_MS)
    page.wait_for_timeout(500)  # plotly's first draw
    return {"answer": page.locator(f"{ANSWER} [data-testid='stMarkdownContainer']").inner_text(),
            "bars": sorted(map(tuple, page.evaluate(BARS))),
            "answer_box": page.evaluate(BOX, ANSWER), "chart_bottom": page.evaluate(CHART_BOTTOM),
            "url": page.url}


def test_the_wrong_layer_link_names_module_3_on_the_first_screen_and_reopens_the_same(
        streamlit_server, _browser):
    url = f"{streamlit_server}/gradcheck?{urlencode(url_query(preset('gradcheck', 'wrong_layer')), doseq=True)}"
    context = _browser.new_context(viewport=PROJECTOR)
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector(SCRIPT_FINISHED, timeout=LOAD_MS)
        wait_for_app(page, timeout=LOAD_MS)
        first = _view(page)
        screenshot(page, "gradcheck-layers-1280x720", full_page=False)
        assert page.locator("[data-testid='stException']").count() == 0
        assert first["answer"].startswith(FAILING) and "every other module passes" in first["answer"], first
        # on the first screen, whole: the answer, then the chart with every module's bars
        assert 0 <= first["answer_box"]["top"] and first["answer_box"]["bottom"] <= PROJECTOR["height"], first
        assert first["chart_bottom"] <= PROJECTOR["height"], first
        failing = [label for label, state in first["bars"] if state == "fail"]
        passing = [label for label, state in first["bars"] if state == "pass"]
        assert failing == ["3 WrongSwish · inputs"], first["bars"]  # named by path and class
        assert {label.split(" ")[0] for label in passing} == {"0", "1", "2", "4", "5"}, first["bars"]
        assert len(passing) + len(failing) == len(first["bars"])  # nothing else: no skipped, no inconclusive

        # The shared link, opened in a new tab: the same view comes back.
        again = context.new_page()
        again.goto(first["url"])
        wait_for_app(again, timeout=LOAD_MS)
        second = _view(again)
        assert (second["answer"], second["bars"]) == (first["answer"], first["bars"])
        assert again.locator("input[aria-label='layers, first to last']").input_value() == \
            preset("gradcheck", "wrong_layer").values["stack"]
    finally:
        context.close()
