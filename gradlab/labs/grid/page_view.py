"""What the Grid page shows of one view: :func:`view` (the page's worker entry) and :func:`at_step`.

A view is an x, a dtype and an f; its step h is one stop of the chart's step slider. :func:`view`
computes the difference at every stop and at the settings' own h
(:func:`~gradlab.labs.grid.frames.grid_frames`: one exact derivative for all), the secant's slope
against h and the precision table. A page asks for it once per view (``view_of(settings)``) and
:func:`at_step` picks the page's step out of it: the answer, the facts, the numbers and their bits,
the charts. A new step is a look-up, not another engine call. A stop whose difference is not finite
(x + h or f there past the dtype's largest number) has its sentence instead, which :func:`at_step`
raises, so the view of an x whose step 1 overflows still answers at 1e-4.

The exact derivative's sympy and mpmath work is not limited by the sizes here, and one of its C
calls cannot be interrupted (1/(x**x**x) at 1e9 in float64: a 23 s integer power), so a page runs
:func:`view` in a worker process, where it can be killed.

>>> shown = view(GridSettings("float32", 1.0, 1.0, "sin(x)"))
>>> step = at_step(shown, 1e-7)
>>> step.answer.text.startswith("x + h is 1 ulp above x"), sorted(step.charts), step.result.difference.step_taken
(True, ['grid', 'secant'], 1.1920928955078125e-07)
>>> at_step(view(GridSettings("float32", 88.0, 1.0, "exp(x)")), 1e-4).answer.level  # e^89 overflows at h = 1
'info'
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gradlab.errors import GradLabError, LimitError
from gradlab.labs.grid.figures import grid_slider_figure, secant_at_step_figure
from gradlab.labs.grid.frames import GridFrames, grid_frames
from gradlab.labs.grid.printout import dtype_table, facts_text, values_table
from gradlab.labs.grid.representable import GridDifference, GridSettings
from gradlab.labs.grid.story import GRID_ADVICE, grid_answer, secant_series
from gradlab.numerics.precision_table import CENTRAL_THEORY
from gradlab.server.worker_entries import worker_entry
from gradlab.view import Answer, Chart, View

__all__ = ["view", "at_step", "GridSteps"]


@dataclass(frozen=True, eq=False)
class GridSteps:
    """A view's differences at every stop of the slider, and the one shown (a view's ``result``)."""

    frames: GridFrames
    series: pd.DataFrame  # the secant's slope against h (h, step, secant) at the view's own h
    dtypes: pd.DataFrame  # the precision table, as shown (:func:`~gradlab.labs.grid.printout.dtype_table`)
    difference: GridDifference | None  # at the step shown; None where that step has no difference


@worker_entry("the grid's difference", "request_seconds", advice=GRID_ADVICE)
def view(settings: GridSettings) -> View:
    """The Grid page's view of ``settings``' x, dtype and f at every stop of its step slider, shown at
    ``settings.h`` (see the module docstring). Where ``settings.h`` itself has no difference, the
    answer is that step's sentence (level ``error``): :func:`at_step` shows another step."""
    frames = grid_frames(settings)  # settings.h among its stops; f'(x) at the first with a difference
    # no stop at all: x or f(x) is not finite in the dtype, and neither is the secant's series
    series = secant_series(settings) if frames.steps else pd.DataFrame({"h": [], "step": [], "secant": []})
    steps = GridSteps(frames, series, dtype_table(), None)
    try:
        return _at(steps, settings.h)
    except LimitError:
        raise
    except GradLabError as err:
        return View(Answer("error", str(err)), tables={"dtypes": steps.dtypes}, result=steps)


def at_step(shown: View, h: float) -> View:
    """``shown`` (a :func:`view`) at step ``h``, a stop of its slider or its own h: a look-up in its
    frames, no engine call. A GradLabError with the sentence of a step that has no difference."""
    return _at(shown.result, h)


def _at(steps: GridSteps, h: float) -> View:
    r, _ = steps.frames.at(h)
    s = r.settings
    return View(
        answer=grid_answer(r),
        charts={"grid": Chart(grid_slider_figure, (steps.frames,)),
                "secant": Chart(secant_at_step_figure, (steps.series, r))},
        tables={"dtypes": steps.dtypes},
        texts={"facts": facts_text(r), "values": values_table(r), "central theory": CENTRAL_THEORY,
               "file name": f"gradlab-grid-{s.dtype}-x{s.x:g}-h{s.h:g}"},
        result=GridSteps(steps.frames, steps.series, steps.dtypes, r),
    )
