"""What a sweep's result holds, as the modules that read it see it: a protocol, no import.

:class:`gradlab.step_sweep.engine.SweepResult` is the one class that has these fields. The
figures (:mod:`gradlab.labs.explorer.figures`, :mod:`gradlab.labs.explorer.chart_marks`), the regimes
(:mod:`gradlab.step_sweep.regimes`) and the display (:mod:`gradlab.step_sweep.display`) name this
protocol for their argument's type, not the engine's class: the engine's result calls the
display, which calls the figures, so were they to import the engine for a type name the
modules would import each other in a circle.

>>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
>>> r = run_sweep(SweepSettings("x**2", 3.0, ("float64",), ("central",), points=5))
>>> all(hasattr(r, name) for name in Swept.__annotations__) and isinstance(r.best_rows, tuple)
True
"""

from __future__ import annotations

from typing import Any, Protocol

import pandas as pd

__all__ = ["Swept"]


class Swept(Protocol):
    """A sweep's result: its settings, its tables, its references and notes (see
    :class:`gradlab.step_sweep.engine.SweepResult` for what each holds)."""

    settings: Any  # a gradlab.step_sweep.engine.SweepSettings
    table: pd.DataFrame
    autograd: pd.DataFrame
    best: pd.DataFrame
    references: dict
    rounded_x: dict
    derivative_text: str
    reference: Any  # a gradlab.numerics.exact_derivatives.Reference
    notes: tuple
    frames: Any  # a gradlab.step_sweep.step_frames.StepFrames

    @property
    def best_rows(self) -> tuple[dict, ...]: ...
