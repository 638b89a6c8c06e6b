"""The exact reference: 30+ digits against closed forms at 80 digits, dtype rounding, undefined points.

Every expected value is a closed form written here by hand and evaluated with
mpmath at 80 digits, at exactly the binary float the reference is asked about.
"""

from __future__ import annotations

import math
import re
import signal

import mpmath
import numpy as np
import pytest
import sympy
import torch

from gradlab.errors import GradLabError
from gradlab.numerics.expressions import X, parse
from gradlab.limits import LIMITS
from gradlab.numerics.exact_derivatives import DIGITS, Reference, exact_derivatives, mp_evaluate, reference_at

DPS = 80


def _at(fn, x):
    with mpmath.workdps(DPS):
        return fn(mpmath.mpf(x))


def _rel(got, exact):
    with mpmath.workdps(DPS):
        if exact == 0:
            return abs(mpmath.mpf(got))
        return abs(mpmath.mpf(got) - exact) / abs(exact)


def _classic(x):
    return mpmath.exp(x) / mpmath.sqrt(mpmath.sin(x) ** 3 + mpmath.cos(x) ** 3)


def _classic_d1(x):
    s, c = mpmath.sin(x), mpmath.cos(x)
    g = s**3 + c**3
    return _classic(x) * (1 - (3 * s**2 * c - 3 * c**2 * s) / (2 * g))


FIRST = [
    # text, x, f, f'
    ("exp(x)/sqrt(sin(x)**3 + cos(x)**3)", 1.5, _classic, _classic_d1),
    ("exp(x)/sqrt(sin(x)**3 + cos(x)**3)", 0.3, _classic, _classic_d1),
    ("1/x", 0.3, lambda x: 1 / x, lambda x: -1 / x**2),
    ("1/x", -1e-8, lambda x: 1 / x, lambda x: -1 / x**2),
    ("log1p(x)", 1e-20, mpmath.log1p, lambda x: 1 / (1 + x)),
    # naive log(1 + x) loses everything in float64 at 1e-20; the reference must not
    ("log(1+x)", 1e-20, mpmath.log1p, lambda x: 1 / (1 + x)),
    ("log(1+x)", 1e-60, mpmath.log1p, lambda x: 1 / (1 + x)),
    ("exp(x) - 1", 1e-30, mpmath.expm1, mpmath.exp),
    ("(1 - cos(x))/x**2", 1e-9, lambda x: 2 * mpmath.sin(x / 2) ** 2 / x**2,
     lambda x: mpmath.sin(x) / x**2 - 4 * mpmath.sin(x / 2) ** 2 / x**3),
    ("sin(x)", 1e5, mpmath.sin, mpmath.cos),
    ("tanh(x)", 8.0, mpmath.tanh, lambda x: 1 / mpmath.cosh(x) ** 2),
    ("cbrt(x)", -8.0, lambda x: -mpmath.cbrt(-x), lambda x: 1 / (3 * mpmath.cbrt(-x) ** 2)),
    ("x*abs(x)", -0.75, lambda x: x * abs(x), lambda x: 2 * abs(x)),
    ("sqrt(x)", 1e-4, mpmath.sqrt, lambda x: 1 / (2 * mpmath.sqrt(x))),
    ("atan(x)", 1e10, mpmath.atan, lambda x: 1 / (1 + x**2)),
    ("x**3", 1.0, lambda x: x**3, lambda x: 3 * x**2),
]


@pytest.mark.parametrize("text,x,f,d1", FIRST, ids=[f"{t}@{x:g}" for t, x, *_ in FIRST])
def test_f_and_first_derivative_to_35_digits(text, x, f, d1):
    r = exact_derivatives(text, x)
    assert r.defined and r.reason is None
    assert r.x == x
    assert _rel(r.f, _at(f, x)) <= 1e-35
    assert _rel(r.d1, _at(d1, x)) <= 1e-35
    assert DIGITS >= 35


HIGHER = [
    # text, x, {order: closed form}
    ("exp(x)", 1.0, {k: mpmath.exp for k in (2, 3, 5)}),
    ("1/x", 0.3, {k: (lambda k: lambda x: (-1) ** k * math.factorial(k) / x ** (k + 1))(k) for k in (2, 3, 5)}),
    ("sin(x)", 0.7, {2: lambda x: -mpmath.sin(x), 3: lambda x: -mpmath.cos(x), 5: mpmath.cos}),
    ("x**3", 2.0, {2: lambda x: 6 * x, 3: lambda x: mpmath.mpf(6), 5: lambda x: mpmath.mpf(0)}),
    ("log(x)", 2.5, {2: lambda x: -1 / x**2, 3: lambda x: 2 / x**3, 5: lambda x: 24 / x**5}),
    ("sqrt(x)", 1e-4, {2: lambda x: -x ** mpmath.mpf(-1.5) / 4, 3: lambda x: 3 * x ** mpmath.mpf(-2.5) / 8,
                       5: lambda x: 105 * x ** mpmath.mpf(-4.5) / 32}),
]


