"""A shared link cannot put a visitor's link, image or markup into GradLab's pages.

Every text a visitor can type or put in a URL, on every page, carries Markdown
(a link, an image), HTML, LaTeX and a bare URL. The page must show the text as
typed: no element links or points to the outside host, the browser requests
nothing from it, and the message quotes the text literally.
"""

from urllib.parse import urlsplit

import pytest
from browser_helpers import open_page, screenshot, wait_for_app

pytestmark = pytest.mark.browser

EVIL = "evil.example"
PAYLOADS = {
    "link": f"[Login here](https://{EVIL}/phish)",
    "image": f"![t](https://{EVIL}/p.png)",
    "markup": f"$\\href{{https://{EVIL}}}{{c}}$<img src=https://{EVIL}/x.png>:red[x]",
}
# (page, the URL parameters that carry the text, besides the payload's own)
FIELDS = [
    ("explorer", "expr", {"fn": "custom (type it)"}),
    ("gradcheck", "shape", {}),
    ("gradcheck", "expression", {"model": "expression"}),
    ("roundoff", "a", {}),
    ("roundoff", "b", {}),
    ("network", "hidden", {}),
    ("backward", "a", {}),
    ("backward", "v", {}),
    ("backward", "steps", {}),
    ("backward", "mv", {}),
]

# Every address an element links to or loads, resolved against the page: one whose host is the
# outside host is the injection. (A same-page link may carry the visitor's text in its query
# string, e.g. the theme links, which reload the view with its values: that goes nowhere else.)
_OUTSIDE_REFERENCES = """host => {
    const hostOf = v => { try { return new URL(v, document.baseURI).hostname; } catch (e) { return ''; } };
    const found = [];
    for (const e of document.querySelectorAll('[href], [src], [srcset], [style]')) {
        for (const a of ['href', 'src']) {
            const v = e.getAttribute(a);
            if (v && hostOf(v) === host) found.push(v);
        }
        for (const part of (e.getAttribute('srcset') || '').split(',')) {
            const u = part.trim().split(/\\s+/)[0];
            if (u && hostOf(u) === host) found.push(u);
        }
        for (const m of (e.getAttribute('style') || '').matchAll(/url\\(\\s*['"]?([^'")]+)/g)) {
            if (hostOf(m[1]) === host) found.push(m[1]);
        }
    }
    return found;
}"""


def test_the_outside_reference_check_finds_links_images_and_styles(browser_page):
    # The check itself can fail: an outside link, image and background are
    # found; a same-page link carrying the host's name in its query string is not.
    browser_page.set_content(
        f'<a href="https://{EVIL}/a">a</a><img src="https://{EVIL}/p.png">'
        f'<div style="background: url(\'https://{EVIL}/b.png\')"></div><a href="?q={EVIL}">same</a>')
    assert len(browser_page.evaluate(_OUTSIDE_REFERENCES, EVIL)) == 3


@pytest.mark.parametrize(("path", "key", "extra"), FIELDS, ids=[f"{p}-{k}" for p, k, _ in FIELDS])
def test_visitor_text_is_shown_as_text(streamlit_server, browser_page, path, key, extra):
    # Each payload in a page load of its own (one reused tab: its caches make the loads
    # quick); a failure names the payload.
    page = browser_page
    outside_requests = []

    def note(request) -> None:
        if urlsplit(request.url).hostname == EVIL:
            outside_requests.append(request.url)

    page.on("request", note)  # the tab is reused: the listener goes with the test
    try:
        _check_payloads(page, streamlit_server, path, key, extra, outside_requests)
    finally:
        page.remove_listener("request", note)


def _check_payloads(page, streamlit_server, path, key, extra, outside_requests) -> None:
    for kind, payload in sorted(PAYLOADS.items()):
        open_page(page, streamlit_server, path, {**extra, key: payload})

        assert page.locator("[data-testid='stException']").count() == 0, kind
        assert page.evaluate(_OUTSIDE_REFERENCES, EVIL) == [], f"{kind}: an element links to or loads the outside host"
        page.wait_for_timeout(200)
        assert outside_requests == [], f"{kind}: the browser fetched {outside_requests}"
        alerts = " ".join(page.locator("[data-testid='stAlert']").all_inner_texts())
        assert alerts, f"{kind}: the page does not say what is wrong with the text"
        if EVIL in alerts:  # where a message quotes the text, the address reads as typed
            assert f"https://{EVIL}" in alerts, alerts
        if kind == "link":
            screenshot(page, f"injection-{path}-{key}", full_page=False)


def test_cube_root_renders_on_the_explorer(streamlit_server, browser_page):
    """cbrt(x) once crashed the Explorer's LaTeX (sympy passed exp= to cbrt._latex)."""
    page = browser_page
    for expr in ("cbrt(x)", "sin(cbrt(x))"):
        open_page(page, streamlit_server, "explorer", {"fn": "custom (type it)", "expr": expr, "x": "0.7"})
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stAlertContentError']").count() == 0
        page.get_by_text("Formulas and numbers").first.click()  # drawn only when opened
        page.wait_for_selector(".katex", timeout=30_000)
        wait_for_app(page)
        assert page.locator(".katex").count() >= 2  # f(x) and f'(x) are typeset
        page.wait_for_selector(".js-plotly-plot", timeout=30_000)  # the error-vs-step chart is drawn
        screenshot(page, f"explorer-{expr}", full_page=True)
