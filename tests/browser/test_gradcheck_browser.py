"""Grad check page in Chromium: the first screen at 1280x720 (light, dark) and on a 390x844 phone;
its tabs are drawn lazily and the open tab is kept in the URL. Screenshots go to tests/artifacts."""

import pytest
from browser_helpers import open_page, screenshot, wait_for_app

pytestmark = pytest.mark.browser

TAYLOR_TEXT = "This test needs no step and no tolerance"
SWEEP_CAPTION = "Each line is one sampled element"


def test_clicking_a_tab_computes_it_and_puts_it_in_the_url(streamlit_server, browser_page):
    page = browser_page
    open_page(page, streamlit_server, "gradcheck", {"shape": "12x10"})
    assert page.get_by_text(SWEEP_CAPTION).count() == 1  # the main chart: always there
    assert page.get_by_text(TAYLOR_TEXT).count() == 0  # not drawn while its tab is closed

    page.get_by_role("tab", name="Taylor test").click()
    page.get_by_text(TAYLOR_TEXT).wait_for(timeout=30_000)
    wait_for_app(page)
    assert "view=Taylor" in page.url, page.url
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "gradcheck-taylor-tab")

    page.reload()  # the shared link opens the same tab
    wait_for_app(page)
    page.get_by_text(TAYLOR_TEXT).wait_for(timeout=30_000)


# ------------------------------------------------------------- the first screen, as a class sees it

PROJECTOR = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
ANSWER, CHART = ".st-key-gl-answer", ".st-key-gl-main-chart"
LOAD_MS = 120_000  # a first run imports torch and checks a 140×120 input
#: The question's own check (the first preset): what a lecturer opens.
QUESTION = {"shape": "140x120", "dtype": "float32", "scheme": "Forward", "eps": "1e-03"}

BOX = """sel => { const e = document.querySelector(sel); if (!e) return null;
  const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, left: b.left, right: b.right}; }"""
# The main chart's plot area (plotly's drag layer of the x/y subplot) and its legend.
PLOT = """() => { const chart = document.querySelector('.st-key-gl-main-chart');
  const area = chart.querySelector('.nsewdrag'), legend = chart.querySelector('.legend');
  const box = e => { const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, width: b.width}; };
  return {area: box(area), legend: box(legend)}; }"""
BACKGROUND = """() => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"""


def _first_screen(browser, base_url: str, viewport: dict, scheme: str):
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    query = dict(QUESTION, **({"embed_options": "dark_theme"} if scheme == "dark" else {}))
    open_page(page, base_url, "gradcheck", query, timeout=LOAD_MS)
    page.locator(f"{CHART} .nsewdrag").wait_for(timeout=LOAD_MS)
    page.wait_for_timeout(500)  # plotly's first draw
    return context, page


def _brightness(css_colour: str) -> float:
    r, g, b = (int(v) for v in css_colour[css_colour.index("(") + 1:-1].split(",")[:3])
    return (r + g + b) / 3


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_at_1280x720_the_answer_and_the_whole_main_chart_are_on_the_first_screen(
        streamlit_server, reused_browser, scheme):
    context, page = _first_screen(reused_browser, streamlit_server, PROJECTOR, scheme)
    try:
        assert page.locator("[data-testid='stException']").count() == 0
        dark = _brightness(page.evaluate(BACKGROUND)) < 60
        assert dark == (scheme == "dark")  # the theme asked for is the one drawn
        answer, chart = page.evaluate(BOX, ANSWER), page.evaluate(BOX, CHART)
        assert 0 <= answer["top"] and answer["bottom"] <= PROJECTOR["height"], answer  # read whole
        said = page.locator(f"{ANSWER} [data-testid='stMarkdownContainer']").inner_text()
        assert said.startswith("The gradient is right") and "says FAIL" in said, said
        assert answer["bottom"] <= chart["top"] and chart["bottom"] <= PROJECTOR["height"], chart
        plot = page.evaluate(PLOT)
        assert plot["legend"]["bottom"] <= PROJECTOR["height"], plot  # the legend too, under the plot
        screenshot(page, f"gradcheck-first-screen-1280x720-{scheme}", full_page=False)
    finally:
        context.close()


