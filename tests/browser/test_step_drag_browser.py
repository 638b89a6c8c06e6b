"""Dragging the step h on the Explorer's and the Grid's chart: the chart follows in the browser
with no server rerun, and the released step reaches the URL (one rerun, after the release).

Reruns are counted from the app's script state: a MutationObserver records every value of
``data-test-script-state`` from before the drag until the release; while the mouse button is
held it must never have been ``running``.
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import open_page, screenshot

pytestmark = pytest.mark.browser

_WATCH_RERUNS = """() => {
  window.__glStates = [];
  const el = document.querySelector('[data-test-script-state]');
  new MutationObserver(() => window.__glStates.push(el.getAttribute('data-test-script-state')))
    .observe(el, {attributes: true});
}"""

_WATCH_CHART = """(key) => {
  window.__glChartChanges = [];
  new MutationObserver(recs => recs.forEach(r => window.__glChartChanges.push(r.attributeName || r.type)))
    .observe(document.querySelector(`.st-key-${key} .js-plotly-plot`), {subtree: true, childList: true, attributes: true});
}"""

#: What the chart shows now: the slider's active stop, the traces' x and y, the slider's words.
_CHART_STATE = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const slider = gd._fullLayout.sliders[0];
  // _fullData: the traces as drawn (a frame's base64 arrays decoded)
  const moving = gd._fullData.filter(t => !t.meta || ['at-h', 'h-line'].includes(t.meta.kind) || !t.meta.kind);
  return {active: slider.active, value: slider.steps[slider.active].value,
          readout: [...gd.querySelectorAll('.slider-group text.slider-label')].map(t => t.textContent).join(' '),
          traces: JSON.stringify(moving.map(t => [Array.from(t.x || []), Array.from(t.y || [])]))};
}"""


def _drag(page, key: str, start: float, end: float) -> tuple[dict, dict, list[str]]:
    """Press on the slider's rail at ``start`` (fraction of its width), move to ``end`` and hold:
    the chart's state before, while held, and the script states seen until then."""
    rail = page.locator(f".st-key-{key} .slider-rail-rect").first
    box = rail.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * start, y)
    page.mouse.down()
    before = page.evaluate(_CHART_STATE, key)
    page.mouse.move(box["x"] + box["width"] * end, y, steps=10)
    page.wait_for_timeout(800)  # a rerun would have started by now
    during = page.evaluate(_CHART_STATE, key)
    states = page.evaluate("() => window.__glStates.slice()")
    return before, during, states


@pytest.mark.parametrize(("path", "key", "query"), [
    ("explorer", "explorer_chart", {"h": "1e-03"}),
    ("grid", "grid_chart", {"h": "1e-04"}),
], ids=["explorer", "grid"])
def test_dragging_h_moves_the_chart_without_a_rerun_and_the_release_reaches_the_url(
        streamlit_server, tab, path, key, query):
    page = tab({"width": 1280, "height": 720})
    open_page(page, streamlit_server, path, query, timeout=90_000)
    page.wait_for_selector(f".st-key-{key} .js-plotly-plot .slider-rail-rect", timeout=60_000)
    page.wait_for_timeout(800)  # the release listener hooks the chart
    start = page.evaluate(_CHART_STATE, key)
    assert start["value"] == query["h"]
    # an idle chart stays still: the listener's polling writes nothing that is already there
    page.evaluate(_WATCH_CHART, key)
    page.wait_for_timeout(1200)  # three of the listener's polls
    assert page.evaluate("() => window.__glChartChanges") == [], "the idle chart's DOM kept changing"
    page.evaluate(_WATCH_RERUNS)
    # Explorer: the stops span the chart's step range; Grid: 1e-20 .. 1. Both: a quarter of the way in.
    before, during, states = _drag(page, key, 0.6, 0.25)
    assert during["active"] < before["active"], (before, during)
    assert during["traces"] != before["traces"], "the chart's traces did not move with the slider"
    assert during["readout"] != before["readout"] and during["value"] in during["readout"]
    assert "running" not in states, f"a drag reran the script: {states}"
    page.mouse.up()
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('h') === '{during['value']}'",
                           timeout=30_000)
    page.wait_for_selector("[data-test-script-state='notRunning']", timeout=30_000)
    after = page.evaluate(_CHART_STATE, key)
    assert after["value"] == during["value"]  # the rerun draws the chart at the released step
    assert page.evaluate("() => window.__glStates").count("running") == 1  # one rerun: the release
    control = page.locator(f".st-key-h [data-testid='stSliderThumbValue']").first.inner_text()
    assert control == during["value"]  # the URL control took it
    # after that rerun the chart is still idle (one listener loop, not the old one fighting the
    # new over the released step), and a second drag's release reaches the URL as well
    page.wait_for_function("""([key, value]) => { const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
      return gd && gd.dataset.glReleaseHooked === '1' && gd.dataset.glReleased === value; }""",
                           arg=[key, during["value"]], timeout=30_000)  # the new run's listener has the chart
    page.evaluate(_WATCH_CHART, key)
    page.wait_for_timeout(1200)
    assert page.evaluate("() => window.__glChartChanges") == [], "after a rerun the idle chart kept changing"
    _, second, _ = _drag(page, key, 0.25, 0.5)
    page.mouse.up()
    assert second["value"] != during["value"]
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('h') === '{second['value']}'",
                           timeout=30_000)
    screenshot(page, f"{path}-after-drag-1280x720", full_page=False)


