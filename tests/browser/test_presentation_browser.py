"""The shared chrome in Chromium: presentation mode, the Light / Dark switch, and contrast as drawn.

Contrast is computed from the colours the browser actually paints (browser_helpers);
every chart text of every page, light and dark, is checked by the first-screen test on
the same visit that measures its layout.
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import (
    AXIS_TITLE_OVERLAPS,
    CLIPPED_LABELS,
    OVERLAPS,
    TEXT_CONTRAST,
    app_background,
    contrast,
    open_page,
    over,
    screenshot,
    wait_for_app,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from gradlab.teaching.presets import preset, presets_for, url_query
from gradlab.ui.navigation import PAGES

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
WIDE = {"width": 1920, "height": 1080}
DRAWN_MS = 60_000
LIGHT_BG, DARK_BG = (255, 255, 255), (16, 20, 24)  # .streamlit/config.toml backgroundColor
CHART_PAGES = [spec.url_path for spec in PAGES if not spec.default]


@pytest.fixture()
def new_page(_browser, tab):
    """A reused tab (see conftest's ``tab``), or with ``own=True`` a browser context of the
    test's own: for a test that changes what a browser keeps (the theme picked in the menu)."""
    contexts = []

    def make(scheme: str = "light", viewport: dict = PROJECTOR, own: bool = False):
        if not own:
            return tab(viewport, scheme)
        context = _browser.new_context(viewport=viewport, color_scheme=scheme)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def test_contrast_helper_spec():
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast(over("rgba(0, 0, 0, 0.5)", (255, 255, 255)), (255, 255, 255)) == pytest.approx(
        contrast((127.5, 127.5, 127.5), (255, 255, 255)))


def _position(page) -> str:
    return page.locator(".st-key-gl-present-bar").inner_text()


def current_label(page) -> str | None:
    """The label of the preset the bar says is on screen ("2 of 4: <label>"), or None."""
    found = re.search(r"\d+ of \d+: (.+)", _position(page))
    return found.group(1).splitlines()[0].strip() if found else None


# ---------------------------------------------------------------- presentation mode


def test_present_button_enters_and_exit_leaves(streamlit_server, new_page):
    page = new_page()
    open_page(page, streamlit_server)
    normal = float(page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)"))
    assert page.locator("[data-testid=stSidebar]").is_visible()
    page.locator(".st-key-gl-present button:visible").click()
    wait_for_app(page)
    assert "present=1" in page.url
    page.locator(".st-key-gl-present-bar").wait_for()
    assert not page.locator("[data-testid=stSidebar]").is_visible()
    large = float(page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)"))
    assert large >= 1.3 * normal, (normal, large)
    page.locator(".st-key-gl-present-exit button:visible").click()
    wait_for_app(page)
    assert "present" not in page.url
    assert page.locator("[data-testid=stSidebar]").is_visible()


def test_home_in_presentation_is_just_larger(streamlit_server, new_page):
    page = new_page()
    open_page(page, streamlit_server, "", {"present": "1"})
    screenshot(page, "presentation-home-light", full_page=False)
    assert page.locator(".st-key-gl-answer").is_visible()
    assert page.get_by_role("heading", name="Start from a question").count() == 1  # nothing hidden
    assert page.locator(".st-key-gl-present-prev").count() == 0  # home has no presets to step
    assert float(page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")) >= 22
    page.wait_for_timeout(500)  # fonts and Plotly's layout settle the widths
    assert page.evaluate(CLIPPED_LABELS) == [], f"home presented: labels cut: {page.evaluate(CLIPPED_LABELS)}"


def test_next_and_previous_step_through_the_page_presets(streamlit_server, new_page):
    presets = presets_for("backward")
    n = len(presets)
    page = new_page()
    open_page(page, streamlit_server, "backward", {"present": "1"})
    start = re.search(rf"(\d+) of {n}:", _position(page))  # the default view may be a preset
    current = int(start.group(1)) - 1 if start else None
    for step, delta in (("next", +1), ("next", +1), ("prev", -1), ("prev", -1), ("prev", -1)):
        # Cyclic: from no preset Next opens the first and Previous the last.
        expected = (0 if delta > 0 else n - 1) if current is None else (current + delta) % n
        page.locator(f".st-key-gl-present-{step} button:visible").click()
        wait_for_app(page)
        p = presets[expected]
        assert f"{expected + 1} of {n}: {p.label}" in _position(page), _position(page)
        assert "present=1" in page.url  # stepping keeps presentation mode
        current = expected
    last = presets[current]
    # The preset's values are in the URL, as after the page's own preset button.
    assert any(f"{key}=" in page.url for key in url_query(last)), page.url


#: The projector sizes a lecture room meets, and both themes: 1280x720 in each (a long preset name
#: and the theme links wrapped over the answer there), 1920x1080 in the dark one. A theme changes
#: colours, not the layout (tests/test_presentation.py checks that no theme sets anything else and no
#: page reads the theme), so the other two pairs would repeat a measurement (the CI's time is short).
PROJECTIONS = [pytest.param(size, scheme, id=f"{size['width']}x{size['height']}-{scheme}")
               for size, scheme in ((PROJECTOR, "light"), (WIDE, "dark"))]  # a theme changes colours, not
# the layout: 1280x720 dark's colours are measured by test_first_screen_browser and the contrast tests
#: Chart text a room reads: tick labels, axis titles, annotations, legend entries, the title.
MIN_CHART_FONT = 24  # the presented page's body text (gradlab/ui/presentation.py: html { font-size: 24px })

#: The font size (px) of every chart text a room reads in the main chart, with its text.
#: A curve's name inside its regime band is sized to the band (gradlab.figures.layout.BAND_SIZED): left out
#: here, and REGIME_OVERLAPS checks those names do not overlap each other instead.
CHART_FONTS = """() => { const gd = document.querySelector('.st-key-gl-main-chart .js-plotly-plot');
  const names = ((gd && gd._fullLayout && gd._fullLayout.annotations) || []).map(a => a.name);
  const band = t => { const g = t.closest('.annotation'); return g && names[Number(g.getAttribute('data-index'))] === 'regime'; };
  return [...document.querySelectorAll(['.xtick text', '.ytick text', 'text.annotation-text',
    'text.legendtext', 'text.gtitle', '.g-xtitle text', '.g-ytitle text'].map(c => '.st-key-gl-main-chart ' + c).join(', '))]
  .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0 && !band(t))
  .map(t => [t.textContent.trim().slice(0, 30), parseFloat(getComputedStyle(t).fontSize)]); }"""
#: Pairs of regime-band names drawn over each other (the 8-bit preset's six overlapped at 20 px).
REGIME_OVERLAPS = """() => { const gd = document.querySelector('.st-key-gl-main-chart .js-plotly-plot');
  const names = ((gd && gd._fullLayout && gd._fullLayout.annotations) || []).map(a => a.name);
  const boxes = [...document.querySelectorAll('.st-key-gl-main-chart .annotation')]
    .filter(g => names[Number(g.getAttribute('data-index'))] === 'regime')
    .map(g => [g.textContent, g.querySelector('text').getBoundingClientRect()]);
  const hits = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, p] = boxes[i], [b, q] = boxes[j];
    if (Math.min(p.right, q.right) - Math.max(p.left, q.left) > 1 && Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 1)
      hits.push([a, b]); }
  return hits; }"""
#: The lowest edge of what the main chart draws (its SVG layers), and the chart box's own.
CHART_BOTTOMS = """() => [Math.max(...[...document.querySelectorAll('.st-key-gl-main-chart .main-svg')]
  .map(e => e.getBoundingClientRect().bottom)), document.querySelector('.st-key-gl-main-chart').getBoundingClientRect().bottom]"""


def _check_presented(page, path: str, size: dict, name: str) -> None:
    """What a presented page must be, measured: nothing over the answer or the chart, the bar above
    them in one row, the chart to the screen's bottom with large text and no toolbar."""
    page.wait_for_selector(".st-key-gl-main-chart .main-svg", timeout=DRAWN_MS)
    page.wait_for_timeout(400)  # Plotly draws annotations after the axes
    shot = screenshot(page, name, full_page=False)
    assert page.evaluate(OVERLAPS) == [], f"/{path}: {page.evaluate(OVERLAPS)}; see {shot.name}"
    assert page.evaluate(CLIPPED_LABELS) == [], f"/{path}: labels cut: {page.evaluate(CLIPPED_LABELS)}"
    bar = page.locator(".st-key-gl-present-bar").bounding_box()
    answer = page.locator(".st-key-gl-answer").bounding_box()
    assert bar["y"] + bar["height"] <= answer["y"], (bar, answer, shot.name)
    # the question on screen, whole, between the bar and the answer: the room reads what is asked first
    question = page.locator(".st-key-gl-present-question [data-testid=stMarkdown]").first
    assert question.is_visible(), f"/{path}: the question is not on screen; see {shot.name}"
    asked = question.bounding_box()
    assert asked["height"] > 0 and asked["x"] >= 0 and asked["x"] + asked["width"] <= size["width"] + 1, asked
    assert bar["y"] + bar["height"] <= asked["y"] and asked["y"] + asked["height"] <= answer["y"] + 1, \
        (bar, asked, answer, shot.name)
    words = question.inner_text()
    preset = current_label(page)
    expected = next((p.question for p in presets_for(path) if p.label == preset), None)
    assert words.startswith("The question: " + expected) if expected else words, (preset, words)
    button = page.locator(".st-key-gl-present-exit button").bounding_box()
    assert bar["height"] <= 1.6 * button["height"], f"/{path}: the bar wraps to two rows ({bar}); see {shot.name}"
    chart = page.locator(".st-key-gl-main-chart .main-svg").first.bounding_box()
    assert chart["width"] >= 0.9 * size["width"], chart
    # It takes the screen the answer leaves, whatever the answer's length: all of it on the
    # first screen, down to the screen's bottom edge (the page's padding apart).
    assert chart["height"] >= 0.45 * size["height"], (chart, shot.name)
    drawn, box = page.evaluate(CHART_BOTTOMS)
    assert drawn <= box + 1 and box <= size["height"] + 1, (f"/{path}: the chart draws to y={drawn:.0f}, its box ends "
                                                             f"at {box:.0f}, the screen at {size['height']}; see {shot.name}")
    # the chart, or what a preset adds under it (present_also), ends at the screen's bottom edge
    last = page.evaluate("""() => Math.max(...[...document.querySelectorAll('.st-key-gl-main-chart, .st-key-gl-present-also')]
      .map(e => e.getBoundingClientRect().bottom))""")
    assert size["height"] - 60 <= last <= size["height"] + 1, (last, shot.name)
    plot = page.locator(".st-key-gl-main-chart .nsewdrag").first.bounding_box()
    assert plot["height"] >= 0.25 * size["height"], f"/{path}: the plot area is {plot['height']:.0f} px tall; see {shot.name}"
    small = [(text, px) for text, px in page.evaluate(CHART_FONTS) if px < MIN_CHART_FONT]
    assert not small, f"/{path}: chart text under {MIN_CHART_FONT} px: {small[:6]}; see {shot.name}"
    assert page.evaluate(REGIME_OVERLAPS) == [], f"/{path}: band names overlap; see {shot.name}"
    assert page.locator(".st-key-gl-main-chart .modebar-container:visible").count() == 0  # no toolbar on the title
    assert page.evaluate(AXIS_TITLE_OVERLAPS) == [], f"/{path}: {page.evaluate(AXIS_TITLE_OVERLAPS)}; see {shot.name}"
    size_px = float(page.locator(".st-key-gl-answer").evaluate(
        "e => parseFloat(getComputedStyle(e.querySelector('p') || e).fontSize)"))
    assert size_px >= 28, size_px  # the answer sentence reads from the back of the room


@pytest.mark.parametrize(("size", "scheme"), PROJECTIONS)
@pytest.mark.parametrize("path", CHART_PAGES)
def test_presented_page_nothing_overlaps_the_answer_or_the_chart(streamlit_server, new_page, path, size, scheme):
    """At the page's default view, then after Next (a preset's longer name in the bar, the pointer
    still on the button): no tooltip, bar item or hidden block is drawn over the answer or the chart."""
    page = new_page(scheme, size)
    tag = f"{size['width']}x{size['height']}-{scheme}"
    open_page(page, streamlit_server, path, {"present": "1"}, timeout=DRAWN_MS)
    assert page.locator(".st-key-gl-main-chart").count() == 1, f"/{path}: no main_chart_box()"
    _check_presented(page, path, size, f"presentation-{path}-{tag}")
    if presets_for(path):
        page.locator(".st-key-gl-present-next button").hover()
        page.locator(".st-key-gl-present-next button").click()
        wait_for_app(page, timeout=DRAWN_MS)
        page.wait_for_timeout(800)  # a tooltip would have appeared by now
        _check_presented(page, path, size, f"presentation-{path}-{tag}-next")


#: What a presented view shows: the answer, what a preset adds under the chart, and the chart's traces.
_VIEW = """() => [...document.querySelectorAll('.st-key-gl-answer, .st-key-gl-present-also')].map(e => e.innerText)
  .join(' | ') + ' | ' + [...document.querySelectorAll('.st-key-gl-main-chart :is(.scatterlayer path, .barlayer path, '
  + '.point, .heatmaplayer image, text)')].map(e => e.getAttribute('d') || e.getAttribute('transform')
  || e.getAttribute('href')?.slice(-200) || e.textContent).join(';')"""


@pytest.mark.parametrize("path", CHART_PAGES)
def test_every_preset_looks_different_in_presentation(streamlit_server, new_page, path):
    """Stepping through a page's presets, each shows a different answer, chart or list of steps: what a
    preset changes is on screen (Backward's 'Backward twice' changes only its steps)."""
    presets = presets_for(path)
    page = new_page()
    open_page(page, streamlit_server, path, {"present": "1"}, timeout=DRAWN_MS)
    seen: dict[str, str] = {}
    view = page.evaluate(_VIEW)
    for _ in presets:
        page.locator(".st-key-gl-present-next button").click()
        wait_for_app(page, timeout=DRAWN_MS)
        page.wait_for_selector(".st-key-gl-main-chart .main-svg", timeout=DRAWN_MS)
        page.wait_for_timeout(300)
        label = page.locator(".st-key-gl-present-position [data-testid=stMarkdownContainer]").first.inner_text()
        try:  # Plotly redraws after the script run ends: wait for the view to change, if it does
            page.wait_for_function(f"previous => ({_VIEW})() !== previous", arg=view, timeout=10_000)
        except PlaywrightTimeout:
            pass  # it did not change: the assertion below names the preset it looks like
        view = page.evaluate(_VIEW)
        same = [other for other, seen_view in seen.items() if seen_view == view]
        assert not same, f"/{path}: '{label}' looks exactly like '{same[0]}'"
        seen[label] = view
    assert len(seen) == len(presets)


QUIZ_PAGES = ["explorer", "roundoff", "network", "backward"]


@pytest.mark.parametrize("path", QUIZ_PAGES)
def test_the_quiz_is_a_question_then_a_reveal_in_presentation(streamlit_server, new_page, path):
    page = new_page()
    open_page(page, streamlit_server, path, {"present": "1"}, timeout=DRAWN_MS)
    quiz = page.locator(".st-key-gl-quiz")
    assert not quiz.is_visible()  # the chart first
    page.locator(".st-key-gl-present-quiz-" + path).get_by_text("Quiz").click()
    wait_for_app(page, timeout=DRAWN_MS)
    quiz.locator("[role=radiogroup]").first.wait_for(timeout=DRAWN_MS)
    assert not page.locator(".st-key-gl-main-chart").is_visible()  # the question in the chart's place
    assert quiz.locator("[data-testid=stAlert]").count() == 0  # nothing revealed yet
    screenshot(page, f"presentation-{path}-quiz", full_page=False)
    quiz.locator("[role=radiogroup] label").first.click()
    wait_for_app(page, timeout=DRAWN_MS)
    quiz.locator("[data-testid=stAlert]").first.wait_for(timeout=DRAWN_MS)  # the reveal, right or not
    assert page.evaluate(OVERLAPS) == []
    screenshot(page, f"presentation-{path}-quiz-revealed", full_page=False)
    box = quiz.bounding_box()
    assert box["y"] >= page.locator(".st-key-gl-answer").bounding_box()["y"]


# ---------------------------------------------------------------- theme switch and contrast


def test_theme_links_switch_and_keep_the_view(streamlit_server, new_page):
    preset = presets_for("backward")[1]
    page = new_page("light", own=True)
    open_page(page, streamlit_server, "backward", url_query(preset))
    assert app_background(page)[:3] == LIGHT_BG
    view = page.url.split("?", 1)[1]
    page.locator(".st-key-gl-theme-links a", has_text="Dark").click()
    wait_for_app(page)
    assert app_background(page)[:3] == DARK_BG
    assert "embed_options=dark_theme" in page.url and view in page.url, page.url
    page.locator(".st-key-gl-theme-links a", has_text="Light").click()
    wait_for_app(page)
    assert app_background(page)[:3] == LIGHT_BG


def test_app_menu_offers_the_theme_switch(streamlit_server, new_page):
    page = new_page("dark", own=True)
    open_page(page, streamlit_server)
    assert app_background(page)[:3] == DARK_BG  # follows the laptop's dark mode ...
    page.locator("[data-testid=stMainMenuButton]").click()
    page.locator("[data-testid=stMainMenuItem-theme-Light]").click()
    page.wait_for_timeout(500)
    assert app_background(page)[:3] == LIGHT_BG  # ... and a lecturer can pick light


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_tick_labels_and_primary_buttons_meet_aa(streamlit_server, new_page, scheme):
    page = new_page(scheme)
    # The Network chart: it has tick labels and an axis title (the Explorer's step slider now
    # stands where its x axis title was)
    open_page(page, streamlit_server, "network", {"present": "1"}, timeout=DRAWN_MS)
    page.wait_for_selector(".js-plotly-plot .g-xtitle text", timeout=DRAWN_MS)
    background = app_background(page)
    assert background[:3] == (LIGHT_BG if scheme == "light" else DARK_BG)
    for selector in (".js-plotly-plot .xtick text", ".js-plotly-plot .ytick text", ".js-plotly-plot .g-xtitle text"):
        fill = page.locator(selector).first.evaluate("e => getComputedStyle(e).fill")
        ratio = contrast(over(fill, background), background)
        assert ratio >= TEXT_CONTRAST, f"{scheme}: {selector} {fill} has {ratio:.2f}:1"
    button = page.locator("[data-testid=stBaseButton-primary]:visible").first
    colours = button.evaluate("e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]")
    face = over(colours[1], background)
    ratio = contrast(over(colours[0], face), face)
    assert ratio >= TEXT_CONTRAST, f"{scheme}: primary button {colours} has {ratio:.2f}:1"
    body = page.locator("[data-testid=stMarkdownContainer] p").first.evaluate("e => getComputedStyle(e).color")
    assert contrast(over(body, background), background) >= TEXT_CONTRAST


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_sliders_value_meets_aa(streamlit_server, new_page, scheme):
    # Drawn in the primary colour by default: 3.95:1 on the dark background.
    page = new_page(scheme)
    open_page(page, streamlit_server, "grid", timeout=DRAWN_MS)
    background = app_background(page)
    value = page.locator("[data-testid=stSliderThumbValue]").first
    colour = value.evaluate("e => getComputedStyle(e).color")
    ratio = contrast(over(colour, background), background)
    assert ratio >= TEXT_CONTRAST, f"{scheme}: slider value {colour} has {ratio:.2f}:1"


def test_the_8_bit_preset_presented_keeps_its_chart_and_its_band_names_apart(streamlit_server, new_page):
    """issue 37: the "8-bit floats" preset's five-line answer pushed its plot under 200 px, and its six
    band names overlapped when presented. Its answer is four lines there now, the theory under the chart."""
    page = new_page("light", PROJECTOR)
    open_page(page, streamlit_server, "explorer", {**url_query(preset("explorer", "fp8")), "present": "1"},
              timeout=DRAWN_MS)
    _check_presented(page, "explorer", PROJECTOR, "presentation-explorer-fp8-1280x720-light")
