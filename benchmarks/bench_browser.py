"""Speed as felt in Chromium: each page's first chart after navigation, and one interaction's last chart update.

For every page (gradlab.ui.navigation.PAGES) and N runs each, in a fresh browser context:

1. **First chart**: from ``page.goto`` (the browser's navigation start,
   ``performance.now()`` = 0) to the moment the main chart is drawn
   (``.st-key-gl-main-chart .main-svg`` present) and the script run has finished
   (``data-test-script-state=notRunning``). A page without ``main_chart_box()``
   yet is timed to its first Plotly chart anywhere and marked ``*``; home has no
   chart and is timed to its finished first run.
2. **Interaction**: one input (a slider's thumb nudged with the arrow key, or, on
   a page without a slider, its last preset button clicked, its popover opened
   before the clock starts), from the input to
   the last change of any Plotly chart after the script run finished (a
   MutationObserver on the charts; "last" = no change for 400 ms). A chart already
   off the page is not counted: a replaced chart is emptied (Plotly.purge, in React's
   clean-up) after it has left the document, at times after its successor was drawn.
3. **In-app navigation**: from the home page, a click on the page's link in the
   sidebar to the main chart drawn, as a visitor moving between pages feels it
   (Streamlit's bundle, Plotly and the websocket are already loaded).

``--floor`` measures the same on ``benchmarks/floor_app.py`` (one slider, one
chart, nothing else) just before each page, its server running beside GradLab's, so
page and floor share the machine's load: Streamlit's and Plotly's own cost on this
machine, which no page can beat. The targets are then ratios to it
(``benchmarks/floor_ratios.py``): each page's first chart <= 1.25x the floor's on a
first visit and <= 1.5x on a returning visit, its interaction <= 1.5x the floor's
slider; every ratio is printed, met or MISSED, and counted.

Prints the medians and the targets (without ``--floor``: first chart < 1.5 s,
interaction < 0.5 s), and the load average, since other work on the machine makes
the numbers noisy. A script, not a test:
``python -m benchmarks.bench_browser [--runs 3] [--pages explorer roundoff] [--floor]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
from pathlib import Path

from benchmarks.floor_ratios import FELT_TARGETS, felt_ratios, tally, verdict
from deploy.run_local import stop_process, streamlit_command, wait_healthy
from gradlab.teaching.presets import presets_for
from gradlab.ui.navigation import PAGES
from harness.browser import CHROMIUM_ARGS, SCRIPT_FINISHED

REPO = Path(__file__).resolve().parents[1]

FIRST_CHART_TARGET_S, INTERACTION_TARGET_S = 1.5, 0.5
QUIET_MS = 400  # no chart change for this long after the run finished = the last update happened
TIMEOUT_MS = 60_000
FLOOR_PATH = "?floor=1"  # the floor app is one page; any truthy path means "it has a chart"

_DRAWN = """sel => {
  const app = document.querySelector('[data-testid=stApp]');
  const done = app && app.dataset.testScriptState === 'notRunning';
  return done && (sel === '' || document.querySelector(sel)) ? performance.now() : false; }"""
_CHART_CHANGE = """() => { if (!window.__glObs) { window.__glObs = true; window.__glChartChange = 0;
  const watch = () => document.querySelectorAll('.js-plotly-plot').forEach(p => {
    if (p.__glWatched) return; p.__glWatched = true; window.__glChartChange = performance.now();
    new MutationObserver(() => { if (p.isConnected) window.__glChartChange = performance.now(); })
      .observe(p, {subtree: true, childList: true, attributes: true}); });
  watch(); window.__glChartChange = 0; new MutationObserver(watch).observe(document.body, {subtree: true, childList: true}); }
  window.__glRan = false; const app = document.querySelector('[data-testid=stApp]');
  new MutationObserver(() => { if (app.dataset.testScriptState === 'running') window.__glRan = true; })
    .observe(app, {attributes: true}); }"""
#: A run started after the input (seen running, or a chart already changed: a fast run can
#: go running -> notRunning inside one React commit, which the observer never sees) and finished.
_RAN = """start => (window.__glRan || window.__glChartChange > start)
  && document.querySelector('[data-testid=stApp]').dataset.testScriptState === 'notRunning'"""


def _start_app(port: int, script: str = "app.py") -> subprocess.Popen:
    proc = subprocess.Popen(streamlit_command(script, port), cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", 60, proc)
    except RuntimeError as err:
        stop_process(proc)
        raise SystemExit(f"streamlit did not start: {err}") from None
    return proc


def _chart_selector(page, path: str) -> tuple[str, str]:
    """What 'the main chart drawn' means on this page, and a mark for the report."""
    if page.locator(".st-key-gl-main-chart").count():
        return ".st-key-gl-main-chart .main-svg", ""
    return ".js-plotly-plot .main-svg", "*"


def first_chart_s(browser, base: str, path: str, returning: bool = False) -> tuple[float, str]:
    """Navigation start to the main chart drawn, in a fresh browser context (a first visit).

    ``returning``: the context has opened the home page first, so the browser's cache
    holds Streamlit's and Plotly's code, as for anyone who has used GradLab before.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        if returning:
            page.goto(base)
            page.wait_for_selector(SCRIPT_FINISHED, timeout=TIMEOUT_MS)
            page.wait_for_function(_DRAWN, arg=".js-plotly-plot .main-svg", timeout=TIMEOUT_MS)
        page.goto(f"{base}/{path}")
        page.wait_for_selector(SCRIPT_FINISHED, timeout=TIMEOUT_MS)
        selector, mark = _chart_selector(page, path)
        drawn = page.wait_for_function(_DRAWN, arg=selector, timeout=TIMEOUT_MS, polling="raf")
        return drawn.json_value() / 1000, mark
    finally:
        context.close()