def test_the_grid_link_with_the_released_step_opens_that_step(streamlit_server, tab):
    """The released value is the link: opened anew, the Grid's answer is at that step."""
    page = tab({"width": 1280, "height": 720})
    open_page(page, streamlit_server, "grid", {"h": "2e-07"}, timeout=90_000)
    answer = page.locator(".st-key-gl-answer").inner_text()
    # float32 at 1: 2e-7 is 1.68 ulps of 2^-23; x + h rounds to 2 ulps above x
    assert re.search(r"\b2 ulps above x", answer), answer


#: The points each sweep curve draws now (gd._fullData: a frame's arrays decoded).
_CURVE_POINTS = """() => {
  const gd = document.querySelector('.st-key-explorer_chart .js-plotly-plot');
  return gd._fullData.filter(t => t.meta && t.meta.kind === 'sweep').map(t => Array.from(t.x || []).length); }"""


@pytest.mark.parametrize("touch", [False, True], ids=["mouse", "touch"])
def test_play_sweeps_h_and_draws_the_v_as_it_goes_in_the_browser(streamlit_server, tab, _browser, touch):
    """issue 37: a Play button over the Explorer's chart sweeps h from the smallest step to the
    largest, each curve drawn as far as h has come, with no rerun; it ends with every curve whole.
    By mouse, and by touch on a phone-sized touch screen."""
    context = _browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True) if touch else None
    page = context.new_page() if touch else tab({"width": 1280, "height": 720})
    open_page(page, streamlit_server, "explorer", {"h": "1e-03"}, timeout=60_000)
    page.wait_for_selector(".st-key-explorer_chart .updatemenu-button", timeout=60_000)
    whole = page.evaluate(_CURVE_POINTS)
    page.evaluate(_WATCH_RERUNS)
    button = page.locator(".st-key-explorer_chart .updatemenu-button").first
    assert button.text_content().strip() == "▶"
    if touch:
        button.tap()
    else:
        button.click()
    page.wait_for_timeout(700)  # a few frames in: the curves stop short of their right ends
    midway = page.evaluate(_CURVE_POINTS)
    assert all(0 < m < w for m, w in zip(midway, whole)), (midway, whole)
    screenshot(page, f"explorer-play-midway-{'touch' if touch else 'mouse'}", full_page=False)
    page.wait_for_function(f"() => ({_CURVE_POINTS})().every((n, i) => n === {whole}[i])", timeout=15_000)
    assert page.evaluate("() => window.__glStates.slice()") == []  # all of it in the browser: no rerun
    if context is not None:
        context.close()
