"""Every page makes its point on the first screen: a projector (1280x720, light and dark) and a phone.

At 1280x720, with the page scrolled to the top, the answer sentence
(``.st-key-gl-answer``) is inside the viewport and not empty, and the whole main chart
(``.st-key-gl-main-chart``: plot, axis titles and legend) lies inside it and holds a
drawn Plotly chart; at the page's default view in both themes and at its first preset
in the light one (the themes change colours, not the layout). At the default views, every
chart text drawn on the page background meets WCAG AA (4.5:1) in both themes, as painted.
On a 390x844 phone, at each default view, the main plot area is at least 300 px wide, lies
whole on the first screen under the answer and above every control outside the title row,
nothing overlaps the answer or the chart, no Plotly toolbar shows, and nothing scrolls sideways.
On both screens every visible button, link, tab and chip label fits its box (no ellipsis, nothing
clipped; presentation mode's are measured in test_presentation_browser), and so does a step slider's
readout at every stop (every Explorer preset's too, on both screens). Screenshots of each case go to
tests/artifacts/first-screen-<page>-<case>.png: look at them.

The home page's chart is the Explorer's first view, beside its answer.

A last test answers every quiz and checks the URL never carries the answer.
"""

from __future__ import annotations

from urllib.parse import quote, quote_plus

import pytest
from browser_helpers import (
    CHART_TEXT_SIZES,
    AXIS_TITLE_OVERLAPS,
    CLIPPED_LABELS,
    OVERLAPS,
    TEXT_CONTRAST,
    chart_texts_under_aa,
    open_page,
    screenshot,
    wait_for_app,
)

from gradlab.teaching.presets import presets_for, url_query
from gradlab.ui.navigation import PAGES

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
MIN_PLOT_WIDTH = 300
CHART_DRAWN_MS = 60_000  # the first Plotly draw on a shared 2-core machine can take seconds

#: (url path for the browser, page key for presets): home is served at "/".
PAGE_PATHS = [("" if spec.default else spec.url_path, "" if spec.default else spec.url_path) for spec in PAGES]
#: Every page at its default view and at its first preset (if it has presets).
CASES = [(path, None) for path, _ in PAGE_PATHS] + [
    (path, presets_for(key)[0].key) for path, key in PAGE_PATHS if presets_for(key)]
QUIZ_KEYS = {"explorer": "explorer_guess", "roundoff": "roundoff_guess", "network": "network_guess",
             "backward": "backward_guess"}


def _case_id(case) -> str:
    path, preset_key = case
    return f"{path or 'home'}-{preset_key or 'default'}"


def _open_case(page, base_url: str, path: str, preset_key: str | None) -> None:
    query = None
    if preset_key is not None:
        query = url_query(next(p for p in presets_for(path) if p.key == preset_key))
    open_page(page, base_url, path, query, timeout=CHART_DRAWN_MS)


_BOX = """sel => { const e = document.querySelector(sel); if (!e) return null;
  const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
  width: r.width, height: r.height, text: (e.innerText || e.textContent || '').trim()}; }"""
#: The lowest edge of what the main chart draws: its plot area, axis titles, legend and the whole SVG.
_CHART_PARTS_BOTTOM = """() => Math.max(...[...document.querySelectorAll(['.st-key-gl-main-chart .main-svg',
  '.st-key-gl-main-chart .nsewdrag', '.st-key-gl-main-chart .legend', '.st-key-gl-main-chart .g-xtitle',
  '.st-key-gl-main-chart .g-ytitle'].join(', '))].map(e => e.getBoundingClientRect().bottom))"""
_SCROLLED = """() => Math.max(window.scrollY, ...[...document.querySelectorAll(
  '[data-testid=stMain], [data-testid=stAppScrollToBottomContainer]')].map(e => e.scrollTop))"""
_OVERFLOW = """() => [document.documentElement, document.body, ...document.querySelectorAll(
  '[data-testid=stMain], [data-testid=stMainBlockContainer], [data-testid=stAppScrollToBottomContainer]')]
  .filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => `${e.dataset.testid || e.tagName}: scrollWidth ${e.scrollWidth} > clientWidth ${e.clientWidth}`)"""


