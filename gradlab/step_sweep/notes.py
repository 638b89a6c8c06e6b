"""The sweep's notes (:class:`gradlab.notes.Note`): what part of a result is missing or how it is shown.

:func:`gradlab.step_sweep.engine.run_sweep` attaches them, each with the level it decides here: a
warning for what is missing (no exact reference), an info for what explains the chart (steps
too small to move x, estimates a log axis cannot show, how 8-bit floats are emulated).
"""

from __future__ import annotations

import numpy as np

from gradlab.notes import Note
from gradlab.numerics.dtypes import facts
from gradlab.numerics.exact_derivatives import Reference

__all__ = ["EMULATION_NOTE", "FP8_CHECKING_NOTE", "emulation_notes", "gap_notes", "no_reference_note",
           "zero_step_notes"]


#: What the page says when an emulated 8-bit dtype is shown: how it is computed (as every dtype's
#: estimates are: f in the dtype, the stencil's difference and division in float64), and what its
#: numbers mean for checking gradients of fp8 code.
EMULATION_NOTE = ("8-bit floats are emulated: x, x + h and every function value are rounded to the "
                  "format; arithmetic in between is float32. The step h itself and every operation inside "
                  "f are rounded too. The difference of the function values and its division by the "
                  "nominal step (2h for the central difference) are done in float64, as for every dtype "
                  "here: they add no rounding of their own, where fp8 code would round each once more, by "
                  "up to u = 6 % (e4m3) or 12 % (e5m2). Rounding x ± h moves the points (x = 1, h = 0.3 "
                  "in e4m3: to 1.25 and 0.6875, 0.5625 apart, yet divided by 0.6); the theory counts that "
                  "in its |x·f′| term.")
FP8_CHECKING_NOTE = ("Checking gradients of fp8 code: a finite difference in 8 bits cannot tell a right "
                     "gradient from a wrong one below its best error, ε^(2/3) × k: 25 % × k in e4m3, "
                     "40 % × k in e5m2, with k the function's factor (of order 1; the best-step table gives "
                     "it), and autograd itself carries the format's rounding: up to 6 % (e4m3) or 12 % "
                     "(e5m2) per operation. Check in float32 or float64 with the fp8 rounding emulated "
                     "around each op (as here), or compare against a high-precision reference.")


def emulation_notes(dtypes) -> list[Note]:
    """The two notes a sweep carries when one of ``dtypes`` is emulated, else none.

    >>> [n.text[:24] for n in emulation_notes(("float32", "float8_e5m2"))]
    ['8-bit floats are emulate', 'Checking gradients of fp']
    >>> emulation_notes(("float32",))
    []
    """
    if not any(facts(d).emulated for d in dtypes):
        return []
    return [Note.info(EMULATION_NOTE), Note.info(FP8_CHECKING_NOTE)]


def no_reference_note(reference: Reference) -> Note:
    """The sweep's note when f has no exact derivative at x (``reference`` not defined): a page
    whose answer already says so leaves this note out by comparing notes, not by reading them.

    >>> from gradlab.numerics.exact_derivatives import exact_derivatives
    >>> from gradlab.numerics.expressions import parse
    >>> no_reference_note(exact_derivatives(parse("abs(x)"), 0.0)).level
    'warning'
    """
    return Note.warning(f"No exact reference: {reference.reason} Errors are shown as gaps.")


def zero_step_notes(steps: np.ndarray, xr: float, dtype: str) -> list[Note]:
    """Steps below half the spacing of numbers at x: x + h rounds back to x, nothing is measured.

    >>> [n.text.split(" (")[0] for n in zero_step_notes(np.array([0.0, 1e-8]), 1.0, "float64")]
    ['float64: 1 of the 2 steps is too small to move x = 1']
    """
    zero = int(np.sum(steps == 0))
    if not zero:
        return []
    one = zero == 1
    return [Note.info(f"{dtype}: {zero} of the {len(steps)} steps {'is' if one else 'are'} too small to move "
                      f"x = {xr:.6g} (x + h rounds back to x), so the step taken is 0 and "
                      f"{'that estimate carries' if one else 'those estimates carry'} no information.")]


def gap_notes(tables: list[dict]) -> list[Note]:
    """Estimates a log axis cannot show: errors exactly 0, and inf or NaN."""
    notes = []
    zero = sum(int((t["abs_error"] == 0).sum()) for t in tables)
    bad = sum(int((~t["finite"]).sum()) for t in tables)
    if zero:
        notes.append(Note.info(f"{zero} estimates equal the exact value to the last bit (error exactly 0); "
                               "a log axis cannot show 0, so they appear as gaps."))
    if bad:
        notes.append(Note.info(f"{bad} estimates are inf or NaN (overflow, or f undefined at a stencil "
                               "point); they appear as gaps."))
    return notes