def test_on_a_390px_phone_the_plot_is_wide_the_legend_below_and_nothing_overflows(
        streamlit_server, reused_browser):
    context, page = _first_screen(reused_browser, streamlit_server, PHONE, "light")
    try:
        assert page.locator("[data-testid='stException']").count() == 0
        screenshot(page, "gradcheck-phone-390x844-top", full_page=False)
        page.locator(CHART).scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        plot = page.evaluate(PLOT)
        assert plot["area"]["width"] >= 300, plot
        assert plot["legend"]["top"] >= plot["area"]["bottom"], plot  # below the plot, not beside it
        widths = page.evaluate("""() => [document.documentElement.scrollWidth,
            ...[...document.querySelectorAll('[data-testid=stMain], [data-testid=stMainBlockContainer]')]
               .map(e => e.scrollWidth)]""")
        assert max(widths) <= PHONE["width"], widths  # no sideways scrolling
        screenshot(page, "gradcheck-phone-390x844-chart", full_page=False)
        # The table's answer column (state) comes second, right after the element: on screen.
        table = page.locator("[data-testid='stDataFrame']")
        table.scroll_into_view_if_needed()
        headers = page.evaluate("""() => [...document.querySelectorAll(
            "[data-testid='stDataFrame'] [role='columnheader']")].map(e => e.innerText.trim())""")
        assert headers[:2] == ["element", "state"], headers
        box = table.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        screenshot(page, "gradcheck-phone-390x844-table", full_page=False)
    finally:
        context.close()


# ------------------------------------------------------------- a full check, opened twice

def test_a_full_check_opens_the_same_in_a_second_visitors_tab(streamlit_server, _browser):
    """The second visitor gets the first one's cached full check, drawn, not an error.

    (A cached call that drew its progress bar replayed the bar's updates in the second
    visitor's run, where that bar does not exist: "Something went wrong".)
    """
    query = {"shape": "10x12", "mode": "full", "seed": "7"}
    for visitor in ("first", "second"):
        context = _browser.new_context(viewport=PROJECTOR)
        try:
            page = context.new_page()
            open_page(page, streamlit_server, "gradcheck", query, timeout=LOAD_MS)
            page.locator(f"{CHART} .nsewdrag").wait_for(timeout=LOAD_MS)
            assert page.locator("[data-testid='stException']").count() == 0, visitor
            assert page.get_by_text("Something went wrong").count() == 0, visitor
            assert page.locator(ANSWER).inner_text().strip(), visitor
        finally:
            context.close()


# ------------------------------------------------------------- the question's hand-written check

@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_the_hand_written_check_shows_what_the_questions_code_prints(streamlit_server, browser_page, reduction):
    """The first preset's "hand-written check" lists the float32 values the question's own loop
    prints (torch's MSELoss in float32, one element moved, divided by eps): 0.0 and multiples of
    ulp(L)/eps. The elements are the table's, read from the page's share-link check via the API."""
    import numpy as np
    import torch

    from gradlab.check.lab.settings import CheckSettings, run_check
    from gradlab.teaching.presets import preset, url_query
    from question_check import page_data, questions_grad_check

    query = {**url_query(preset("gradcheck", "float32_check_fails")), "reduction": reduction}
    open_page(browser_page, streamlit_server, "gradcheck", query, timeout=LOAD_MS)
    said = browser_page.locator(".st-key-gl-hand-written").inner_text()
    listed = said.split(" prints ", 1)[1].split(" where autograd", 1)[0].split(", ")
    # the same seeded draw of 5 elements the page made (its settings are the URL's)
    result = run_check(CheckSettings(shape=(140, 120), dtype="float32", scheme="forward", eps=1e-3,
                                     mode="sampled", samples=5, seed=0, reduction=reduction))
    data, target = page_data((140, 120), torch.float32)
    expected = questions_grad_check(data, target, reduction, 1e-3, [tuple(i) for i in result.table["index"]])
    assert [np.float32(v) for v in listed] == [np.float32(e) for e in expected], said
    assert "0.0" in listed
