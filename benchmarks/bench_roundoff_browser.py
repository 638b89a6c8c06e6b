"""The Round-off lab as felt in Chromium: from an input to the last chart update, and the server's share.

For each interaction (a new seed, a preset button, a new dtype) the time runs from
the key press or click to the last change the browser makes to any Plotly chart
(a MutationObserver on the charts; the chart counts as drawn once nothing has moved
for QUIET_MS). The server's part is timed separately, in this process: the engine
call (``compare``, uncached) and the figure build (``prepare_figure`` of every
chart the page draws). Also printed: the points each chart draws and how.

Before and after in the same run: with ``--before <git revision>`` the script exports
that revision (``git archive``) to a temporary folder, serves it on ``--port``, measures,
stops it, then serves this checkout on the same port and measures again::

    python -m benchmarks.bench_roundoff_browser --before a25cff1 --port 8614 [--repeats 5]

Without ``--before`` it measures this checkout only.

A script, not a test: it prints numbers and the < 0.5 s target, asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from deploy.run_local import stop_process, streamlit_command, wait_healthy
from harness.browser import CHROMIUM_ARGS, SCRIPT_FINISHED, wait_for_app

TARGET_S = 0.5
QUIET_MS = 400  # no chart mutation for this long: the last update is over

_WATCH = """() => {
  window.__glLast = performance.now();
  const obs = new MutationObserver(() => { window.__glLast = performance.now(); });
  obs.observe(document.querySelector('[data-testid=stMain]'),
              {subtree: true, childList: true, attributes: true, characterData: true});
  window.__glObs = obs;
}"""

_DRAWN = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')].map(c =>
  c.querySelectorAll('svg *').length)"""

ROOT = Path(__file__).resolve().parents[1]


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
        page.mouse.wheel(0, 3000)  # Streamlit draws charts below the fold only when they scroll in
        page.wait_for_timeout(1000)
        page.mouse.wheel(0, -3000)
        print("  SVG nodes per chart:", page.evaluate(_DRAWN))
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

    from gradlab.labs.roundoff import figures as plots
    from gradlab.figures.spec import specs_only

    a, b = result.label_a, result.label_b
    with specs_only():
        figures = (plots.ulp_distance_bars(result.distance_histogram(), a, b),
                   plots.error_histogram(result.table, a, b), plots.error_by_x(result.table, a, b))
    for fig in figures:
        pio.to_json(fig.to_dict(), validate=False)


def server_times(repeats: int) -> dict[str, float]:
    from gradlab.labs.roundoff.engine import RoundoffSettings, compare

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


@contextlib.contextmanager
def serving(folder: Path, port: int):
    """``streamlit run app.py`` from ``folder`` on ``port``, until the block ends."""
    proc = subprocess.Popen(streamlit_command("app.py", port), cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", 60, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(proc, patience=20)


def _exported(revision: str, into: Path) -> Path:
    """The files of ``revision`` (git archive) under ``into``."""
    archive = subprocess.run(["git", "archive", revision], cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _report(label: str, url: str, repeats: int) -> None:
    print(f"{label}:")
    for name, values in browser_times(url, repeats).items():
        print(f"  browser {name:16s} median {statistics.median(values):.2f} s, max {max(values):.2f} s "
              f"(target < {TARGET_S} s) {[round(v, 2) for v in values]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8614)
    parser.add_argument("--before", help="a git revision to measure first, e.g. the commit before a change")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    for name, seconds in server_times(3).items():
        print(f"server (this checkout) {name:32s} {seconds * 1e3:8.1f} ms (median, uncached)")
    if args.before:
        with tempfile.TemporaryDirectory() as tmp, serving(_exported(args.before, Path(tmp)), args.port) as url:
            _report(f"before ({args.before})", url, args.repeats)
    with serving(ROOT, args.port) as url:
        _report("after (this checkout)", url, args.repeats)


if __name__ == "__main__":
    main()
