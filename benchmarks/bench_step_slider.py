"""What the step slider costs the server, per view and per release, on the pages' first views.

The Explorer's and the Grid's main charts carry a Plotly frame per 1-2-5 step, so a drag is
animated in the browser; the server computes the frames once per view (in the cached engine
call) and builds the figure once per released step. Same run, interleaved repeats, medians:

1. **Explorer engine**: the sweep's estimates (``estimates_by_scheme`` over its steps, per
   dtype) against the same call with the slider's stops added and their frame tables built,
   what ``run_sweep`` now does; and a whole ``run_sweep`` for scale.
2. **Explorer figure**: the error-vs-step figure with the slider against without, as
   ``prepare_figure`` builds it for ``st.plotly_chart``, and the JSON sizes.
3. **Grid engine**: ``grid_frames`` (61 stops) against one ``grid_difference`` and its window.
4. **Grid figure**: with the slider against the one-step figure, and the JSON sizes.

5. **Stop to paint, in Chromium** (``--browser URL [--browser URL2]``, each a running app): the
   mouse is dragged along each chart's slider one stop at a time (1280x720); a stop's time runs
   from the mouse event to Plotly's ``plotly_animated`` ("drawn": the chart's DOM holds the stop,
   painted at the end of that animation frame; Plotly's slider starts the animation in the next
   animation frame after the event) and to the start of the frame after ("next frame", the
   earlier measure: an upper bound, one frame late). Two URLs (say an earlier tree's server and this one's) are measured
   in turn, page by page, in the same run.

Run: ``python -m benchmarks.bench_step_slider [--repeats 9] [--browser http://localhost:8551]``.
A script, not a test: it prints numbers, and the ratios mean most on a quiet machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import plotly.io as pio

from gradlab.labs.grid.figures import grid_figure, grid_figure_with_slider
from gradlab.labs.explorer.figures import error_vs_eps_figure
from gradlab.labs.explorer.chart_slider import error_vs_eps_with_slider
from gradlab.labs.grid.frames import grid_frames
from gradlab.labs.grid.representable import GridSettings, grid_difference
from gradlab.labs.grid.story import window_points
from gradlab.numerics.exact_derivatives import reference_at
from gradlab.numerics.expressions import parse
from gradlab.numerics.schemes import estimates_by_scheme
from gradlab.step_sweep.engine import run_sweep
from gradlab.labs.explorer.first_view import default_sweep_settings
from gradlab.step_sweep.step_frames import frame_block
from gradlab.ui.figures import prepare_figure


def _interleaved(cases: dict, repeats: int) -> dict[str, float]:
    """Median seconds of each case, the cases run in turn ``repeats`` times."""
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, run in cases.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def _kb(prepared) -> float:
    return len(pio.to_json(prepared.to_dict())) / 1024


#: Stop-to-paint: the time of each mouse event on the page, and of the animation frame after the
#: chart's next ``plotly_animated`` (the paint showing the stop the event moved to).
_WATCH_PAINTS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  window.__glPaints = []; window.__glMoved = null;
  window.addEventListener('mousemove', () => { window.__glMoved = performance.now(); }, true);
  gd.on('plotly_animated', () => {
    const start = window.__glMoved;
    if (start === null) return;
    window.__glMoved = null;
    const drawn = performance.now() - start;  // the chart's DOM holds the stop: painted at this frame's end
    requestAnimationFrame(() => window.__glPaints.push([drawn, performance.now() - start]));
  });
}"""

_CHARTS = {"explorer": ("explorer_chart", "h=1e-03"), "grid": ("grid_chart", "h=1e-04")}


