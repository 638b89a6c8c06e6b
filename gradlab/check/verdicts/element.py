"""One checked value of a gradient check: where, both gradients, how far apart, its state.

A leaf: :mod:`gradlab.check.verdicts.states` words verdicts from elements and :mod:`gradlab.check.verdicts.results`
asks states for the overall verdict, so neither may hold the type the other needs.

>>> e = Element("x[0]", 2.0, 2.5, 0.5, 0.2, 1e-3)
>>> e.abs_error > e.tolerance, e.where
(True, 'x[0]')
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Element"]


@dataclass(frozen=True)
class Element:
    """One checked value: where, both gradients, how far apart, the finite difference's
    error bound and the value's state (:mod:`gradlab.check.verdicts.states`); on a kink both
    one-sided slopes and the one autograd chose."""

    label: str
    autograd: float
    numeric: float
    abs_error: float
    rel_error: float
    tolerance: float
    error_bound: float = float("nan")
    state: str = ""
    left_slope: float = float("nan")
    right_slope: float = float("nan")
    autograd_side: str = ""  # left | right | between | outside, on a kink
    flat_index: int = -1  # position among all checked input elements (-1: a direction)
    output: str = ""  # fn with several outputs: the part the disagreement comes through
    bound_source: str = ""  # how error_bound was obtained: measured noise, float64 witness, model
    step: float = float("nan")  # the step ``numeric`` was taken at (its best estimate's, once judged)
    numeric_dtype: str = ""  # the dtype ``numeric`` was taken in
    # An element a failing direction was narrowed to: that direction's label, and how
    # ("block": each element of its block checked on its own; "bisection"); "" otherwise.
    found_along: str = ""
    found_by: str = ""

    @property
    def where(self) -> str:
        """The label, with the output part when one is named: ``x[3] (through out[1])``."""
        return f"{self.label} (through {self.output})" if self.output else self.label
