"""The Round-off lab as felt in Chromium: from an input to the last chart update, and the server's share.

For each interaction (a new seed, a preset button, a new dtype) the time runs from
the key press or click to the last change the browser makes to any Plotly chart
(a MutationObserver on the charts; the chart counts as drawn once nothing has moved
for QUIET_MS). The server's part is timed separately, in this process: the engine
call (``compare``, uncached) and the figure build (``prepare_figure`` of every
chart the page draws). Also printed: the points each chart draws and how.

Run against a server you started (it does not start one)::

    python -m streamlit run app.py --server.headless true --server.port 8614 &
    python benchmarks/bench_roundoff_browser.py --url http://localhost:8614 [--repeats 5]

A script, not a test: it prints numbers and the < 0.5 s target, asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from browser_helpers import CHROMIUM_ARGS, SCRIPT_FINISHED, wait_for_app  # noqa: E402

TARGET_S = 0.5
QUIET_MS = 400  # no chart mutation for this long: the last update is over

_WATCH = """() => {
  window.__glLast = performance.now();
  const obs = new MutationObserver(() => { window.__glLast = performance.now(); });
  obs.observe(document.querySelector('[data-testid=stMain]'),
              {subtree: true, childList: true, attributes: true, characterData: true});
  window.__glObs = obs;
}"""

_TRACES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(p =>
  (p.data || []).map(t => `${t.type}:${(t.x || []).length}`).join(' '))"""


def _timed(page, act) -> float:
    """Seconds from ``act()`` to the last mutation of the page's main area."""
    page.evaluate(_WATCH)
    start = page.evaluate("() => performance.now()")
    act()
    page.wait_for_timeout(200)
    page.wait_for_selector(SCRIPT_FINISHED, timeout=60_000)
    while True:
        quiet = page.evaluate("() => performance.now() - window.__glLast")
        if quiet >= QUIET_MS:
            break
        page.wait_for_timeout(50)
    last = page.evaluate("() => { window.__glObs.disconnect(); return window.__glLast; }")
    return (last - start) / 1e3


def _seed(page, value: int) -> None:
    box = page.locator(".st-key-seed input")
    box.fill(str(value))
    box.press("Enter")


def browser_times(url: str, repeats: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {"new seed": [], "preset button": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{url}/roundoff")
        wait_for_app(page)
        page.wait_for_timeout(1000)
        print("charts drawn (type:points per trace):", page.evaluate(_TRACES))
        for i in range(repeats):
            times["new seed"].append(_timed(page, lambda i=i: _seed(page, 100 + i)))
            for key in ("preset_log1p", "preset_reciprocal_formulas"):
                times["preset button"].append(
                    _timed(page, lambda key=key: page.locator(f".st-key-{key} button").first.click()))
        browser.close()
    return times


def _build_figures(result) -> None:
    """Every chart the page draws, as the dicts st.plotly_chart sends (what the page caches)."""
    import plotly.io as pio

    from gradlab.figures import labs as plots
    from gradlab.figures.spec import specs_only

    a, b = result.label_a, result.label_b
    with specs_only():
        figures = (plots.ulp_distance_bars(result.distance_histogram(), a, b),
                   plots.error_histogram(result.table, a, b), plots.error_scatter(result.table, a, b))
    for fig in figures:
        pio.to_json(fig.to_dict(), validate=False)


def server_times(repeats: int) -> dict[str, float]:
    from gradlab.labs.roundoff import RoundoffSettings, compare

    out = {}
    for name, settings in (("default 10,000 points", RoundoffSettings()),
                           ("100,000 points", RoundoffSettings(samples=100_000))):
        engine, figures = [], []
        for seed in range(repeats):
            s = RoundoffSettings(**{**settings.__dict__, "seed": 1000 + seed})
            t = time.perf_counter()
            result = compare(s)
            engine.append(time.perf_counter() - t)
            t = time.perf_counter()
            _build_figures(result)
            figures.append(time.perf_counter() - t)
        out[f"engine ({name})"] = statistics.median(engine)
        out[f"figures ({name})"] = statistics.median(figures)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://localhost:8614")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    for name, seconds in server_times(3).items():
        print(f"server  {name:32s} {seconds * 1e3:8.1f} ms (median, uncached)")
    for name, values in browser_times(args.url, args.repeats).items():
        print(f"browser {name:32s} median {statistics.median(values):.2f} s, max {max(values):.2f} s "
              f"(target < {TARGET_S} s) {[round(v, 2) for v in values]}")


if __name__ == "__main__":
    main()
