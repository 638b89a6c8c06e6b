"""The Explorer's first view (an empty URL): its settings, and the small chart of it the home page draws.

>>> s = default_sweep_settings()
>>> s.dtypes, s.schemes, s.points
(('float32', 'float64'), ('central',), 61)
>>> s.eps_min < 1e-10 < 1e-2 < s.eps_max
True
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from gradlab.figures.layout import LEGEND_BELOW, for_presentation
from gradlab.figures.spec import specs_only
from gradlab.labs.explorer.defaults import DEFAULTS
from gradlab.labs.explorer.figures import error_vs_eps_figure
from gradlab.step_sweep.engine import SweepSettings
from gradlab.step_sweep.step_range import chart_step_range
from gradlab.teaching.catalogue import CATALOGUE

if TYPE_CHECKING:
    from gradlab.step_sweep.swept import Swept

__all__ = ["default_sweep_settings", "first_view_figure", "SMALL_HEIGHT", "PRESENTED_HEIGHT"]

SMALL_HEIGHT = 360  # px: the answer and the chart side by side on a projector's first screen
PRESENTED_HEIGHT = 470  # px: in presentation mode, beside the answer's larger type (1280x720: all on screen)


@cache
def default_sweep_settings() -> SweepSettings:
    """The sweep behind the Explorer's default widgets, its steps fitted to the dtypes' V (the
    same settings the page's own widgets make, so the home page and the Explorer share its view)."""
    eps_min, eps_max = chart_step_range(DEFAULTS["dtypes"], DEFAULTS["schemes"])
    return SweepSettings(CATALOGUE[DEFAULTS["fn"]].expression, float(DEFAULTS["x"]), DEFAULTS["dtypes"],
                         DEFAULTS["schemes"], eps_min, eps_max, DEFAULTS["points"], frames=True)


def first_view_figure(result: Swept, presented: bool = False) -> dict:
    """The first view's V as a small chart beside the home page's answer (no theory or autograd
    lines, the legend below so the curves keep the column's width), as the dict a page sends;
    ``presented``: taller, its text at presentation mode's size
    (:func:`~gradlab.figures.layout.for_presentation`, which every page's main chart gets there).

    >>> from gradlab.step_sweep.engine import run_sweep
    >>> r = run_sweep(SweepSettings("sin(x)", 1.0, ("float32",), ("central",), 1e-6, 1e-1, points=5))
    >>> first_view_figure(r)["layout"]["height"], first_view_figure(r, presented=True)["layout"]["height"]
    (360, 470)
    """
    with specs_only():
        figure = error_vs_eps_figure(result, show_theory=False, show_autograd=False).to_dict(consume=True)
    figure["layout"] = {**figure["layout"], "height": SMALL_HEIGHT, "legend": {**LEGEND_BELOW, "y": -0.32}}
    # "step h" 6 px under the tick labels touched 10⁻⁸'s exponent in this short chart
    xaxis = figure["layout"].get("xaxis", {})
    figure["layout"]["xaxis"] = {**xaxis, "title": {**xaxis.get("title", {}), "standoff": 14}}
    if not presented:
        return figure
    figure = for_presentation(figure)
    figure["layout"] = {**figure["layout"], "height": PRESENTED_HEIGHT,
                        "legend": {**figure["layout"]["legend"], "y": 0, "yref": "container"}}
    return figure
