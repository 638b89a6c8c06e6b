"""How a sweep's result shows itself: its error-vs-eps figure and what a notebook prints.

:class:`gradlab.step_sweep.engine.SweepResult` calls these from ``figure()`` and
``_ipython_display_``; the figure is the Explorer lab's (:mod:`gradlab.labs.explorer.figures`). This
module never imports the engine at run time, so the engine -> display -> figures imports run
one way.

>>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
>>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float64",), ("forward", "central"), points=9))
>>> [t.name for t in sweep_figure(r).data if t.meta and t.meta.get("kind") == "sweep"]
['float64 · forward', 'float64 · central']
>>> "Best step per dtype and scheme" in sweep_block(r).html()
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gradlab.notebook_html import NotebookBlock, plotted

if TYPE_CHECKING:
    from gradlab.figures.spec import FigureOrSpec  # Plotly's: imported only when a figure is drawn
    from gradlab.step_sweep.swept import Swept  # a protocol: the engine's result calls this module

__all__ = ["sweep_figure", "sweep_block"]


def sweep_figure(result: Swept) -> FigureOrSpec:
    """The error-vs-eps figure of the Explorer (relative error, theory and best steps)."""
    def build() -> FigureOrSpec:
        from gradlab.labs.explorer.figures import error_vs_eps_figure  # plotly: only when a figure is drawn

        return error_vs_eps_figure(result)
    return plotted(build)


def sweep_block(result: Swept) -> NotebookBlock:
    """The expression, its exact derivative, the notes, the best steps and the figure, as a notebook shows them."""
    s, ref = result.settings, result.reference
    exact = f"f'({s.x:g}) = {float(ref.d1):.17g} (exact)" if ref.defined and ref.d1 is not None else ""
    lines = [f"f'(x) = {result.derivative_text}", exact, *(f"{n.level}: {n.text}" for n in result.notes)]
    return NotebookBlock(f"Finite differences of {s.expression} at x = {s.x:g}", lines, result.best,
                         lambda: sweep_figure(result), "Best step per dtype and scheme: observed on the sweep, "
                         "and predicted by the error model.")
