"""The Round-off lab's exact reference: each point's exact value, and the checks that it can be trusted.

Values come from ball arithmetic (certified) or, for products and quotients of x
in a narrow dtype, from float64; the two formulas are checked to be equal in
mathematics at a few points, and a few mpmath values are recomputed at twice the
digits.

>>> import numpy as np
>>> digits_for(np.array([1e-10, 1.0])) == EXACT_DIGITS + 10 * CANCELLATION_ORDER  # 10 decades from 1
True
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy

from gradlab.errors import GradLabError
from gradlab.labs.roundoff.formulas import Formula
from gradlab.numerics.certified_values import TARGET_BITS, ExactValues, distance, exact_values
from gradlab.numerics.exact_derivatives import mp_evaluate
from gradlab.numerics.expressions import X
from gradlab.numerics.mp_precision import working_digits
from gradlab.numerics.ulp import ulp
from gradlab.numerics.mp_format import format_mp

__all__ = ["EXACT_DIGITS", "ExactReference", "digits_for", "exact_reference", "error_in_ulps",
           "refuse_different_maths", "reference_note"]

#: Working precision of the exact reference, in decimal digits (float64 needs 17).
EXACT_DIGITS = 50
#: Extra digits per decade of |x| away from 1: a cancellation such as 1 - cos(x)
#: loses about order * |log10 x| digits; order 3 covers x - sin(x) and its kin.
CANCELLATION_ORDER = 3
#: Points on which the two formulas are checked to be equal in mathematics and
#: the reference is recomputed at twice the digits (cheap spot checks).
CHECK_POINTS = 8
#: Two formulas "agree in mathematics" when their exact values match to this many digits.
AGREEMENT_DIGITS = 30
#: The reference is trusted when doubling its digits moves it by less than this fraction of an ulp.
REFERENCE_ULP_FRACTION = 2.0**-10


def digits_for(xs: np.ndarray) -> int:
    finite = np.abs(xs[np.isfinite(xs) & (xs != 0)])
    spread = int(np.ceil(np.max(np.abs(np.log10(finite))))) if finite.size else 0
    return EXACT_DIGITS + CANCELLATION_ORDER * spread


def _exact_mp(expr: sympy.Expr, xs: np.ndarray, digits: int) -> list:
    """Exact values (mpf, or None where undefined) by mpmath: for the few spot checks."""
    return [_mp_value(expr, float(x), digits) for x in xs]


def _mp_value(expr: sympy.Expr, x: float, digits: int):
    try:
        return mp_evaluate(expr, x, digits)
    except ValueError:  # undefined, or not real, at x
        return None


def _is_monomial(expr: sympy.Expr) -> bool:
    """c * x**k with integer k: products and quotients only, nothing that can cancel."""
    for node in sympy.preorder_traversal(expr):
        if node == X or node.is_Rational or isinstance(node, sympy.Mul):
            continue
        if isinstance(node, sympy.Pow) and node.exp.is_Integer:
            continue
        return False
    return True


@dataclass(frozen=True)
class ExactReference:
    """The exact value at every point, and a sentence saying how it was found."""

    values: ExactValues  # hi (float64, nan where undefined) + lo, and how each was found
    method: str


def exact_reference(expr: sympy.Expr, xs: np.ndarray, dtype: str, wanted: np.ndarray, digits: int) -> ExactReference:
    """The exact value at each x; points outside ``wanted`` may be left nan (they are not compared)."""
    if dtype != "float64" and _is_monomial(expr):
        # x is exact in float64 and c*x**k needs a few roundings of 2**-53 each: that is
        # at most ~2**-50 relative, below 2**-13 ulp of float32 (2**-24), so float64 suffices.
        coefficient, power = expr.as_coeff_exponent(X)
        with np.errstate(all="ignore"):
            values = float(coefficient) * np.asarray(xs, dtype=np.float64) ** int(power)
        values[~np.isfinite(values)] = np.nan
        known = np.ones(values.shape, bool)
        return ExactReference(ExactValues(values, np.zeros_like(values), known, ~known),
                      "float64 (products and quotients of x only: exact to ~2**-50 relative)")
    values = exact_values(expr, xs, digits, wanted)
    method = f"ball arithmetic (Arb), each value certified to {TARGET_BITS} bits"
    if values.by_mpmath.any():
        method += f"; {int(values.by_mpmath.sum()):,} points Arb could not settle by mpmath at {digits} digits"
    return ExactReference(values, method)


def error_in_ulps(computed: np.ndarray, exact: ExactReference, dtype: str) -> np.ndarray:
    """|computed - exact| in ulps of the dtype at the exact value (fractional)."""
    with np.errstate(all="ignore"):
        return distance(computed, exact.values) / ulp(exact.values.hi, dtype)


def _spot_indices(xs: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """A few usable points: the smallest and largest |x| (hardest for the reference) and the first ones."""
    idx = np.flatnonzero(usable)
    if idx.size == 0:
        return idx
    order = idx[np.argsort(np.abs(xs[idx]))]
    picks = list(order[: CHECK_POINTS // 4]) + list(order[-(CHECK_POINTS // 4):]) + list(idx[: CHECK_POINTS // 2])
    return np.unique(np.array(picks, dtype=np.int64))


def refuse_different_maths(fa: Formula, fb: Formula, xs: np.ndarray, exact: ExactReference, digits: int) -> None:
    """Refuse two formulas that are not equal in exact arithmetic: 'closer to the truth' needs one truth."""
    spots = _spot_indices(xs, np.isfinite(exact.values.hi))
    if spots.size == 0:
        return
    a_mp = _exact_mp(fa.sympy, xs[spots], digits)
    b_mp = _exact_mp(fb.sympy, xs[spots], digits)
    with working_digits(digits):
        for i, a, b in zip(spots, a_mp, b_mp):
            if a is None or b is None:
                continue
            if abs(a - b) > mpmath.mpf(10) ** -AGREEMENT_DIGITS * max(abs(a), abs(b)):
                raise GradLabError(
                    f"The two formulas are not equal in mathematics: at x = {xs[i]:.17g}, "
                    f"{fa.label} = {format_mp(a, 12)} but {fb.label} = {format_mp(b, 12)}. "
                    "This lab compares two ways of computing the same value; check both formulas."
                )


def reference_note(expr: sympy.Expr, xs: np.ndarray, exact: ExactReference, dtype: str, digits: int) -> str | None:
    """Arb certifies its values; recompute a few of mpmath's at twice the digits and warn
    if the reference moves by a visible fraction of an ulp."""
    v = exact.values
    spots = _spot_indices(xs, v.by_mpmath & np.isfinite(v.hi))
    finer = _exact_mp(expr, xs[spots], 2 * digits)
    for i, fine in zip(spots, finer):
        if fine is None:
            continue
        with working_digits(2 * digits):
            moved = abs(fine - (mpmath.mpf(v.hi[i]) + mpmath.mpf(v.lo[i])))
        if float(moved) > REFERENCE_ULP_FRACTION * ulp(float(fine), dtype):
            return (
                f"The exact reference is not settled at x = {xs[i]:.6g}: doubling its digits moved it. "
                "Treat the distances to the exact value with care, or narrow the range."
            )
    return None
