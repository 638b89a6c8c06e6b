"""issue 37: the Explorer answer's words "round-off" and "truncation" tied to the chart, both ways,
by mouse (hover) and by touch (a tap keeps the light, a second tap lets go).

What "lit" means is read off the chart as drawn: a band is lit when its shape carries the lit
class, a curve's part when a stroke clipped to its band's x-range is drawn over the curve. The
band names come from the engine (:func:`gradlab.step_sweep.regimes.band_name` for each curve the
default view splits), never from the page's own JavaScript.
"""

from __future__ import annotations

import pytest
from browser_helpers import open_page, screenshot

from gradlab.labs.explorer.first_view import default_sweep_settings
from gradlab.step_sweep.regimes import REGIMES, band_name, regime_steps
from gradlab.step_sweep.engine import run_sweep

pytestmark = pytest.mark.browser

_CHART = ".st-key-gl-main-chart .js-plotly-plot"

#: What is lit now: the words, the bands (by name) and each stroke's x-range against its band's.
_LIT = f"""() => {{
  const gd = document.querySelector('{_CHART}');
  const bands = [...gd.querySelectorAll('.shapelayer path.gl-lit')];
  // a stroke's x-range is its clip's rectangle (its own box is the whole curve's), on screen
  const strokes = [...gd.querySelectorAll('path.gl-regime-stroke')].map(p => {{
    const r = document.querySelector(p.getAttribute('clip-path').slice(4, -1) + ' rect'), m = p.getScreenCTM();
    const x0 = +r.getAttribute('x'), x1 = x0 + +r.getAttribute('width');
    return [new DOMPoint(x0, 0).matrixTransform(m).x, new DOMPoint(x1, 0).matrixTransform(m).x];
  }});
  return {{words: [...document.querySelectorAll('a.gl-lit')].map(a => a.textContent.toLowerCase()),
          bands: bands.map(p => gd.layout.shapes[+p.dataset.index].name).sort(),
          strokes,
          spans: bands.map(p => {{ const r = p.getBoundingClientRect(); return [r.left, r.right]; }})}};
}}"""

#: The centre of a band (by name) and of a curve's point (by curve and index), in page pixels.
_BAND_CENTRE = f"""(name) => {{
  const gd = document.querySelector('{_CHART}');
  const i = gd.layout.shapes.findIndex(s => s.name === name);
  const r = gd.querySelector(`.shapelayer path[data-index="${{i}}"]`).getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
}}"""
_POINT = f"""([curve, h]) => {{
  const gd = document.querySelector('{_CHART}');
  const t = gd._fullData.find(t => t.meta && t.meta.kind === 'sweep' && `${{t.meta.dtype}} ${{t.meta.scheme}}` === curve);
  const i = t.x.findIndex(x => x >= h);
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, r = gd.getBoundingClientRect();
  return [r.left + xa._offset + xa.l2p(Math.log10(t.x[i])), r.top + ya._offset + ya.l2p(Math.log10(t.y[i]))];
}}"""


@pytest.fixture(scope="module")
def splits():
    """(curve, h*) of each curve the default view splits, from the engine."""
    steps = regime_steps(run_sweep(default_sweep_settings()))
    assert len(steps) >= 2  # the default view draws two curves, each with its split
    return [(f"{d} {s}", h) for d, s, h in steps]


def _point(page, touch: bool, x: float, y: float) -> None:
    page.touchscreen.tap(x, y) if touch else page.mouse.move(x, y)
    page.wait_for_timeout(250)


def _word(page, regime: str):
    return page.locator(f'a[href="#gl-regime-{regime}"]')


@pytest.mark.parametrize("touch", [False, True], ids=["mouse", "touch"])
def test_the_answers_regime_words_and_the_charts_bands_light_each_other(streamlit_server, tab, _browser, splits, touch):
    context = _browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True) if touch else None
    page = context.new_page() if touch else tab({"width": 1280, "height": 720})
    open_page(page, streamlit_server, "explorer", timeout=60_000)
    page.wait_for_selector(f"{_CHART} .shapelayer path", timeout=60_000)
    url = page.url
    for regime in REGIMES:
        assert _word(page, regime).count() == 1  # the answer names each regime once, as a link
    nothing = {"words": [], "bands": [], "strokes": [], "spans": []}
    assert page.evaluate(_LIT) == nothing

    # a word lights its regime's band on every curve, and strokes each curve's part under it
    for regime in REGIMES:
        word = _word(page, regime)
        word.scroll_into_view_if_needed()
        word.tap() if touch else word.hover()
        page.wait_for_timeout(250)
        lit = page.evaluate(_LIT)
        assert lit["words"] == [regime]
        assert lit["bands"] == sorted(band_name(regime, *c.split(" ")) for c, _ in splits)
        assert len(lit["strokes"]) == len(splits)
        for left, right in lit["strokes"]:  # each stroke inside one lit band's x-range
            assert right > left and any(a - 1 <= left and right <= b + 1 for a, b in lit["spans"]), lit
        if regime == REGIMES[0]:
            screenshot(page, f"explorer-regime-word-{'touch' if touch else 'mouse'}", full_page=False)
        if touch:  # a tap keeps it lit; a second tap lets go
            word.tap()
            page.wait_for_timeout(250)
        else:
            page.mouse.move(1, 1)
            page.wait_for_timeout(250)
        assert page.evaluate(_LIT) == nothing
    assert page.url == url  # the words go nowhere: no hash, no history entry

    # the reverse: a band, then a curve's point, lights its regime's word (and only that band)
    page.locator(_CHART).scroll_into_view_if_needed()
    curve, h_star = splits[-1]
    for regime, h in ((REGIMES[0], h_star / 1e4), (REGIMES[1], h_star * 30)):
        name = band_name(regime, *curve.split(" "))
        _point(page, touch, *page.evaluate(_BAND_CENTRE, name))
        lit = page.evaluate(_LIT)
        assert lit["words"] == [regime] and lit["bands"] == [name] and len(lit["strokes"]) == 1, lit
        if touch:
            _point(page, touch, *page.evaluate(_BAND_CENTRE, name))  # again: let go
            assert page.evaluate(_LIT)["bands"] == []
        _point(page, touch, *page.evaluate(_POINT, [curve, h]))
        lit = page.evaluate(_LIT)
        assert lit["words"] == [regime] and len(lit["bands"]) == 1 and lit["bands"][0].startswith(regime), lit
        if not touch:
            page.mouse.move(1, 1)
    if context is not None:
        context.close()