@pytest.mark.parametrize("text,x,forms", HIGHER, ids=[f"{t}@{x:g}" for t, x, _ in HIGHER])
def test_higher_derivatives(text, x, forms):
    """f'', f''' and f^(5) feed only the theory lines: good to 1e-6 at least (documented)."""
    r = exact_derivatives(text, x)
    got = {2: r.d2, 3: r.d3, 5: r.d5}
    for order, form in forms.items():
        exact = _at(form, x)
        assert got[order] is not None
        if exact == 0:
            assert got[order] == 0
        else:
            assert _rel(got[order], exact) <= 1e-6, (order, got[order], exact)
    assert set(r.floats()) == {0, 1, 2, 3, 5}


def test_higher_derivative_cancellation_near_zero():
    # (1 - cos x)/x^2 = 1/2 - x^2/24 + x^4/720 - ...: f'' -> -1/12 as x -> 0
    r = exact_derivatives("(1 - cos(x))/x**2", 1e-6)
    assert r.d2 is not None and abs(float(r.d2) + 1 / 12) < 1e-9


# ---------------------------------------------------------------- rounding to the dtype


def _bfloat16(x: float) -> float:
    bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])


ROUNDINGS = [
    ("float16", lambda x: float(np.float16(x))),
    ("bfloat16", _bfloat16),
    ("float32", lambda x: float(np.float32(x))),
    ("float64", float),
]


@pytest.mark.parametrize("dtype,rounder", ROUNDINGS, ids=[r[0] for r in ROUNDINGS])
@pytest.mark.parametrize("x", [0.1, 0.3, 1.5, -2.7])
def test_reference_at_uses_the_dtype_rounded_point(dtype, rounder, x):
    xr = rounder(x)
    r = reference_at("x**2", x, dtype)
    assert r.x == xr
    assert _rel(r.d1, _at(lambda t: 2 * t, xr)) <= 1e-40  # 2*xr, not 2*x
    r = reference_at("1/x", x, dtype)
    assert _rel(r.d1, _at(lambda t: -1 / t**2, xr)) <= 1e-35


def test_reference_at_distinguishes_the_rounded_point():
    # in float16, 0.1 is 0.0999755859375: f'(x) of x**2 differs in the 5th digit
    assert reference_at("x**2", 0.1, "float16").x == 0.0999755859375
    assert float(reference_at("x**2", 0.1, "float16").d1) != float(exact_derivatives("x**2", 0.1).d1)


def test_expression_object_and_text_give_the_same_reference():
    a = exact_derivatives(parse("sin(x)"), 0.4)
    b = exact_derivatives("sin(x)", 0.4)
    assert a.values == b.values and isinstance(a, Reference)


# ---------------------------------------------------------------- undefined points

UNDEFINED = [
    # text, x, the point as a person writes it, a word the reason must contain
    ("log(x)", -1.0, "x = -1", "log(x)"),
    ("log(x)", 0.0, "x = 0", "log(x)"),
    ("1/x", 0.0, "x = 0", "1/x"),
    ("sqrt(x)", 0.0, "x = 0", "derivative"),  # f(0) = 0 exists; f'(0) is infinite
    ("sqrt(x)", -1.0, "x = -1", "sqrt(x)"),
    ("cbrt(x)", 0.0, "x = 0", "derivative"),
    ("abs(x)", 0.0, "x = 0", "kink"),
    ("relu(x)", 0.0, "x = 0", "kink"),
    ("abs(x - 1)", 1.0, "x = 1", "kink"),
    ("relu(x - 0.5)", 0.5, "x = 0.5", "kink"),
    ("sqrt(x**2)", 0.0, "x = 0", "kink"),  # sympy writes it as abs(x)
    ("asin(x)", 2.0, "x = 2", "asin(x)"),
    ("acosh(x)", 0.5, "x = 0.5", "acosh(x)"),
    ("atanh(x)", 1.0, "x = 1", "atanh(x)"),
    ("x**x", -0.5, "x = -0.5", "x**x"),
    ("log(x - 2)", 1.0, "x = 1", "log"),
    ("x/0", 1.0, "x = 1", "x/0"),  # accepted by the parser (sympy: zoo*x)
    ("1/(x - x)", 0.3, "x = 0.3", "1/(x - x)"),
]