#: The top of the highest control of the page body (a text box, select, slider, number input) that
#: is not in the title row: on a phone they come after the main chart.
_CONTROLS_TOP = """() => { const tops = [...document.querySelectorAll('[data-testid=stMain] :is([data-testid=stTextInput], '
  + '[data-testid=stSelectbox], [data-testid=stSlider], [data-testid=stNumberInput], [data-testid=stMultiSelect])')]
  .filter(e => !e.closest('.st-key-gl-title-row') && e.getBoundingClientRect().height > 0)
  .map(e => e.getBoundingClientRect().top); return tops.length ? Math.min(...tops) : null; }"""


#: Each step slider's readout in the main chart ("h = 1e-03: f′ ≈ ..."), at every one of its stops,
#: that would not fit in its chart: Plotly writes it on one line from the slider's left end and
#: the chart's SVG cuts what passes its right edge. Measured in the readout's own font, as
#: painted (a canvas measures the text the slider would write at each stop).
_READOUTS_CUT = """() => { const cut = []; const canvas = document.createElement('canvas').getContext('2d');
  for (const text of document.querySelectorAll('.st-key-gl-main-chart .slider-group > text')) {
    const svg = text.ownerSVGElement.getBoundingClientRect(), box = text.getBoundingClientRect();
    const gd = text.closest('.js-plotly-plot'), style = getComputedStyle(text);
    canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    if (box.left < svg.left - 1) cut.push(`'${text.textContent}' starts ${svg.left - box.left} px left of its chart`);
    for (const slider of gd._fullLayout.sliders) {
      const value = slider.currentvalue, room = svg.right - box.left;
      for (const step of slider.steps) {
        const words = `${value.prefix || ''}${step.label}${value.suffix || ''}`;
        const width = canvas.measureText(words).width;
        if (width > room + 1) cut.push(`'${words}' (${width.toFixed(0)} px of text in ${room.toFixed(0)} px)`);
      } } }
  return cut; }"""


def _wait_for_main_chart(page) -> None:
    page.wait_for_selector(".st-key-gl-main-chart .js-plotly-plot .main-svg", timeout=CHART_DRAWN_MS)


#: Cases whose main chart does not yet end inside the first 720 px: there the bottom-edge check is an
#: expected failure (with the numbers), every other check still holds. Empty when every page fits.
#: TODO(explorer owner): remove a case here once its chart's bottom edge is <= 720 at 1280x720.
BOTTOM_EDGE_TODO: set[tuple[str, str | None]] = set()

#: (case, colour scheme): every default view light and dark, every first preset light.
PROJECTOR_CASES = [pytest.param(case, scheme, id=f"{_case_id(case)}-{scheme}")
                   for case in CASES for scheme in (("light", "dark") if case[1] is None else ("light",))]


@pytest.mark.parametrize(("case", "scheme"), PROJECTOR_CASES)
def test_answer_and_main_chart_are_on_the_first_projector_screen(streamlit_server, tab, case, scheme):
    path, preset_key = case
    page = tab(PROJECTOR, scheme)
    _open_case(page, streamlit_server, path, preset_key)
    assert page.locator(".st-key-gl-main-chart").count() == 1, f"/{path}: no main_chart_box()"
    _wait_for_main_chart(page)
    name = f"first-screen-{_case_id(case)}-{scheme}"
    screenshot(page, name, full_page=False)

    assert page.evaluate(_SCROLLED) == 0, "the page must open scrolled to the top"
    answer = page.evaluate(_BOX, ".st-key-gl-answer")
    assert answer is not None, f"/{path}: no answer_box()"
    assert answer["text"], f"/{path}: the answer box is empty"
    assert page.locator(".st-key-gl-answer").is_visible()
    assert 0 <= answer["top"] and answer["bottom"] <= PROJECTOR["height"], (
        f"/{path} ({scheme}): the answer spans y={answer['top']:.0f}..{answer['bottom']:.0f}, "
        f"not inside the first {PROJECTOR['height']} px; see {name}.png")
    chart = page.evaluate(_BOX, ".st-key-gl-main-chart")
    assert 0 <= chart["top"] < PROJECTOR["height"], (
        f"/{path} ({scheme}): the main chart starts at y={chart['top']:.0f}, below the first "
        f"{PROJECTOR['height']} px; see {name}.png")
    plot = page.evaluate(_BOX, ".st-key-gl-main-chart .main-svg")
    assert plot["height"] > 100 and plot["width"] > 300, plot
    # All of it: the box, and every part the chart draws (plot, axis titles, legend), ends on screen.
    bottom = max(chart["bottom"], page.evaluate(_CHART_PARTS_BOTTOM))
    fits = bottom <= PROJECTOR["height"]
    if not fits and case in BOTTOM_EDGE_TODO:
        pytest.xfail(f"TODO /{path} ({scheme}): the main chart spans y={chart['top']:.0f}..{bottom:.0f}")
    assert fits, (
        f"/{path} ({scheme}): the main chart spans y={chart['top']:.0f}..{bottom:.0f}, its bottom "
        f"below the first {PROJECTOR['height']} px (legend or axis title off screen); see {name}.png")
    titles = page.evaluate(AXIS_TITLE_OVERLAPS)
    assert not titles, f"/{path} ({scheme}): an axis title over its tick labels: {titles}; see {name}.png"
    sizes = page.evaluate(CHART_TEXT_SIZES)  # read from the back row: no chart text under the body text's
    assert sizes["chart"] is not None and sizes["chart"] >= sizes["body"] - 0.5, (path, scheme, sizes)
    if preset_key is None:  # the colours, on the same visit: every chart text against the page
        low = chart_texts_under_aa(page)
        assert not low, f"/{path} ({scheme}): chart text under {TEXT_CONTRAST}:1: {low}"
    # every visible button, link, tab and chip label fits its box (no ellipsis, nothing clipped)
    assert page.evaluate(CLIPPED_LABELS) == [], f"/{path} ({scheme}): labels cut: {page.evaluate(CLIPPED_LABELS)}"
    assert page.evaluate(_READOUTS_CUT) == [], f"/{path} ({scheme}): slider readouts cut: {page.evaluate(_READOUTS_CUT)}"