def _input(page, path: str):
    """The one input this benchmark makes on the page: (what it is, a callable making it).

    Anything a visitor does before the input itself (opening the presets' popover) is
    done here, outside the timing.
    """
    slider = page.locator("[data-testid=stSlider]:visible input[type=range]")  # react-aria: a hidden range input
    if slider.count():
        slider.first.focus()
        return "slider +1 step", lambda: page.keyboard.press("ArrowRight")
    presets = presets_for(path)
    if len(presets) > 1:  # the last: a page's default view is often its first or second preset
        button = _preset_button(page, presets[-1].key)
        return f"preset {presets[-1].key}", button.click
    return "", None


def interaction_s(browser, base: str, path: str) -> tuple[float | None, str]:
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(f"{base}/{path}")
        page.wait_for_selector(SCRIPT_FINISHED, timeout=TIMEOUT_MS)
        selector, _ = _chart_selector(page, path)
        if not selector:
            return None, "(no chart)"
        page.wait_for_function(_DRAWN, arg=selector, timeout=TIMEOUT_MS)
        page.wait_for_timeout(QUIET_MS)
        what, make_input = _input(page, path)
        if make_input is None:
            return None, "(no input found)"
        seconds = _timed_input(page, make_input)
        note = "" if 0 < seconds < float("inf") else " (no chart changed)" if not seconds else " (charts never settled)"
        return seconds, what + note
    finally:
        context.close()


def _timed_input(page, make_input) -> float:
    """Seconds from ``make_input()`` to the last chart change after the run it starts (0: none changed;
    inf: the charts were still changing TIMEOUT_MS after it)."""
    page.evaluate(_CHART_CHANGE)
    start = page.evaluate("performance.now()")
    make_input()
    page.wait_for_function(_RAN, arg=start, timeout=TIMEOUT_MS)
    while True:  # wait until the charts have been quiet for QUIET_MS (a chart that never settles: TIMEOUT_MS)
        now, last = page.evaluate("[performance.now(), window.__glChartChange]")
        if now - max(last, start) >= QUIET_MS:
            break
        if now - start > TIMEOUT_MS:
            return float("inf")
        page.wait_for_timeout(50)
    last = page.evaluate("window.__glChartChange")
    return max(0.0, (last - start) / 1000)


def _preset_button(page, key: str):
    """The visible button of preset ``key``, opening the page's Presets popover if it lives there."""
    button = page.locator(f".st-key-preset_{key} button:visible")
    if not button.count():
        page.get_by_role("button", name="Presets").first.click()
        button.first.wait_for(timeout=TIMEOUT_MS)
    return button.first


