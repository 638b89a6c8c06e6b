"""Certified exact values (gradlab.numerics.certified_values) against mpmath at 400 digits.

The references here are computed by calling mpmath directly on closed forms
(not through GradLab's walker), at far more digits than any value needs.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from gradlab.numerics.certified_values import TARGET_BITS, distance, exact_values
from gradlab.numerics.expressions import X, parse

REF_DIGITS = 400


def _ref(fn, x: float) -> mpmath.mpf:
    with mpmath.workdps(REF_DIGITS):
        return fn(mpmath.mpf(x))


# expression, closed form for mpmath, points: cancellation from none to ~1000 bits
CASES = [
    ("(1 - cos(x))/x**2", lambda x: (1 - mpmath.cos(x)) / x**2, [1e-5, 0.5, 3.0, 1e-150]),
    ("log(1 + x)", lambda x: mpmath.log(1 + x), [1e-10, 0.25, 7.0, 1e-300]),
    ("x - sin(x)", lambda x: x - mpmath.sin(x), [1e-8, 0.1, 2.0, 1e-100]),
    ("exp(x) - 1", lambda x: mpmath.exp(x) - 1, [1e-300, -1e-20, 1.5, -30.0]),
    ("sqrt(x**2 + 1) - 1", lambda x: mpmath.sqrt(x**2 + 1) - 1, [1e-100, 1e-8, 3.0]),
    ("-1/x**2", lambda x: -1 / x**2, [0.1, 3.0, 1e-150, -7.25]),
    ("atanh(x) + tan(pi*x)", lambda x: mpmath.atanh(x) + mpmath.tan(mpmath.pi * x), [0.1, -0.3, 1e-9]),
    ("cbrt(x) * e", lambda x: mpmath.cbrt(abs(x)) * mpmath.sign(x) * mpmath.e, [-8.0, 1e-30, 2.0]),
    ("relu(x) + abs(x)", lambda x: max(x, 0) + abs(x), [-2.0, 0.0, 3.5]),
]


@pytest.mark.parametrize("text,closed_form,points", CASES, ids=[c[0] for c in CASES])
def test_values_are_the_nearest_float_and_certified(text, closed_form, points):
    values = exact_values(parse(text).sympy, np.array(points))
    for i, x in enumerate(points):
        ref = _ref(closed_form, x)
        assert values.hi[i] == float(ref), (x, values.hi[i], ref)  # mpmath's float() rounds to nearest
        with mpmath.workdps(REF_DIGITS):
            error = abs(mpmath.mpf(values.hi[i]) + mpmath.mpf(values.lo[i]) - ref)
            # lo is a float64: below ~1e-292 its own resolution (2**-1074) is the floor
            assert error <= max(mpmath.mpf(2) ** -(TARGET_BITS - 1) * abs(ref), mpmath.mpf(2) ** -1074), (x, error)
    assert values.settled.all()


UNDEFINED = [("log(x)", -1.0), ("sqrt(x)", -2.0), ("1/x", 0.0), ("acosh(x)", 0.5), ("log(x - 3)", 3.0)]


@pytest.mark.parametrize("text,x", UNDEFINED, ids=[f"{t}@{x}" for t, x in UNDEFINED])
def test_undefined_points_are_nan(text, x):
    values = exact_values(parse(text).sympy, np.array([x, 4.0]))
    assert math.isnan(values.hi[0]) and values.settled[0]
    assert math.isfinite(values.hi[1])


def test_step_functions_at_their_jump_are_undefined_and_elsewhere_exact():
    expr = sympy.Heaviside(X) + sympy.DiracDelta(X)
    values = exact_values(expr, np.array([-1.0, 0.0, 1e-300]))
    assert values.hi[0] == 0.0 and math.isnan(values.hi[1]) and values.hi[2] == 1.0
    assert not values.by_mpmath.any()


def test_an_exact_zero_reached_through_rounded_steps_goes_to_mpmath():
    values = exact_values(parse("sin(x)**2 + cos(x)**2 - 1").sympy, np.array([0.7]))
    assert values.by_mpmath[0]
    assert abs(values.hi[0]) < 1e-40


def test_a_function_without_an_arb_rule_goes_to_mpmath():
    values = exact_values(sympy.gamma(X), np.array([0.5, 4.0]))
    assert values.by_mpmath.all()
    assert values.hi[0] == float(_ref(mpmath.gamma, 0.5)) and values.hi[1] == 6.0


def test_points_not_wanted_get_one_try_and_no_fallback():
    # exp(x) - 1 at 1e-300 needs ~1000 bits: not settled at the first precision
    values = exact_values(parse("exp(x) - 1").sympy, np.array([1e-300, 0.5]), wanted=np.array([False, False]))
    assert not values.settled[0] and math.isnan(values.hi[0]) and not values.by_mpmath.any()
    assert values.settled[1] and values.hi[1] == float(_ref(lambda x: mpmath.exp(x) - 1, 0.5))


def test_distance_is_within_one_rounding_of_the_true_distance():
    values = exact_values(X / 3, np.array([1.0, 1.0]))
    computed = np.array([1 / 3, np.nextafter(1 / 3, 1)])
    for c, d in zip(computed, distance(computed, values)):
        assert d == pytest.approx(float(abs(Fraction(1, 3) - Fraction(c))), rel=2.0**-52, abs=0)


def test_threads_with_different_precisions_do_not_disturb_each_other():
    """Arb's precision is process-wide: a thread escalating to 4096 bits and one at 128 take turns."""
    hard = parse("exp(x) - 1").sympy, np.geomspace(1e-300, 1e-200, 300)
    easy = parse("(1 - cos(x))/x**2").sympy, np.linspace(0.1, 3.0, 3000)
    serial = [exact_values(*hard).hi, exact_values(*easy).hi]
    results: dict[int, np.ndarray] = {}
    before = flint.ctx.prec

    def work(k: int, job) -> None:
        results[k] = exact_values(*job).hi

    threads = [threading.Thread(target=work, args=(k, job)) for k, job in enumerate([hard, easy] * 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in results:
        np.testing.assert_array_equal(results[k], serial[k % 2])
    assert flint.ctx.prec == before


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=-700.0, max_value=700.0, allow_subnormal=False).filter(lambda x: x != 0.0))
def test_hypothesis_expm1_and_sinc_like_forms_match_mpmath(x):
    values = exact_values(parse("(exp(x) - 1)/x + sin(x)/x").sympy, np.array([x]))
    ref = _ref(lambda t: (mpmath.exp(t) - 1) / t + mpmath.sin(t) / t, x)
    assert values.hi[0] == float(ref)


