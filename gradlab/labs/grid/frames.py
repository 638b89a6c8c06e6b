"""The Grid page's difference at every stop of its step slider, computed once per view.

Dragging h on the Grid's chart switches between frames in the browser: each is the whole
forward difference at one step (x + h on the grid, f(x) and f(x+h), the secant) and f on
the grid around it, the same :func:`~gradlab.labs.grid.representable.grid_difference` and
:func:`~gradlab.labs.grid.story.window_points` the page shows for one h. The stops are the
1-2-5 steps (:func:`gradlab.step_sweep.step_frames.slider_steps`) of the page's step range,
1e-20 to 1; the exact derivative, which does not depend on h, is computed once.

>>> from gradlab.labs.grid.representable import GridSettings, grid_difference
>>> f = grid_frames(GridSettings("float32", 1.0, 1e-7, "x**2"))
>>> len(f.steps), f.steps[0], f.steps[-1]
(61, 1e-20, 1.0)
>>> r = f.at(1e-7)[0]
>>> r.step_taken == 2 ** -23, r.secant == grid_difference(GridSettings("float32", 1.0, 1e-7, "x**2")).secant
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import torch

from gradlab.errors import GradLabError
from gradlab.labs.grid.representable import GridDifference, GridSettings, computing_in, grid_differences
from gradlab.numerics.expressions import parse
from gradlab.labs.grid.story import window_array
from gradlab.step_sweep.step_frames import slider_steps

__all__ = ["GRID_STEP_RANGE", "VIEW_STEP", "grid_steps", "GridFrames", "grid_frames", "asked_values", "view_of",
           "series_with"]

#: The Grid's step control runs over these (its URL values are their 1-2-5 steps).
GRID_STEP_RANGE = (1e-20, 1.0)
#: The step a view's frames are computed at (:func:`view_of`): one of the stops, so the frames of
#: a view are the same whichever step the page shows; the largest, so the secant's series does not
#: reach further down than ulp(x) makes it.
VIEW_STEP = GRID_STEP_RANGE[1]


def grid_steps() -> tuple[float, ...]:
    """The Grid's step stops: ``1e-20, 2e-20, 5e-20, ..., 1`` (61 of them).

    >>> grid_steps()[:3], len(grid_steps())
    ((1e-20, 2e-20, 5e-20), 61)
    """
    return slider_steps(*GRID_STEP_RANGE)


@dataclass(frozen=True)
class GridFrames:
    """One frame per step the dtype can take at this x: the step, the difference, f around it."""

    steps: tuple[float, ...]  # the stops that have a frame, ascending
    differences: tuple[GridDifference, ...]
    windows: tuple[np.ndarray, ...]  # f around each stop: rows of (x, f(x)), :func:`~gradlab.labs.grid.story.window_array`
    asked_f: tuple[float, ...]  # f in float64 at x as typed + h: where the secant would end, had x + h been exact
    refused: Mapping[float, str] = field(default_factory=dict)  # a stop with no frame -> the sentence saying why

    def at(self, h: float) -> tuple[GridDifference, np.ndarray]:
        """The frame at step ``h`` (one of :attr:`steps`); a GradLabError with the sentence of a stop
        that has none (x + h or f there not finite).

        >>> f = grid_frames(GridSettings("float32", 88.0, 1e-4, "exp(x)"))  # e^89 is past float32's largest
        >>> f.at(1e-4)[0].step_taken > 0, 1.0 in f.steps
        (True, False)
        >>> f.at(1.0)
        Traceback (most recent call last):
        ...
        gradlab.errors.GradLabError: f(x) = exp(x) is not finite in float32 at x = 88 or x + h (past its largest number, 3.40282e+38, or undefined): pick another point.
        """
        if h in self.refused:
            raise GradLabError(self.refused[h])
        i = self.steps.index(h)
        return self.differences[i], self.windows[i]


def grid_frames(settings: GridSettings, tangent: float | None = None) -> GridFrames:
    """The difference of ``settings`` (its h aside) at every stop of :func:`grid_steps` and at its own h.

    A stop where the difference is not finite in the dtype (x + h or f past its largest
    number) has no frame, only its sentence (``refused``); ``tangent`` is f'(x) when the caller
    has it already. A limit's LimitError ends the whole call: the next stop would wait as long.
    Stops that take one step share its difference and its window (every stop below ulp(x)/2
    takes none).
    """
    steps = sorted(set(grid_steps()) | {settings.h})
    kept, differences, windows, refused = [], [], [], {}
    shared: dict[float, np.ndarray] = {}  # step taken -> its window
    for h, r in grid_differences(settings, steps, tangent).items():
        if isinstance(r, str):  # the page says why at this step; the slider has no stop there
            refused[h] = r
            continue
        kept.append(h)
        differences.append(r)
        if r.step_taken not in shared:
            shared[r.step_taken] = window_array(r)
        windows.append(shared[r.step_taken])
    return GridFrames(tuple(kept), tuple(differences), tuple(windows), asked_values(settings, kept), refused)


def asked_values(settings: GridSettings, steps) -> tuple[float, ...]:
    """f in float64 at x as typed + each of ``steps`` (NaN where f fails): where the secant would
    end had the dtype taken the step asked for, a point the dtype may not hold. One call of f.

    >>> asked_values(GridSettings("float32", 3.0, 1.0, "x**2"), [1.0, 2.0])
    (16.0, 25.0)
    >>> import math; math.isnan(asked_values(GridSettings("float32", -2.0, 1.0, "log(x)"), [1.0])[0])
    True
    """
    with computing_in("float64"), np.errstate(all="ignore"), torch.no_grad():
        asked = parse(settings.expression)(torch.tensor(settings.x, dtype=torch.float64)
                                           + torch.tensor(list(steps), dtype=torch.float64))
    return tuple(float(v) for v in torch.broadcast_to(asked, (len(steps),)))


def view_of(settings: GridSettings) -> GridSettings:
    """``settings`` at :data:`VIEW_STEP`: what the slider's frames and the secant's series depend on.
    Every step of the page's control is a stop of the frames, so one view serves them all.

    >>> view_of(GridSettings("float32", 1.0, 2e-7, "x**2")) == view_of(GridSettings("float32", 1.0, 5e-3, "x**2"))
    True
    """
    return replace(settings, h=VIEW_STEP)


def series_with(series: pd.DataFrame, r: GridDifference) -> pd.DataFrame:
    """The secant's slope against h (:func:`gradlab.labs.grid.story.secant_series` of a view) with
    ``r``'s step among its rows: the point the page marks as "your h" (its slope NaN where no step
    is taken or the slope is not finite, as the series writes it).

    >>> from gradlab.labs.grid.representable import grid_difference
    >>> from gradlab.labs.grid.story import secant_series
    >>> view = GridSettings("float32", 1.0, 1.0, "x**2")
    >>> r = grid_difference(GridSettings("float32", 1.0, 2e-7, "x**2"))
    >>> t = series_with(secant_series(view), r)
    >>> row = t[t["h"] == 2e-7]
    >>> float(row["step"].iloc[0]) == 2 * 2.0 ** -23, float(row["secant"].iloc[0]) == r.secant
    (True, True)
    >>> bool(t["h"].is_monotonic_increasing)
    True
    """
    secant = r.secant if r.step_taken and math.isfinite(r.secant) else math.nan
    columns = ("h", "step", "secant")
    table = series[list(columns)].to_numpy(dtype=np.float64)  # one array: a table's columns each cost more
    table = np.vstack([table[table[:, 0] != r.settings.h], [r.settings.h, r.step_taken, secant]])
    table = table[np.argsort(table[:, 0], kind="stable")]
    return pd.DataFrame({name: table[:, k] for k, name in enumerate(columns)})