@pytest.mark.parametrize("text,x,where,what", UNDEFINED, ids=[f"{t}@{x:g}" for t, x, *_ in UNDEFINED])
def test_undefined_points_give_a_reason_not_an_exception(text, x, where, what):
    r = exact_derivatives(text, x)
    assert r.defined is False
    assert what in r.reason
    # the reason names the point: a number that reads back as exactly x
    found = re.search(r"x = (-?[0-9](?:[0-9.e+-]*[0-9])?)", r.reason)
    assert found and float(found.group(1)) == x, r.reason
    assert r.d1 is None and r.floats() == {}


def test_near_a_kink_the_derivative_exists():
    assert float(exact_derivatives("abs(x)", 1e-300).d1) == 1.0
    assert float(exact_derivatives("abs(x)", -1e-300).d1) == -1.0
    assert float(exact_derivatives("relu(x)", -1e-300).d1) == 0.0


# At an abs/relu kink the composition may still be differentiable: both one-sided
# derivatives agree (x*abs(x), abs(x)**3 and relu(x)**2 all have f'(0) = 0).
@pytest.mark.parametrize("text", ["x*abs(x)", "abs(x)**3", "relu(x)**2"])
def test_differentiable_through_a_kink(text):
    # f(h) = O(h^2) at 0 from both sides, so f'(0) = 0 exactly
    r = exact_derivatives(text, 0.0)
    assert r.defined and r.d1 == 0


def test_mp_evaluate_raises_value_error_only():
    assert mp_evaluate(sympy.sin(X) ** 2 + sympy.cos(X) ** 2, 0.3) == 1
    with pytest.raises(ValueError):
        mp_evaluate(sympy.log(X), -1.0)
    with pytest.raises(ValueError):
        mp_evaluate(1 / X, 0.0)
    with pytest.raises(ValueError):
        mp_evaluate(parse("x/0").sympy, 1.0)


def test_reference_independent_of_torch():
    # the reference is an exact value, not float64 autograd: they differ in the last bits
    x = 0.3
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(parse("exp(x)/sqrt(sin(x)**3 + cos(x)**3)")(t), t)
    exact = _at(_classic_d1, x)
    ref = exact_derivatives("exp(x)/sqrt(sin(x)**3 + cos(x)**3)", x).d1
    assert _rel(ref, exact) <= 1e-35
    assert _rel(float(g), exact) <= 1e-14  # autograd is good, but only to float64


# ---------------------------------------------------------------- limited cost


class _Timeout(Exception):
    pass


def _within_seconds(seconds, fn, *args):
    """Run fn(*args); fail (not hang) when it computes longer than ``seconds`` of CPU time
    (the process's, ITIMER_PROF: a busy machine stretches the wall clock, not the work)."""

    def alarm(signum, frame):
        raise _Timeout

    previous = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        return fn(*args)
    except _Timeout:
        pytest.fail(f"{fn.__name__}{args} computed for more than {seconds} s")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _cost_limit() -> float:
    """A few seconds; where the engine declares a time limit for exact derivatives
    (``LIMITS.evaluation_seconds``), f/f' and the higher orders may each use it."""
    return 2.0 + 3 * getattr(LIMITS, "evaluation_seconds", 0.0)


def test_huge_intermediate_values_do_not_hang_the_reference():
    """(Found by this suite: mpmath reduces sin of exp(e^13) ~ 10^192000 at full precision,
    which took minutes; limited by LIMITS.evaluation_seconds and gradlab/server/deadline.py.)"""
    # float64 cannot hold exp(e^13): "undefined" with a reason, or a LimitError, both quickly
    try:
        r = _within_seconds(_cost_limit(), exact_derivatives, "sin(exp(exp(x)))", 13.0)
    except GradLabError:
        return
    assert not r.defined


@pytest.mark.parametrize("text, x", [("abs(x)", 0.0), ("relu(x)", 0.0), ("abs(x-1)", 1.0),
                                     ("x + abs(x)", 0.0), ("abs(x)*exp(x)", 0.0)])
def test_a_true_kink_has_no_derivative(text, x):
    # one-sided derivatives differ: abs -> -1/+1, relu -> 0/1, x + abs(x) -> 0/2, abs(x) e^x -> -1/+1
    r = exact_derivatives(text, x)
    assert not r.defined and "kink" in r.reason


def test_differentiable_through_a_kink_away_from_zero_value():
    # f = cos(x) + x*abs(x) at 0: f' = -sin(0) + 0 = 0 from both sides, f = 1
    r = exact_derivatives("cos(x) + x*abs(x)", 0.0)
    assert r.defined and r.f == 1 and r.d1 == 0
