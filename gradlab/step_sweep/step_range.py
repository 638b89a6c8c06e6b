"""The step range that fits a dtype's V: both arms, a little plateau, no wasted decades.

A finite difference of order p in a dtype with unit round-off u has (for f and its
derivatives of size ~1) a relative error of about ``u/h + h**p``:

* round-off ``u/h`` reaches 100 % at ``h ≈ u``; below that the estimate is noise
  (a flat plateau: ``x + h`` rounds back to ``x``, or the difference is all rounding);
* truncation ``h**p`` reaches 100 % at ``h ≈ 1``;
* the bottom of the V is at ``h* ≈ u**(1/(p+1))`` (√u one-sided, ∛u central).

So a dtype's range runs from a decade below ``u`` (a little plateau) to two decades
above ``h*``, kept below ``h = 1/2`` so that even the coarsest dtype ends on its
truncation arm, not on the far plateau. The complex step has no round-off arm: its
error falls like ``h**2`` down to ``u`` at ``h ≈ √u`` and stays there, so its range
shows two decades of that floor.

>>> lo, hi = step_range("float32", "central")
>>> lo, hi
(1e-09, 0.5)
>>> lo < facts("float32").unit_roundoff ** (1 / 3) < hi
True
>>> chart_step_range(("float32", "float64"), ("central",))
(1e-17, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import get_scheme

__all__ = ["LARGEST_AUTO_STEP", "best_step_guess", "step_range", "chart_step_range"]

#: The auto range never goes beyond this: at h = 1 truncation (~h**p) is ~100 % for every p.
LARGEST_AUTO_STEP = 0.5
_PLATEAU_DECADES = 1  # shown to the left of h = u
_RIGHT_ARM_DECADES = 2  # beyond the decade that holds h*
_COMPLEX_FLOOR_DECADES = 2  # of the complex step's flat floor, left of sqrt(u)


def _decade_below(value: float, shift: int = 0) -> float:
    """The power of ten at or below ``value``, times ``10**shift`` (``3e-8`` -> ``1e-8``), as a decimal."""
    return float(f"1e{math.floor(math.log10(value)) + shift}")


def _decade_above(value: float, shift: int = 0) -> float:
    return float(f"1e{math.ceil(math.log10(value)) + shift}")


def best_step_guess(dtype: str, scheme: str) -> float:
    """Where the V bottoms out for f of size ~1: ``u**(1/(p+1))`` (``√u`` for the complex step's floor).

    >>> f"{best_step_guess('float64', 'forward'):.2e}"
    '1.05e-08'
    """
    u = facts(dtype).unit_roundoff
    s = get_scheme(scheme)
    return math.sqrt(u) if s.complex_step else u ** (1 / (s.order + 1))


def step_range(dtype: str, scheme: str = "central") -> tuple[float, float]:
    """``(low, high)`` steps that show ``scheme``'s whole V in ``dtype`` (see the module docstring).

    >>> step_range("float64", "forward")
    (1e-17, 1e-05)
    >>> step_range("bfloat16", "central")
    (0.0001, 0.5)
    """
    u = facts(dtype).unit_roundoff
    h_star = best_step_guess(dtype, scheme)
    if get_scheme(scheme).complex_step:
        low = _decade_below(h_star, -_COMPLEX_FLOOR_DECADES)
    else:
        low = _decade_below(u, -_PLATEAU_DECADES)
    high = min(_decade_above(h_star, _RIGHT_ARM_DECADES), LARGEST_AUTO_STEP)
    return low, high


def chart_step_range(dtypes: Sequence[str], schemes: Sequence[str]) -> tuple[float, float]:
    """The smallest range holding :func:`step_range` of every (dtype, scheme) drawn together.

    >>> chart_step_range(("float16", "float32"), ("forward", "central"))
    (1e-09, 0.5)
    """
    ranges = [step_range(d, s) for d in dtypes for s in schemes] or [step_range("float64")]
    return min(r[0] for r in ranges), max(r[1] for r in ranges)