#: The Explorer's plot area (axes' inside) at 1280x720, px: its chart holds a title row, the step
#: slider and the legend besides, in the room under the controls and the answer (the Complex-step
#: classic's five legend rows left it 122 px).
MIN_EXPLORER_PLOT_HEIGHT = 180  # 200 before its dtype chips wrapped so each shows (a second row: 36 px)
#: Where the Explorer's chart starts under a three-line answer (px at 1280x720): a chart starting
#: there or above ends inside the first screen (longer answers and a custom f(x) box push it down).
EXPLORER_THREE_LINE_TOP = 350


@pytest.mark.parametrize("preset", [p.key for p in presets_for("explorer")])
def test_every_explorer_preset_keeps_a_tall_plot_on_the_projector(streamlit_server, tab, preset):
    page = tab(PROJECTOR)
    _open_case(page, streamlit_server, "explorer", preset)
    _wait_for_main_chart(page)
    name = f"first-screen-explorer-{preset}-light"
    screenshot(page, name, full_page=False)
    area = page.evaluate(_BOX, ".st-key-gl-main-chart .nsewdrag")
    assert area["height"] >= MIN_EXPLORER_PLOT_HEIGHT, (
        f"explorer/{preset}: the plot area is {area['height']:.0f} px tall at 1280x720, under "
        f"{MIN_EXPLORER_PLOT_HEIGHT}; see {name}.png")
    chart = page.evaluate(_BOX, ".st-key-gl-main-chart")
    if chart["top"] <= EXPLORER_THREE_LINE_TOP:
        bottom = max(chart["bottom"], page.evaluate(_CHART_PARTS_BOTTOM))
        assert bottom <= PROJECTOR["height"], (
            f"explorer/{preset}: the chart spans y={chart['top']:.0f}..{bottom:.0f}, past the first screen; "
            f"see {name}.png")
    assert page.evaluate(AXIS_TITLE_OVERLAPS) == []
    # every selected dtype and scheme shows whole (a box once read "float32 × float64" over four dtypes)
    assert page.evaluate(CLIPPED_LABELS) == [], f"explorer/{preset}: labels cut: {page.evaluate(CLIPPED_LABELS)}"
    # the step slider's readout, at every stop, on the chart (six curves' values once ran off its edge)
    assert page.evaluate(_READOUTS_CUT) == [], f"explorer/{preset}: slider readout cut: {page.evaluate(_READOUTS_CUT)}"


@pytest.mark.parametrize("preset", [p.key for p in presets_for("explorer")])
def test_every_explorer_preset_readout_fits_a_phone(streamlit_server, tab, preset):
    """The step slider's readout of every Explorer preset, at every stop, inside the chart on a phone."""
    page = tab(PHONE)
    _open_case(page, streamlit_server, "explorer", preset)
    _wait_for_main_chart(page)
    cut = page.evaluate(_READOUTS_CUT)  # a preset with no exact derivative has no slider: nothing to cut
    assert cut == [], f"explorer/{preset}: slider readout cut on a phone: {cut}"


