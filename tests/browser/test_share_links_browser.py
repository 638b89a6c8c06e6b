"""A shared link opens exactly the sender's view, also after the sender changed a control.

For one question card per page on the home page (and some pages' preset buttons):
open the view in Chromium, change one control, copy the URL from the address bar, open
it in a fresh browser context, and compare the controls, the charts' data and the
numbers shown. (Every preset's URL restoring every value is checked without a browser:
tests/test_app_pages.py and tests/test_page_explorer.py.) The bug this guards against: a preset
applied from ``?preset=`` was not written into the URL, so after one change the link showed
another view.
"""

from __future__ import annotations

import pytest
from browser_helpers import open_page, screenshot, wait_for_app
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from gradlab.teaching.presets import Preset, gallery, preset

pytestmark = pytest.mark.browser

SETTLE_READS = 20  # reads of a reopened view, 0.5 s apart, until it stops changing
LOAD_MS = 120_000  # a first run imports torch; the grad check of 140×120 takes a while

# page -> (kind, widget label, new value, the URL parameter and value it must then carry)
CHANGES = {
    "roundoff": ("select", "dtype", "float64", ("dtype", "float64")),  # the seed sits in a popover
    "gradcheck": ("select", "dtype", "float64", ("dtype", "float64")),
    "network": ("number", "seed", "1", ("seed", "1")),
    "backward": ("text", "gradient v", "1, 2, 4", ("v", "1, 2, 4")),  # a, b, c sit in a popover
    "explorer": ("number", "point x", "0.7", ("x", "0.7")),
    "grid": ("number", "point x", "0.7", ("x", "0.7")),
    "summed": ("select", "reduction", "mean", ("reduction", "mean")),
}

# Everything a visitor sees that depends on the view: each widget's label, shown value
# and inputs (sliders by their aria values), every Plotly trace's name and data, the
# metrics and static tables.
SNAPSHOT = """() => {
  const main = document;  // the Explorer's controls sit in the sidebar
  const widgets = [...main.querySelectorAll('[data-testid="stWidgetLabel"]')].map(label => {
    const box = label.closest('[data-testid="stElementContainer"]') || label.parentElement;
    const inputs = [...box.querySelectorAll('input, [role="slider"]')].map(e =>
      e.getAttribute('role') === 'slider' ? e.getAttribute('aria-valuetext') || e.getAttribute('aria-valuenow')
      : (e.type === 'checkbox' ? String(e.checked) : e.value));
    return [box.innerText, inputs];
  });
  const charts = [...main.querySelectorAll('.js-plotly-plot')].map(plot => (plot.data || []).map(t =>
    JSON.stringify([t.name ?? null, t.x ?? null, t.y ?? null, t.z ?? null])));
  const numbers = [...main.querySelectorAll('[data-testid="stMetric"], [data-testid="stTable"]')]
    .map(e => e.innerText);
  return {widgets, charts, numbers};
}"""


def _settled(page) -> None:
    wait_for_app(page, timeout=LOAD_MS)
    assert page.locator("[data-testid='stException']").count() == 0


def _change(page, kind: str, label: str, value: str) -> None:
    """Set one control the way a visitor does: type and press Enter, or pick an option."""
    if kind == "select":
        box = page.locator("[data-testid='stSelectbox']").filter(
            has=page.get_by_text(label, exact=True)).first
        option = page.get_by_role("option", name=value, exact=True)
        for _ in range(3):  # a rerun that lands as the list opens closes it again
            box.click()
            try:
                option.wait_for(timeout=5_000)
            except PlaywrightTimeout:
                page.keyboard.press("Escape")
                _settled(page)
                continue
            option.click()
            return
        raise AssertionError(f"the {label!r} list never offered {value!r}")
    field = page.locator(f"input[aria-label='{label}']").first
    field.fill(value)
    field.press("Enter")
    field.blur()  # as a visitor moving on: a focused text field shows its character count in the label


def _wait_for_param(page, key: str, value: str) -> None:
    page.wait_for_function("([k, v]) => new URLSearchParams(location.search).getAll(k).includes(v)",
                           arg=[key, value], timeout=LOAD_MS)
    _settled(page)


def _snapshot(page) -> dict:
    page.wait_for_function(
        "() => { const plots = [...document.querySelectorAll('.js-plotly-plot')];"
        " return plots.length > 0 && plots.every(p => (p.data || []).length > 0); }",
        timeout=LOAD_MS)
    return page.evaluate(SNAPSHOT)


