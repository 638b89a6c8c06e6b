"""Every page under serve.py's Content-Security-Policy in a real Chromium: nothing it loads or
runs is refused, and the charts (Plotly) draw.

The policy (gradlab/server/headers.py, CSP) allows only what Streamlit and Plotly were seen to
need; a Streamlit or Plotly upgrade that needs more shows up here as a violation naming the
directive and the blocked source, reported by the page itself (``securitypolicyviolation``
events) and by Chromium's console.
"""

from __future__ import annotations

import pytest
from browser_helpers import ARTIFACTS, wait_for_app

from gradlab.server.headers import CSP
from gradlab.ui.navigation import PAGES
from harness.server import Server, free_port

pytestmark = pytest.mark.browser

#: Installed before any page script runs: every violation the document reports, kept on window.
RECORD_VIOLATIONS = """
document.addEventListener('securitypolicyviolation', e => {
  (window.__cspViolations = window.__cspViolations || []).push(
    `${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`);
});
"""
#: Each chart drawn: a Plotly root with its SVG and at least one trace in it.
DRAWN_CHARTS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(p => p.querySelector('.main-svg') && p.querySelectorAll('.trace, .heatmaplayer image').length > 0).length"""


def _wait_for_a_chart(page, seconds: float = 60) -> None:
    """Until a chart is drawn. Not page.wait_for_function: under this policy its polling may evaluate a
    string in the page's own world, which the CSP refuses ('unsafe-eval' is not allowed, rightly)."""
    for _ in range(int(seconds / 0.25)):
        if page.evaluate(DRAWN_CHARTS) > 0:
            return
        page.wait_for_timeout(250)
    raise AssertionError("no chart was drawn within the wait")


@pytest.fixture(scope="module")
def served(require_browser) -> str:
    """``streamlit run serve.py``: the app with its headers (the shared browser-test server runs app.py)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with Server(free_port(), app="serve.py", log=ARTIFACTS / "streamlit-serve-csp.log") as server:
        yield server.base_url


@pytest.fixture(scope="module")
def watched(_browser):
    """A tab of its own (its listeners stay with it) recording CSP violations and console errors."""
    context = _browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    # every request the page makes, to see that none goes to another site (the favicon included)
    page.on("request", lambda r: console.append(f"request {r.url}") if not r.url.startswith(
        ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")) else None)
    yield page, console
    context.close()


@pytest.mark.parametrize("spec", PAGES, ids=[p.url_path for p in PAGES])
def test_a_page_runs_under_the_policy_and_draws_its_charts(served, watched, spec):
    page, console = watched
    console.clear()
    response = page.goto(f"{served}/{'' if spec.default else spec.url_path}")
    assert response.headers.get("content-security-policy") == CSP
    assert "server" not in response.headers, response.headers["server"]
    wait_for_app(page, timeout=90_000)
    _wait_for_a_chart(page)
    page.wait_for_timeout(500)  # a component's script or a late chart may load just after the run
    violations = page.evaluate("window.__cspViolations || []")
    refused = [m for m in console if "Content Security Policy" in m or "BidiComponent Error" in m]
    assert violations == [] and refused == [], f"{spec.url_path}: {violations} {refused}"
    assert [m for m in console if m.startswith("request ")] == []  # nothing fetched from another site
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.evaluate(DRAWN_CHARTS) >= 1


def test_a_chart_downloads_as_png_under_the_policy(served, watched):
    """The modebar's camera (gradlab/ui/figures.py keeps it): Plotly draws the chart's SVG into a
    canvas through an image of the SVG, then saves the PNG through a blob URL."""
    page, console = watched
    console.clear()
    page.goto(f"{served}/explorer")
    wait_for_app(page, timeout=90_000)
    _wait_for_a_chart(page)
    chart = page.locator(".js-plotly-plot").first
    chart.hover()
    with page.expect_download(timeout=30_000) as download:
        chart.locator(".modebar-btn[data-title^='Download plot']").click()
    assert download.value.suggested_filename.endswith(".png")
    violations = page.evaluate("window.__cspViolations || []")
    assert violations == [] and [m for m in console if "Content Security Policy" in m] == [], violations