def every_preset_s(browser, base: str, path: str, rounds: int) -> dict[str, list[float]]:
    """Each of the page's presets clicked in turn (from the previous one's view), ``rounds`` times.

    What a lecturer stepping through a page's presets feels: seconds from each click to
    the last chart update, by preset key.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    times: dict[str, list[float]] = {}
    try:
        page.goto(f"{base}/{path}")
        page.wait_for_selector(SCRIPT_FINISHED, timeout=TIMEOUT_MS)
        page.wait_for_timeout(QUIET_MS)
        keys = [p.key for p in presets_for(path)]
        for _ in range(rounds):
            for key in keys[1:] + keys[:1]:  # the first preset is usually the view already open
                button = _preset_button(page, key)
                times.setdefault(key, []).append(_timed_input(page, button.click))
                page.keyboard.press("Escape")  # close a popover the click left open
    finally:
        context.close()
    return times


def navigation_s(browser, base: str, path: str) -> float | None:
    """From the home page, the sidebar link to ``path`` clicked, to its main chart drawn."""
    if not path:
        return None
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(base)
        page.wait_for_selector(SCRIPT_FINISHED, timeout=TIMEOUT_MS)
        page.wait_for_timeout(QUIET_MS)
        link = page.locator(f'[data-testid=stSidebarNav] a[href$="/{path}"]').first
        start = page.evaluate("performance.now()")
        link.click()
        page.wait_for_url(f"**/{path}**", timeout=TIMEOUT_MS)
        drawn = page.wait_for_function(_DRAWN, arg=".js-plotly-plot .main-svg", timeout=TIMEOUT_MS,
                                       polling="raf")
        return (drawn.json_value() - start) / 1000
    finally:
        context.close()


def _measure(browser, base: str, path: str, runs: int) -> dict:
    """Medians over ``runs`` of the three timings of one page."""
    loads, marks, returns, inputs, navs, what = [], set(), [], [], [], ""
    for _ in range(runs):
        seconds, mark = first_chart_s(browser, base, path)
        loads.append(seconds)
        marks.add(mark)
        returns.append(first_chart_s(browser, base, path, returning=True)[0])
        seconds, what = interaction_s(browser, base, path)
        if seconds is not None:
            inputs.append(seconds)
        seconds = navigation_s(browser, base, path)
        if seconds is not None:
            navs.append(seconds)
    median = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    return {"load": median(loads), "mark": "".join(sorted(marks)), "return": median(returns),
            "input": median(inputs),
            "nav": median(navs), "what": what}


def _cell(seconds: float | None, floor: float | None = None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.2f}" + (f" ({seconds / floor:.1f}x)" if floor else "")


def _floor(browser, base: str, runs: int) -> dict:
    """The floor app's medians (its first chart and slider input; it has no navigation), measured
    just before each page: a machine busier later made every ratio larger when the floor was
    measured once before all the pages (load 1.5 then, 5.2-5.8 during the pages)."""
    load_before = os.getloadavg()[0]
    loads = [first_chart_s(browser, base, FLOOR_PATH)[0] for _ in range(runs)]
    returns = [first_chart_s(browser, base, FLOOR_PATH, returning=True)[0] for _ in range(runs)]
    inputs = [interaction_s(browser, base, FLOOR_PATH)[0] for _ in range(runs)]
    return {"load": statistics.median(loads), "return": statistics.median(returns),
            "input": statistics.median(inputs), "loadavg": (load_before, os.getloadavg()[0])}


_NO_FLOOR = {"load": None, "return": None, "input": None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--pages", nargs="*", help="url paths (default: every page; home is '')")
    parser.add_argument("--every-preset", action="store_true",
                        help="instead: click every preset of each page in turn, --runs rounds, and print each one's time")
    parser.add_argument("--floor", action="store_true",
                        help="also measure benchmarks/floor_app.py (one slider, one chart) in the same run")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    paths = args.pages if args.pages is not None else ["" if p.default else p.url_path for p in PAGES]
    if args.every_preset:
        _print_every_preset(sync_playwright, paths, args)
        return
    with sync_playwright() as pw:
        launch = lambda: pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,  # noqa: E731
                                            args=list(CHROMIUM_ARGS))
        proc = _start_app(args.port)
        floor_proc = _start_app(args.port + 1, "benchmarks/floor_app.py") if args.floor else None
        base, floor_base = f"http://127.0.0.1:{args.port}", f"http://127.0.0.1:{args.port + 1}"
        try:
            browser = launch()
            for path in paths:  # one warm-up load per page: imports and caches, not what a class feels
                first_chart_s(browser, base, path)
            if args.floor:
                first_chart_s(browser, floor_base, FLOOR_PATH)  # the floor's warm-up, as for the pages
            print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            print(f"{'page':<10} {'first visit (s)':>17} {'returning (s)':>17} {'navigation (s)':>15} "
                  f"{'interaction (s)':>17}  input")
            ratios: dict[str, list[dict]] = {}
            floor = _NO_FLOOR
            for path in paths:
                if args.floor:  # measured right before each page: both under the same load
                    floor = _floor(browser, floor_base, args.runs)
                    print(f"{'(floor)':<10} {_cell(floor['load']):>17} {_cell(floor['return']):>17} {'-':>15} "
                          f"{_cell(floor['input']):>17}  slider +1 step: benchmarks/floor_app.py "
                          f"(1-min load average {floor['loadavg'][0]:.2f} -> {floor['loadavg'][1]:.2f})")
                m = _measure(browser, base, path, args.runs)
                if args.floor:  # the targets are ratios to the floor's, measured in this run
                    ratios[path or "home"] = felt_ratios(m, floor)
                    over = [r["name"] for r in ratios[path or "home"] if r["met"] is False]
                else:
                    over = [name for name, value, target in (
                        ("first visit", m["load"], FIRST_CHART_TARGET_S),
                        ("returning", m["return"], FIRST_CHART_TARGET_S),
                        ("navigation", m["nav"], FIRST_CHART_TARGET_S),
                        ("interaction", m["input"], INTERACTION_TARGET_S)) if value is not None and value > target]
                flag = f" <- over target: {', '.join(over)}" if over else ""
                load = _cell(m["load"], floor["load"]) + m["mark"]
                print(f"{path or 'home':<10} {load:>17} {_cell(m['return'], floor['return']):>17} "
                      f"{_cell(m['nav']):>15} {_cell(m['input'], floor['input']):>17}  {m['what']}{flag}")
            browser.close()
        finally:
            stop_process(proc)
            if floor_proc is not None:
                stop_process(floor_proc)
    if args.floor:
        _print_ratios(ratios, args.runs)
    else:
        print(f"targets: first chart (first visit, returning, navigation) < {FIRST_CHART_TARGET_S} s, "
              f"interaction < {INTERACTION_TARGET_S} s (medians of {args.runs} runs)")
    print("* = the page has no main_chart_box() yet: timed to its first chart anywhere")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} CPUs; other work on the machine slows every figure)")


def _print_ratios(ratios: dict[str, list[dict]], runs: int) -> None:
    """Each page's ratio to the floor for every felt-speed target, met or MISSED, and the count."""
    heads = [f"{name} <= {target:g}x" for name, target in FELT_TARGETS.values()]
    print(f"\nratios to the floor (medians of {runs} runs, same run):")
    print(f"{'page':<10} " + " ".join(f"{h:>22}" for h in heads))
    for page, rows in ratios.items():
        cells = ["-" if r["ratio"] is None else f"{r['ratio']:.2f}x {verdict(r['met'])}" for r in rows]
        print(f"{page:<10} " + " ".join(f"{c:>22}" for c in cells))
    met, measured, missing = tally([r for rows in ratios.values() for r in rows])
    print(f"{met} of {measured} ratios meet their target" + (f" ({missing} not measured)" if missing else "")
          + "; navigation has no floor counterpart and is not judged")


def _print_every_preset(sync_playwright, paths: list[str], args) -> None:
    with sync_playwright() as pw:
        proc = _start_app(args.port)
        base = f"http://127.0.0.1:{args.port}"
        try:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                         args=list(CHROMIUM_ARGS))
            for path in paths:  # one warm-up visit per page, as in the main table
                first_chart_s(browser, base, path)
            print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            print(f"{'page':<10} {'preset':<28} {'median (s)':>10} {'max (s)':>8}  runs")
            over = 0
            for path in paths:
                for key, seconds in every_preset_s(browser, base, path, args.runs).items():
                    med = statistics.median(seconds)
                    flag = "  <- over target" if med > INTERACTION_TARGET_S else ""
                    over += bool(flag)
                    print(f"{path or 'home':<10} {key:<28} {med:>10.2f} {max(seconds):>8.2f}  "
                          f"{', '.join(f'{x:.2f}' for x in seconds)}{flag}")
            browser.close()
        finally:
            stop_process(proc)
    print(f"target: every interaction < {INTERACTION_TARGET_S} s (median of {args.runs}); {over} over")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