#: Every page's default view on a phone (each first preset is measured on the projector above;
#: the Grad check's own phone test opens its question's preset).
PHONE_CASES = [(path, None) for path, _ in PAGE_PATHS]


@pytest.mark.parametrize("case", PHONE_CASES, ids=_case_id)
def test_phone_plot_is_wide_enough_and_nothing_overflows(streamlit_server, tab, case):
    path, preset_key = case
    page = tab(PHONE)
    _open_case(page, streamlit_server, path, preset_key)
    _wait_for_main_chart(page)
    name = f"first-screen-{_case_id(case)}-phone"
    screenshot(page, name, full_page=False)

    assert page.evaluate(_OVERFLOW) == [], f"/{path}: sideways overflow on a phone; see {name}.png"
    # The plot area proper: the drag layer of the first subplot (axes' inside).
    area = page.evaluate(_BOX, ".st-key-gl-main-chart .nsewdrag")
    assert area is not None, f"/{path}: the main chart has no plot area"
    assert area["width"] >= MIN_PLOT_WIDTH, (
        f"/{path}: the main plot area is {area['width']:.0f} px wide on a phone "
        f"(legend or margins take the rest); see {name}.png")
    # The point on the first screen: the whole plot area, above the long controls (they follow it).
    assert 0 <= area["top"] and area["bottom"] <= PHONE["height"], (
        f"/{path}: the main plot area spans y={area['top']:.0f}..{area['bottom']:.0f} on a "
        f"{PHONE['height']} px phone screen; see {name}.png")
    answer = page.evaluate(_BOX, ".st-key-gl-answer")
    assert answer is not None and answer["bottom"] <= area["top"], (answer, area)  # the sentence, then the chart
    controls = page.evaluate(_CONTROLS_TOP)
    assert controls is None or controls >= area["bottom"], (
        f"/{path}: a control starts at y={controls:.0f}, above the plot area's bottom {area['bottom']:.0f}; "
        f"see {name}.png")
    assert page.evaluate(OVERLAPS) == [], f"/{path}: {page.evaluate(OVERLAPS)}; see {name}.png"
    assert page.evaluate(CLIPPED_LABELS) == [], f"/{path}: labels cut on a phone: {page.evaluate(CLIPPED_LABELS)}"
    assert page.evaluate(_READOUTS_CUT) == [], f"/{path}: slider readouts cut on a phone: {page.evaluate(_READOUTS_CUT)}"
    # No Plotly toolbar over a chart's title (a phone has no hover to hide it again).
    assert page.locator(".js-plotly-plot .modebar-container:visible").count() == 0, f"/{path}: toolbar shown"


def _url_forms(text: str) -> set[str]:
    return {text, quote(text, safe=""), quote_plus(text)}


@pytest.mark.parametrize("path", sorted(QUIZ_KEYS))
def test_no_url_ever_holds_a_quiz_answer(streamlit_server, tab, path):
    page = tab(PROJECTOR)
    open_page(page, streamlit_server, path, timeout=CHART_DRAWN_MS)
    key = QUIZ_KEYS[path]
    quiz = page.locator(f".st-key-{key}")
    assert quiz.count() == 1, f"/{path}: no radio with key {key}"
    expander = page.locator("[data-testid=stExpander]").filter(has=quiz)
    if expander.count() and expander.first.locator("details[open]").count() == 0:
        expander.first.locator("summary").first.click()  # a closed expander draws its content when opened
    options = quiz.locator("label")
    options.first.wait_for(timeout=CHART_DRAWN_MS)
    assert options.count() >= 2
    choice = options.last
    chosen = choice.inner_text().strip()
    choice.click()
    page.wait_for_timeout(300)
    wait_for_app(page, timeout=CHART_DRAWN_MS)
    # The choice took: the radio shows it checked.
    assert quiz.locator("input[type=radio]:checked").count() == 1
    url = page.url
    query = url.split("?", 1)[1] if "?" in url else ""
    assert key not in url, f"/{path}: the quiz key is in the URL: {url}"
    for form in _url_forms(chosen):
        assert form not in query, f"/{path}: the chosen answer {chosen!r} is in the URL: {url}"