# ---------------------------------------------------------------- the whole expression language

from gradlab.numerics.expressions import FUNCTIONS, ExpressionError  # noqa: E402
from gradlab.numerics.exact_derivatives import mp_evaluate  # noqa: E402


@st.composite
def expressions(draw, depth: int = 3) -> str:
    """Random expressions of the language: every whitelisted function, + - * /, small powers."""
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(["x", "x", "2", "0.5", "pi", "e", "3"]))
    kind = draw(st.sampled_from(["fn", "fn", "op", "pow"]))
    inner = draw(expressions(depth - 1))
    if kind == "fn":
        return f"{draw(st.sampled_from(sorted(FUNCTIONS)))}({inner})"
    if kind == "pow":
        return f"({inner})**{draw(st.sampled_from(['2', '3', '-1', '0.5']))}"
    return f"({inner}) {draw(st.sampled_from(['+', '-', '*', '/']))} ({draw(expressions(depth - 1))})"


def _settled_reference(expr, x: float):
    """mpmath at 300 and 600 digits; None when undefined or when the two disagree."""
    try:
        coarse, fine = (mp_evaluate(expr, x, digits) for digits in (300, 600))
    except ValueError:
        return "undefined"
    with mpmath.workdps(600):
        if abs(coarse - fine) > mpmath.mpf(2) ** -120 * abs(fine):
            return None
    return fine


@settings(max_examples=80, deadline=None)
@given(expressions(), st.floats(min_value=-4.0, max_value=4.0, allow_subnormal=False))
def test_hypothesis_any_expression_matches_mpmath_at_600_digits(text, x):
    try:
        expr = parse(text).sympy
    except ExpressionError:
        return
    if not expr.has(X):
        return  # constants are folded by the parser
    values = exact_values(expr, np.array([x]))
    ref = _settled_reference(expr, x)
    if ref is None:
        return
    if ref == "undefined":
        assert math.isnan(values.hi[0]), (text, x, values.hi[0])
    else:
        assert values.hi[0] == float(ref), (text, x, values.hi[0], ref)


def test_infinite_and_nan_x_have_no_value_and_cost_no_fallback():
    values = exact_values(parse("log(1 + x)").sympy, np.array([np.inf, -np.inf, np.nan, 1.0]))
    assert np.isnan(values.hi[:3]).all() and values.settled.all()
    assert not values.by_mpmath.any() and values.hi[3] == math.log(2)
