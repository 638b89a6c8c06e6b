"""Notebook figures draw offline: a classic notebook's outputs of a sweep and a check (their text,
then Plotly's own "notebook" renderer: plotly.js once, inline, then each figure), as the notebook's
page holds them, in Chromium with the network off (every request refused)."""

from __future__ import annotations

import torch
from notebook_kernel import notebook_kernel

import gradlab


def _outputs() -> str:
    x = torch.linspace(0.5, 2.0, 4, dtype=torch.float64)
    results = (gradlab.sweep("exp(x)", at=1.0, dtypes="float64", schemes="central", points=5),
               gradlab.gradcheck(lambda t: t * t, x, mode="full", taylor=False))
    with notebook_kernel("notebook") as shown:
        for result in results:
            result._ipython_display_()
    return "".join(o.data["text/html"] for o in shown.outputs)


def test_both_figures_draw_with_the_network_off(_browser, tmp_path):
    context = _browser.new_context(offline=True)
    requests: list[str] = []

    def refuse_the_network(route):
        if route.request.url.startswith("file:"):
            route.continue_()  # the notebook page itself
        else:
            requests.append(route.request.url)
            route.abort()

    context.route("**/*", refuse_the_network)
    page = context.new_page()
    path = tmp_path / "notebook.html"
    path.write_text(f"<!doctype html><html><body>{_outputs()}</body></html>", encoding="utf-8")
    try:
        page.goto(path.as_uri())
        page.wait_for_function("document.querySelectorAll('.plotly-graph-div .main-svg').length >= 2",
                               timeout=30_000)
        assert page.evaluate("typeof window.Plotly") == "object"
        assert page.locator(".plotly-graph-div").count() == 2
        assert page.locator("table").count() == 2  # each result's own table, above its figure
        # Plotly's output may ask for MathJax (LaTeX in labels); plotly.js itself is never fetched
        assert all("mathjax" in url.lower() for url in requests), requests
    finally:
        context.close()
