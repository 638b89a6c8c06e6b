"""Network and Backward pages in Chromium: the first screen at 1280x720 (light, dark) and on a 390x844
phone ("classroom first": a projector and a phone read the answer without scrolling). Screenshots go to tests/artifacts; look at them."""

import pytest
from browser_helpers import open_page, screenshot

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
ANSWER, CHART = ".st-key-gl-answer", ".st-key-gl-main-chart"
LOAD_MS = 120_000
#: The page, and how its answer sentence must begin on the question's own view.
PAGES = {"network": "Autograd (-0.00952) is right", "backward": "y.backward(v) weights each output"}

BOX = """sel => { const e = document.querySelector(sel); if (!e) return null;
  const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, left: b.left, right: b.right}; }"""
PLOT = """() => { const chart = document.querySelector('.st-key-gl-main-chart');
  const area = chart.querySelector('.nsewdrag'), legend = chart.querySelector('.legend');
  const box = e => { const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, width: b.width}; };
  return {area: box(area), legend: box(legend)}; }"""
BACKGROUND = """() => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"""
WIDTHS = """() => [document.documentElement.scrollWidth,
  ...[...document.querySelectorAll('[data-testid=stMain], [data-testid=stMainBlockContainer]')].map(e => e.scrollWidth)]"""


def _open(browser, base_url: str, path: str, viewport: dict, scheme: str):
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    open_page(page, base_url, path, {"embed_options": "dark_theme"} if scheme == "dark" else None, timeout=LOAD_MS)
    page.locator(f"{CHART} .nsewdrag").wait_for(timeout=LOAD_MS)
    page.wait_for_timeout(500)  # plotly's first draw
    return context, page


def _brightness(css_colour: str) -> float:
    r, g, b = (int(v) for v in css_colour[css_colour.index("(") + 1:-1].split(",")[:3])
    return (r + g + b) / 3


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("path", list(PAGES))
def test_at_1280x720_the_answer_and_the_whole_main_chart_are_on_the_first_screen(
        streamlit_server, reused_browser, path, scheme):
    context, page = _open(reused_browser, streamlit_server, path, PROJECTOR, scheme)
    try:
        assert page.locator("[data-testid='stException']").count() == 0
        assert (_brightness(page.evaluate(BACKGROUND)) < 60) == (scheme == "dark")
        answer, chart = page.evaluate(BOX, ANSWER), page.evaluate(BOX, CHART)
        assert 0 <= answer["top"] and answer["bottom"] <= PROJECTOR["height"], answer  # read whole
        said = page.locator(f"{ANSWER} [data-testid='stMarkdownContainer']").inner_text()
        assert said.startswith(PAGES[path]), said
        assert answer["bottom"] <= chart["top"] and chart["bottom"] <= PROJECTOR["height"], chart
        plot = page.evaluate(PLOT)
        assert plot["legend"]["bottom"] <= PROJECTOR["height"], plot  # the legend too, under the plot
        screenshot(page, f"{path}-first-screen-1280x720-{scheme}", full_page=False)
    finally:
        context.close()


@pytest.mark.parametrize("path", list(PAGES))
def test_on_a_390px_phone_the_plot_is_wide_the_legend_below_and_nothing_overflows(
        streamlit_server, reused_browser, path):
    context, page = _open(reused_browser, streamlit_server, path, PHONE, "light")
    try:
        assert page.locator("[data-testid='stException']").count() == 0
        screenshot(page, f"{path}-phone-390x844-top", full_page=False)
        page.locator(CHART).scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        plot = page.evaluate(PLOT)
        assert plot["area"]["width"] >= 300, plot
        assert plot["legend"]["top"] >= plot["area"]["bottom"], plot  # below the plot, not beside it
        assert max(page.evaluate(WIDTHS)) <= PHONE["width"]  # no sideways scrolling
        screenshot(page, f"{path}-phone-390x844-chart", full_page=False)
    finally:
        context.close()


def test_on_a_phone_the_backward_tables_answer_column_is_on_screen(streamlit_server, reused_browser):
    context, page = _open(reused_browser, streamlit_server, "backward", PHONE, "light")
    try:
        table = page.locator("[data-testid='stTable']").first
        table.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        headers = page.evaluate("""() => [...document.querySelector("[data-testid='stTable']")
            .querySelectorAll("thead th")].map(e => e.innerText.trim())""")
        assert headers[:2] == ["entry", ".grad"], headers
        # The answer column, header and values, lies inside the phone's width.
        grad = page.locator("[data-testid='stTable'] thead th").nth(1).bounding_box()
        assert grad["x"] >= 0 and grad["x"] + grad["width"] <= PHONE["width"], grad
        screenshot(page, "backward-phone-390x844-table", full_page=False)
    finally:
        context.close()


def test_the_network_card_opens_a_page_that_prints_the_questions_number(streamlit_server, browser_page):
    # The home card promises "scipy −0.014901161193847656, as in the question": follow it as a
    # visitor would and read the number off the page, on whatever CPU this runs.
    from browser_helpers import wait_for_app

    from gradlab.teaching.presets import gallery

    page = browser_page
    open_page(page, streamlit_server)
    card = next(c for c in gallery() if c.page == "network")
    href = page.get_by_role("link", name=card.label).get_attribute("href")
    assert href.split("?")[0].endswith("network"), href
    page.goto(href if href.startswith("http") else streamlit_server + "/" + href.lstrip("/"))
    wait_for_app(page, timeout=LOAD_MS)
    table = page.locator("[data-testid='stTable']").first
    table.wait_for(timeout=LOAD_MS)
    assert "-0.014901161193847656" in table.inner_text()
    said = page.locator(f"{ANSWER} [data-testid='stMarkdownContainer']").inner_text()
    assert said.startswith(PAGES["network"]), said
