"""How long Plotly takes to draw each page's main chart in Chromium, against the floor app's chart.

An interaction's time in the browser (``bench_browser.py --floor``) is mostly Plotly drawing the
new figure: a page's main chart carries its lesson in regime bands (shapes), labels
(annotations), a step slider and a Play button, where the floor app's chart is four bare lines.
This draws each page's first-screen main chart (the figure its view sends, as
:func:`gradlab.ui.figures.prepare_figure` makes it, frames added as Streamlit adds them) with
``Plotly.newPlot`` in headless Chromium, alternating with the floor's chart, and prints the
medians and their ratio; ``--parts`` also draws each chart without its slider, its Play
button, its shapes or its annotations, and without all four, to say what each costs.

    python -m benchmarks.bench_chart_draw [--repeats 9] [--parts] [--pages explorer grid]

Nothing is judged: the ratio says how much of an interaction's ratio to the floor
(target <= 1.5x) is Plotly's own drawing of what the chart shows. The plotly.js drawn is the
one the plotly package ships (Streamlit bundles its own build of the same library).
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
from pathlib import Path

import numpy as np
import plotly
import plotly.graph_objects as go
import plotly.io as pio

#: page -> the chart its main_chart_box() draws on its first screen.
MAIN_CHART = {"explorer": "errors", "grid": "grid", "gradcheck": "eps sweep", "summed": "differences",
              "roundoff": "errors", "network": "staircase", "backward": "grad"}
#: What --parts leaves out of a chart's layout, one at a time, then all together.
PARTS = ("sliders", "updatemenus", "shapes", "annotations")

_DRAW = """async (f) => {
    const g = document.getElementById('g');
    Plotly.purge(g);
    const t = performance.now();
    await Plotly.newPlot(g, f.data, f.layout, {responsive: true});
    if (f.frames) await Plotly.addFrames(g, f.frames);
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));  // painted
    return performance.now() - t;
}"""


def floor_figure() -> dict:
    """The floor app's chart (benchmarks/floor_app.py at its default 12 decades)."""
    h = np.logspace(-12, 0, 60)
    fig = go.Figure([go.Scatter(x=h, y=h ** p + 1e-16 / h, name=f"p={p}") for p in (1, 2, 3, 4)])
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return json.loads(pio.to_json(fig))


def page_figure(page: str) -> dict:
    """``page``'s first-screen main chart as the browser receives it."""
    from gradlab.ui.figures import prepare_figure

    settings_module = importlib.import_module(f"gradlab.labs.{page}.page_settings")
    for view_of, settings in settings_module.preset_views({}):
        charts = view_of(settings).charts
        if MAIN_CHART[page] in charts:
            chart = charts[MAIN_CHART[page]]
            return json.loads(pio.to_json(prepare_figure(chart.build, *chart.args, **chart.kwargs), validate=False))
    raise KeyError(f"{page}: no {MAIN_CHART[page]!r} chart on its first screen")


def without(fig: dict, *parts: str) -> dict:
    """``fig`` with ``parts`` of its layout left out (and its frames, which need the slider).

    >>> without({"data": [], "layout": {"shapes": [1], "title": "t"}, "frames": []}, "shapes")
    {'data': [], 'layout': {'title': 't'}}
    """
    return {"data": fig["data"], "layout": {k: v for k, v in fig["layout"].items() if k not in parts}}


def _median_ms(page, fig: dict, floor: dict, repeats: int) -> tuple[float, float]:
    """Medians of drawing ``fig`` and the floor's chart, alternating (the same load for both)."""
    mine, theirs = [], []
    for _ in range(repeats):
        mine.append(page.evaluate(_DRAW, fig))
        theirs.append(page.evaluate(_DRAW, floor))
    return statistics.median(mine), statistics.median(theirs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--parts", action="store_true", help="also each chart without a part of its layout")
    parser.add_argument("--pages", nargs="*", default=list(MAIN_CHART), choices=list(MAIN_CHART))
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from harness.browser import CHROMIUM, CHROMIUM_ARGS

    floor = floor_figure()
    plotly_js = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text(encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_content("<div id=g style='width:1200px;height:560px'></div>")
        page.add_script_tag(content=plotly_js)
        _median_ms(page, floor, floor, 3)  # the first draws compile plotly.js
        print(f"Plotly.newPlot in Chromium 1280x720, medians of {args.repeats}, each beside the floor's chart:")
        print(f"{'page':<10} {'chart':<28} {'ms':>7} {'floor ms':>9} {'ratio':>7}")
        for name in args.pages:
            fig = page_figure(name)
            variants = {MAIN_CHART[name]: fig}
            if args.parts:
                variants.update({f"  without {part}": without(fig, part) for part in PARTS})
                variants["  without all four"] = without(fig, *PARTS)
            for label, variant in variants.items():
                ms, floor_ms = _median_ms(page, variant, floor, args.repeats)
                print(f"{name:<10} {label:<28} {ms:7.1f} {floor_ms:9.1f} {ms / floor_ms:6.2f}x")
        browser.close()


if __name__ == "__main__":
    main()
