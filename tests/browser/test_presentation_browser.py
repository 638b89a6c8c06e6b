"""The shared chrome in Chromium: presentation mode, the Light / Dark switch, and contrast as drawn.

Contrast is computed from the colours the browser actually paints (browser_helpers);
every chart text of every page, light and dark, is checked by the first-screen test on
the same visit that measures its layout.
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import TEXT_CONTRAST, app_background, contrast, open_page, over, screenshot, wait_for_app

from gradlab.teaching.presets import presets_for, url_query
from gradlab.ui.navigation import PAGES

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
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


@pytest.mark.parametrize("path", CHART_PAGES)
def test_main_chart_fills_the_screen_in_presentation(streamlit_server, new_page, path):
    page = new_page("dark")
    open_page(page, streamlit_server, path, {"present": "1"}, timeout=DRAWN_MS)
    assert page.locator(".st-key-gl-main-chart").count() == 1, f"/{path}: no main_chart_box()"
    page.wait_for_selector(".st-key-gl-main-chart .main-svg", timeout=DRAWN_MS)
    screenshot(page, f"presentation-{path}-dark", full_page=False)
    chart = page.locator(".st-key-gl-main-chart .main-svg").first.bounding_box()
    assert chart["width"] >= 0.9 * PROJECTOR["width"], chart
    # It takes the screen the answer leaves, whatever the answer's length: all of it on the
    # first screen, down to the screen's bottom edge (the page's padding apart).
    assert chart["height"] >= 0.5 * PROJECTOR["height"], chart
    assert PROJECTOR["height"] - 60 <= chart["y"] + chart["height"] <= PROJECTOR["height"] + 1, chart
    answer = page.locator(".st-key-gl-answer")
    assert answer.is_visible()
    size = float(answer.evaluate("e => parseFloat(getComputedStyle(e.querySelector('p') || e).fontSize)"))
    assert size >= 28, size  # the answer sentence reads from the back of the room


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
    open_page(page, streamlit_server, "explorer", {"present": "1"}, timeout=DRAWN_MS)
    page.wait_for_selector(".js-plotly-plot .xtick text", timeout=DRAWN_MS)
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
