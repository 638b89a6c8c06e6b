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
slider; every ratio is printed, met or MISSED, and counted. With ``--floor`` each page's
interactions are timed too (:func:`interactions_s`), each against the floor's slider
(<= 1.5x): the slider, the page's :data:`~benchmarks.class_links.CHANGED_CONTROL` set to a
new value on its first preset's view (a new seed, x, shape or v, from the preset registry)
and its last preset's button; and Grad check's layer view (:func:`layer_view_s`, from its
``wrong_layer`` preset): the stack edited (target <= 1 s for the presets' models), the dtype
switched to float16, and each layer preset clicked.

Prints the medians and the targets (without ``--floor``: first chart < 1.5 s,
interaction < 0.5 s), and the load average, since other work on the machine makes
the numbers noisy. A script, not a test:
``python -m benchmarks.bench_browser [--runs 3] [--pages explorer roundoff] [--floor]``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import random
import re
import statistics
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlencode

from benchmarks.class_links import CHANGED_CONTROL, changed_query
from benchmarks.floor_ratios import FELT_TARGETS, felt_ratios, ratio, tally, verdict
from deploy.run_local import stop_process, streamlit_command, wait_healthy
from gradlab.teaching.presets import preset, presets_for, url_query
from gradlab.ui.navigation import PAGES
from gradlab.ui.warm_views import warming_enabled
from harness.browser import CHROMIUM_ARGS, SCRIPT_FINISHED

REPO = Path(__file__).resolve().parents[1]

FIRST_CHART_TARGET_S, INTERACTION_TARGET_S = 1.5, 0.5
QUIET_MS = 400  # no chart change for this long after the run finished = the last update happened
TIMEOUT_MS = 60_000
FLOOR_PATH = "?floor=1"  # the floor app is one page; any truthy path means "it has a chart"
STACK_EDIT_TARGET_S = 1.0  # the layer view: a preset model's stack edited, to its chart updated
LAYER_PRESET = "wrong_layer"  # the layer view's interactions start from this Grad check preset

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
    """The app on ``port``; GradLab's once its start-up warm-up of every preset's view has ended,
    as a deployed server's before its visitors (gradlab/ui/warm_views.py)."""
    log = tempfile.NamedTemporaryFile(prefix="bench-browser-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(streamlit_command(script, port), cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", 60, proc)
        if script == "app.py" and warming_enabled():
            # its own event loop, in a thread: the caller may be inside one (Playwright's)
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(asyncio.run, _warmed(f"http://127.0.0.1:{port}", Path(log.name))).result()
    except RuntimeError as err:
        stop_process(proc)
        raise SystemExit(f"streamlit did not start: {err}") from None
    return proc


async def _warmed(base_url: str, log: Path) -> None:
    """One run starts app.py's warm-up thread; then wait for its line in the log."""
    from benchmarks.load_class import WARM_TIMEOUT, WARMED
    from harness.server import log_says
    from harness.session import StreamlitSession

    async with StreamlitSession(base_url) as tab:
        await tab.open("", "")
    await log_says(log, WARMED, WARM_TIMEOUT)


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


def _opened(browser, base: str, path: str, query: dict | None = None):
    """A fresh context on ``path`` (with ``query``), its chart drawn and quiet: (context, page)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.goto(f"{base}/{path}" + (f"?{urlencode(query, doseq=True)}" if query else ""))
    page.wait_for_selector(SCRIPT_FINISHED, timeout=TIMEOUT_MS)
    selector, _ = _chart_selector(page, path)
    page.wait_for_function(_DRAWN, arg=selector, timeout=TIMEOUT_MS)
    page.wait_for_timeout(QUIET_MS)
    return context, page


def _typed(page, key: str, value: str):
    """``value`` typed into the input of widget ``key`` (opening the popover that holds it), not yet
    committed: the callable that commits it (Enter), as a visitor ends typing."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.locator(f".st-key-{key} input").first
    if not box.is_visible():
        for button in page.locator("[data-testid=stPopoverButton]:visible").all():
            button.click()
            try:  # a popover's body is drawn a moment after the click
                box.wait_for(state="visible", timeout=3_000)
                break
            except PlaywrightTimeout:
                page.keyboard.press("Escape")
    box.fill(value)
    return lambda: box.press("Enter")


def _picked(page, key: str, starts: str):
    """The list of selectbox ``key`` opened: the callable that clicks its option starting ``starts``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    option = page.get_by_role("option").filter(has_text=re.compile(f"^{re.escape(starts)}")).first
    for _ in range(3):  # a rerun that lands as the list opens closes it again
        page.locator(f".st-key-{key} [data-testid=stSelectbox]:visible, .st-key-{key}:visible "
                     "[data-baseweb=select]").first.click()
        try:
            option.wait_for(timeout=5_000)
            return option.click
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    raise PlaywrightTimeout(f"the {key} list never offered {starts!r}")


def _timed(browser, base: str, path: str, query: dict | None, prepare) -> float:
    """One interaction in a fresh context: ``prepare(page)`` readies it (untimed) and returns the
    callable making it; seconds from that call to the last chart update (NaN: the input could not
    be made, e.g. its widget not found; said on stdout)."""
    context, page = _opened(browser, base, path, query)
    try:
        return _timed_input(page, prepare(page))
    except Exception as exc:  # noqa: BLE001 - one input that cannot be made leaves the others' numbers
        print(f"  ({path}: input not made: {type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
        return float("nan")
    finally:
        context.close()


def interactions_s(browser, base: str, path: str, runs: int) -> dict[str, list[float]]:
    """Each interaction of one page, ``runs`` times, by what it is: the slider (when the page has
    one), the page's changed control on its first preset's view, its last preset's button."""
    presets = presets_for(path)
    times: dict[str, list[float]] = {}
    rng = random.Random(1)
    for _ in range(runs):
        context, page = _opened(browser, base, path)
        try:
            what, make_input = _input(page, path)
            if what.startswith("slider"):
                times.setdefault(what, []).append(_timed_input(page, make_input))
        finally:
            context.close()
        if path in CHANGED_CONTROL and presets:
            key = CHANGED_CONTROL[path]
            new = changed_query(presets[0], rng)[key]
            times.setdefault(f"{key} on {presets[0].key}", []).append(
                _timed(browser, base, path, url_query(presets[0]), lambda page: _typed(page, key, new)))
        if len(presets) > 1:
            last = presets[-1].key
            times.setdefault(f"preset {last}", []).append(
                _timed(browser, base, path, None, lambda page: _preset_button(page, last).click))
    return times


def layer_view_s(browser, base: str, runs: int) -> dict[str, list[float]]:
    """Grad check's layer view from its ``wrong_layer`` preset, ``runs`` times: the stack edited to
    the correct model's, the dtype switched to float16, each other layer preset's button."""
    start = preset("gradcheck", LAYER_PRESET)
    layer_presets = [p for p in presets_for("gradcheck") if "stack" in p.values and p.key != LAYER_PRESET]
    query = url_query(start)
    correct = preset("gradcheck", "correct_model").values["stack"]
    times: dict[str, list[float]] = {}
    for _ in range(runs):
        times.setdefault("stack edit", []).append(
            _timed(browser, base, "gradcheck", query, lambda page: _typed(page, "stack", correct)))
        times.setdefault("dtype float16", []).append(
            _timed(browser, base, "gradcheck", query, lambda page: _picked(page, "dtype", "float16")))
        for p in layer_presets:
            times.setdefault(f"preset {p.key}", []).append(
                _timed(browser, base, "gradcheck", query, lambda page, key=p.key: _preset_button(page, key).click))
    return times


def _print_interactions(path: str, times: dict[str, list[float]], floor: dict,
                        target: tuple[str, float] | None = None) -> list[dict]:
    """One line per interaction: median, max, its ratio to the floor's slider, met or MISSED;
    ``target``: (interaction, seconds) judged in seconds instead (the layer view's stack edit)."""
    limit = FELT_TARGETS["input"][1]
    rows = []
    for what, measured in times.items():
        seconds = [x for x in measured if x == x] or [float("nan")]  # NaN: an input not made
        med = statistics.median(seconds)
        r = ratio(med, floor["input"])
        if med != med:
            met, goal = None, "-"
        elif target and what == target[0]:
            met, goal = med <= target[1], f"<= {target[1]:g} s"
        else:
            met, goal = (None if r is None else r <= limit), f"<= {limit:g}x"
        rows.append({"name": f"{path} {what}", "met": met})
        print(f"  {path:<16} {what:<34} {med:>7.2f} {max(seconds):>7.2f} "
              f"{'-' if r is None else f'{r:.2f}x':>7}  {goal:<9} {verdict(met)}")
    return rows


def _interactions_table(browser, base: str, floor_base: str, paths: list[str], runs: int) -> None:
    """Every page's interactions and the layer view's, each beside the floor's slider measured just
    before it (same load), with the count of targets met."""
    print(f"\ninteractions (seconds from the input to the last chart update; median and max of {runs}, "
          f"ratio to the floor's slider measured just before):")
    print(f"  {'page':<16} {'interaction':<34} {'median':>7} {'max':>7} {'ratio':>7}  target")
    rows: list[dict] = []

    def floor_slider() -> dict:
        floor = {"input": statistics.median([interaction_s(browser, floor_base, FLOOR_PATH)[0]
                                             for _ in range(runs)])}
        print(f"  {'(floor)':<16} {'slider +1 step':<34} {floor['input']:>7.2f}")
        return floor

    for path in [p for p in paths if p]:
        floor = floor_slider()
        rows += _print_interactions(path, interactions_s(browser, base, path, runs), floor)
    floor = floor_slider()
    rows += _print_interactions("layer view", layer_view_s(browser, base, runs), floor,
                                target=("stack edit", STACK_EDIT_TARGET_S))
    met, measured, missing = tally(rows)
    print(f"{met} of {measured} interactions meet their target" + (f" ({missing} not measured)" if missing else ""))


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
            if args.floor:
                _interactions_table(browser, base, floor_base, paths, args.runs)
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