def stop_to_paint(urls: list[str], rounds: int = 2) -> None:
    """Drag each page's chart slider across its stops, one stop per mouse move, and print the
    median and the largest stop-to-paint time per page and URL (see the module docstring)."""
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync"]
    samples = {(url, page): [] for url in urls for page in _CHARTS}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        for _ in range(rounds):
            for page_name, (key, query) in _CHARTS.items():
                for url in urls:
                    tab = browser.new_page(viewport={"width": 1280, "height": 720})
                    tab.goto(f"{url}/{page_name}?{query}")
                    tab.wait_for_selector(f".st-key-{key} .js-plotly-plot .slider-rail-rect", timeout=90_000)
                    tab.wait_for_selector("[data-test-script-state='notRunning']", timeout=90_000)
                    tab.wait_for_timeout(1500)
                    tab.evaluate(_WATCH_PAINTS, key)
                    stops = tab.evaluate(f"() => document.querySelector('.st-key-{key} .js-plotly-plot')"
                                         "._fullLayout.sliders[0].steps.length")
                    box = tab.locator(f".st-key-{key} .slider-rail-rect").first.bounding_box()
                    y = box["y"] + box["height"] / 2
                    tab.mouse.move(box["x"] + 2, y)
                    tab.mouse.down()
                    for i in range(stops):  # one stop a move, a pause for its paint between moves
                        tab.mouse.move(box["x"] + box["width"] * (i + 0.5) / stops, y)
                        tab.wait_for_timeout(120)
                    samples[(url, page_name)] += tab.evaluate("() => window.__glPaints")
                    tab.mouse.up()
                    tab.close()
        browser.close()
    print("Stop to paint in Chromium, 1280x720 (mouse event to the paint after plotly_animated)")
    for (url, page_name), times in samples.items():
        if times:
            drawn, frame = [t[0] for t in times], [t[1] for t in times]
            print(f"  {page_name:8s} {url:28s} drawn: median {statistics.median(drawn):6.1f} ms, max "
                  f"{max(drawn):6.1f} ms; next frame: median {statistics.median(frame):6.1f} ms, max "
                  f"{max(frame):6.1f} ms; {len(times)} stops")
        else:
            print(f"  {page_name:8s} {url:28s} no stop painted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--browser", action="append", default=[], metavar="URL",
                        help="also time stop-to-paint in Chromium against this running app (repeatable)")
    parser.add_argument("--browser-only", action="store_true", help="only the Chromium measurement")
    args = parser.parse_args()
    if args.browser:
        stop_to_paint(args.browser)
        if args.browser_only:
            return
    repeats = args.repeats

    settings = default_sweep_settings().validated()
    expr = parse(settings.expression)
    refs = {d: reference_at(expr, settings.x, d) for d in settings.dtypes}
    eps = settings.eps_values()
    result = run_sweep(settings)
    steps = np.unique(result.frames.columns["h"])
    stops = len(steps)
    both = np.concatenate([eps, steps])

    def with_frames():
        for d in settings.dtypes:
            values = estimates_by_scheme(expr, refs[d].x, both, settings.schemes, d)
            frame_block(refs[d], d, both[len(eps):], {k: v[len(eps):] for k, v in values.items()})

    m = _interleaved({
        "sweep": lambda: run_sweep(settings),
        "with frames": with_frames,
        "estimates alone": lambda: [estimates_by_scheme(expr, refs[d].x, eps, settings.schemes, d)
                                    for d in settings.dtypes],
    }, repeats)
    print(f"Explorer first view ({settings.expression} at {settings.x}, {', '.join(settings.dtypes)}; "
          f"{settings.points} steps + {stops} slider stops)")
    print(f"  the sweep's estimates {1e3 * m['estimates alone']:5.2f} ms, with the stops and their frame tables "
          f"{1e3 * m['with frames']:5.2f} ms: {1e3 * (m['with frames'] - m['estimates alone']):.2f} ms more, "
          f"of a whole run_sweep's {1e3 * m['sweep']:.1f} ms")
    m = _interleaved({
        "with": lambda: prepare_figure(error_vs_eps_with_slider, result, 1e-3),
        "without": lambda: prepare_figure(error_vs_eps_figure, result),
    }, repeats)
    print(f"  figure with the slider {1e3 * m['with']:6.1f} ms, without {1e3 * m['without']:6.1f} ms "
          f"({m['with'] / m['without']:.1f}x); JSON {_kb(prepare_figure(error_vs_eps_with_slider, result, 1e-3)):.0f}"
          f" KB vs {_kb(prepare_figure(error_vs_eps_figure, result)):.0f} KB")

    grid = GridSettings("float32", 1.0, 1e-4, "sin(x)")
    one = grid_difference(grid)
    frames = grid_frames(grid, one.tangent)
    m = _interleaved({
        "frames": lambda: grid_frames(grid, one.tangent),
        "one step": lambda: window_points(grid_difference(grid, tangent=one.tangent)),
    }, repeats)
    print(f"Grid first view (sin(x) at 1, float32, h = 1e-4; {len(frames.steps)} stops)")
    print(f"  grid_frames {1e3 * m['frames']:6.1f} ms; one step's difference and window {1e3 * m['one step']:5.2f} ms"
          f" ({m['frames'] / m['one step']:.0f}x)")
    window = window_points(one)
    m = _interleaved({
        "with": lambda: prepare_figure(grid_figure_with_slider, frames, 1e-4),
        "without": lambda: prepare_figure(grid_figure, one, window),
    }, repeats)
    print(f"  figure with the slider {1e3 * m['with']:6.1f} ms, without {1e3 * m['without']:5.2f} ms "
          f"({m['with'] / m['without']:.0f}x); JSON {_kb(prepare_figure(grid_figure_with_slider, frames, 1e-4)):.0f}"
          f" KB vs {_kb(prepare_figure(grid_figure, one, window)):.0f} KB")
    _sent_per_rerun({"Explorer": prepare_figure(error_vs_eps_with_slider, result, 1e-3),
                     "Grid": prepare_figure(grid_figure_with_slider, frames, 1e-4)}, repeats)


def _sent_per_rerun(figures: dict, repeats: int) -> None:
    """What st.plotly_chart does with a cached figure on every rerun: its JSON (plotly.io.to_json,
    unvalidated) and the digest of that text in the element's id."""
    import hashlib

    def send(prepared):
        text = pio.to_json(prepared.to_dict(), validate=False)
        hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()

    m = _interleaved({name: (lambda f=f: send(f)) for name, f in figures.items()}, 3 * repeats)
    print("Sent on every rerun (to_json and its digest): " + ", ".join(
        f"{name} {1e3 * m[name]:.2f} ms ({_kb(f):.0f} KB)" for name, f in figures.items()))



if __name__ == "__main__":
    main()
