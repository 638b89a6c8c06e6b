"""Notebook figures draw offline: GradLab's HTML outputs, as a notebook page holds them, in Chromium
with the network off (every request refused)."""

from __future__ import annotations

import torch

import gradlab
from gradlab.check.verdicts.notebook import html_of
from gradlab.notebook_html import reset_plotlyjs


def _outputs() -> tuple[str, str]:
    reset_plotlyjs()  # a fresh kernel: its first output carries plotly.js, the next reuses it
    first = gradlab.sweep("exp(x)", at=1.0, dtypes="float64", schemes="central", points=5)._repr_html_()
    x = torch.linspace(0.5, 2.0, 4, dtype=torch.float64)
    second = html_of(gradlab.gradcheck(lambda t: t * t, x, mode="full", taylor=False))
    return first, second


def _offline_page(_browser, html: str, tmp_path):
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
    path.write_text(f"<!doctype html><html><body>{html}</body></html>", encoding="utf-8")
    page.goto(path.as_uri())
    return context, page, requests


def test_both_figures_draw_with_the_network_off(_browser, tmp_path):
    first, second = _outputs()
    context, page, requests = _offline_page(_browser, first + second, tmp_path)
    try:
        page.wait_for_function("document.querySelectorAll('.plotly-graph-div .main-svg').length >= 2",
                               timeout=30_000)
        assert page.evaluate("typeof window.Plotly") == "object"
        assert page.locator(".plotly-graph-div").count() == 2
        assert requests == []  # nothing asked of the network
        assert not page.locator(".gradlab-no-plotlyjs").first.is_visible()
    finally:
        context.close()


def test_a_later_figure_alone_says_how_to_get_plotlyjs_back(_browser, tmp_path):
    _, second = _outputs()
    context, page, _ = _offline_page(_browser, second, tmp_path)
    try:
        message = page.locator(".gradlab-no-plotlyjs")
        message.wait_for(state="visible", timeout=30_000)
        assert "reset_plotlyjs()" in message.inner_text()
    finally:
        context.close()
