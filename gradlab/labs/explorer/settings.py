"""What the Explorer's controls set: the one validated :class:`~gradlab.step_sweep.engine.SweepSettings`,
and what the controls say (the steps fitted to the dtypes, where picking a function moves x).

Validation happens here, once: :func:`explorer_settings` refuses what the sweep cannot take in
the page's words, an unmade choice as a warning (:class:`ControlError`), a bad expression as
the parser's :class:`~gradlab.numerics.expression_syntax.ExpressionError`.

>>> s = explorer_settings("sin", "", 1.0, ["float32"], ["central"], 1e-8, 1.0, 21)
>>> s.expression, s.dtypes, s.points
('sin(x)', ('float32',), 21)
>>> try:
...     explorer_settings(CUSTOM, "sin(x)", 1.0, [], ["central"], 1e-8, 1.0, 21)
... except ControlError as err:
...     print(err.level, "-", err)
warning - Pick at least one dtype above (float32 and float64 are a good start).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from gradlab.errors import GradLabError
from gradlab.labs.explorer.defaults import EPS_LARGEST, EPS_SMALLEST
from gradlab.numerics.dtypes import EMULATED_DTYPES
from gradlab.numerics.expressions import parse
from gradlab.step_sweep.engine import SweepSettings
from gradlab.step_sweep.step_frames import slider_steps
from gradlab.step_sweep.step_range import chart_step_range
from gradlab.teaching.catalogue import CATALOGUE, CUSTOM
from gradlab.view import AnswerLevel

__all__ = ["ControlError", "explorer_settings", "FittedSteps", "fitted_steps", "picked_point", "STEPS",
           "EMULATED_HELP"]

#: The marked step's stops: every 1-2-5 step of the step range's widest ends (the chart's slider
#: offers those inside the chart's range).
STEPS: tuple[float, ...] = tuple(slider_steps(EPS_SMALLEST, EPS_LARGEST))

#: The dtype control's words on the 8-bit floats, with each one's machine epsilon.
EMULATED_HELP = ("8-bit floats, emulated (x, x + h and every value inside f rounded to the format, "
                 "arithmetic in float32; the stencil's difference and division in float64): "
                 + ", ".join(f"{r.name} {r.eps:.3g}" for r in EMULATED_DTYPES.values()) + ".")


class ControlError(GradLabError):
    """A control's value the sweep cannot take, in the page's words: ``level`` "warning" for a
    choice still to make (no dtype), "error" for a value to fix."""

    def __init__(self, message: str, level: AnswerLevel = "error") -> None:
        super().__init__(message)
        self.level = level


def explorer_settings(fn: str, expression: str, x: float, dtypes: Sequence[str], schemes: Sequence[str],
                      eps_min: float, eps_max: float, points: int) -> SweepSettings:
    """The sweep the controls ask for, validated: ``fn`` a catalogue key, or :data:`CUSTOM` for
    ``expression``. Raises the parser's ExpressionError, a :class:`ControlError`, or the
    settings' own GradLabError (x, the step range's ends, the points)."""
    text = expression if fn == CUSTOM else CATALOGUE[fn].expression
    parse(text)  # a typo in f is the first thing to fix
    if not dtypes:
        raise ControlError("Pick at least one dtype above (float32 and float64 are a good start).", "warning")
    if not schemes:
        raise ControlError("Pick at least one scheme above (Central is the classic).", "warning")
    if eps_min >= eps_max:
        raise ControlError(f"eps-min ({eps_min:.0e}) must be smaller than eps-max ({eps_max:.0e}): drag the "
                           "two ends of the step range apart.")
    return SweepSettings(text, float(x), tuple(dtypes), tuple(schemes), eps_min, eps_max, int(points),
                         frames=True).validated()  # the chart's step slider draws them


class FittedSteps(NamedTuple):
    """The step range fitted to the dtypes' V, and the caption saying it."""

    eps_min: float
    eps_max: float
    caption: str


def fitted_steps(dtypes: Sequence[str], schemes: Sequence[str]) -> FittedSteps:
    """From a decade below the dtypes' unit round-off to a decade past their best step
    (:func:`~gradlab.step_sweep.step_range.chart_step_range`); a fixed range until both are chosen.

    >>> fitted_steps(("float32", "float64"), ("central",)).caption
    'Steps from 1e-17 to 5e-01.'
    """
    eps_min, eps_max = chart_step_range(dtypes, schemes) if dtypes and schemes else (1e-16, 1.0)
    return FittedSteps(eps_min, eps_max, f"Steps from {eps_min:.0e} to {eps_max:.0e}.")


def picked_point(key: str, before: float | None) -> tuple[float, str] | None:
    """Where picking catalogue function ``key`` moves x (its interesting point), and the sentence
    saying so ("" when x was there already); None for a custom expression.

    >>> picked_point("reciprocal", 1.5)
    (0.3, 'Picking 1/x moved x from 1.5 to 0.3, the point this example is about; type another x to change it.')
    >>> picked_point(CUSTOM, 1.5) is None
    True
    """
    if key not in CATALOGUE:
        return None
    entry = CATALOGUE[key]
    if before is None or before == entry.x:
        return entry.x, ""
    return entry.x, (f"Picking {entry.title} moved x from {before:g} to {entry.x:g}, the point this example is "
                     "about; type another x to change it.")