def _reopened(browser, url: str, expected: dict) -> dict:
    """The view a recipient sees: the URL in a browser context apart from the sender's.

    A first visit can rerun once more after the script reports "finished" (URL
    corrections, the worker pool's answer arriving), so the view is read again until it
    equals the sender's or stops changing; a link to another view never equals it.
    """
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.goto(url)
        _settled(page)
        received = _snapshot(page)
        for _ in range(SETTLE_READS):
            if received == expected:
                break
            page.wait_for_timeout(500)
            _settled(page)
            again = _snapshot(page)
            if again == received:
                break
            received = again
        return received
    finally:
        context.close()


def _change_share_and_compare(page, browser, p: Preset, name: str) -> None:
    kind, label, value, (key, url_value) = CHANGES[p.page]
    _change(page, kind, label, value)
    _wait_for_param(page, key, url_value)
    sent = _snapshot(page)
    url = page.url
    assert "preset=" not in url
    screenshot(page, f"share-{name}", full_page=False)
    received = _reopened(browser, url, sent)
    assert received["widgets"] == sent["widgets"]
    assert received["charts"] == sent["charts"]
    assert received["numbers"] == sent["numbers"]
    assert sent["charts"], "the view has no chart to compare"


#: The first home card of each page: the way from a card to a shared link is one per page.
CARDS = list({p.page: p for p in reversed(gallery())}.values())


@pytest.mark.parametrize("p", CARDS, ids=lambda p: f"{p.page}-{p.key}")
def test_a_home_card_shared_after_a_change_opens_the_same_view(streamlit_server, recipient_browser, browser_page, p):
    page = browser_page
    page.goto(streamlit_server)
    _settled(page)
    page.get_by_role("link", name=p.label).click()
    page.wait_for_url(f"**/{p.page}**", timeout=LOAD_MS)
    _settled(page)
    _change_share_and_compare(page, recipient_browser, p, f"card-{p.page}-{p.key}")


#: Presets whose values differ from the page's defaults, applied with two pages' preset buttons
#: (the Presets popover, then a change): the home cards above already open every page's view
#: by link, and every preset's URL is checked without a browser.
BUTTONS = [
    pytest.param(preset("explorer", "sqrt"), id="explorer-sqrt"),
    pytest.param(preset("gradcheck", "float32_check_fails"), id="gradcheck-float32"),
]


@pytest.mark.parametrize("p", BUTTONS)
def test_a_preset_button_shared_after_a_change_opens_the_same_view(streamlit_server, recipient_browser, browser_page, p):
    page = browser_page
    page.goto(f"{streamlit_server}/{p.page}")
    _settled(page)
    button = page.get_by_role("button", name=p.label, exact=True)
    folded = not button.is_visible() and page.get_by_role("button", name="Presets").count()
    if folded:
        page.get_by_role("button", name="Presets").click()  # a page may keep its presets in a popover
    button.click(timeout=LOAD_MS)
    _settled(page)
    if folded:
        page.keyboard.press("Escape")  # close it, as a visitor clicking beside it, to reach the controls
    _change_share_and_compare(page, recipient_browser, p, f"button-{p.page}-{p.key}")


def test_back_undoes_one_change_at_a_time(streamlit_server, _browser):
    """issue 37: set x to 2, then to 0.5: one Back shows x = 2 again, a second the page as opened,
    and neither leaves the site (each change is its own history entry: gradlab.ui.history_steps)."""
    context = _browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        open_page(page, streamlit_server, "explorer", {"x": "1.5"}, timeout=60_000)
        box = page.locator(".st-key-x input")
        for value in ("2", "0.5"):
            box.fill(value)
            box.press("Enter")
            page.wait_for_function(f"() => new URL(location.href).searchParams.get('x') === '{value}'", timeout=30_000)
            wait_for_app(page, timeout=60_000)
        page.go_back()
        wait_for_app(page, timeout=60_000)
        page.wait_for_function("() => document.querySelector('.st-key-x input')?.value === '2'", timeout=30_000)
        page.go_back()
        wait_for_app(page, timeout=60_000)
        page.wait_for_function("() => document.querySelector('.st-key-x input')?.value === '1.5'", timeout=30_000)
        assert "/explorer" in page.url
    finally:
        context.close()
