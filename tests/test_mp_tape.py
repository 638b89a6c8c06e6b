"""The mpmath tape of an expression computes what a walk of its sympy tree computes, bit for bit.

The walk here is written out plainly (each node's mpmath function by its sympy name, shared
sub-expressions once), independent of the tape's rules; both run in one private context.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from gradlab.numerics.exact_derivatives import exact_derivatives, mp_evaluate
from gradlab.numerics.expressions import X, parse
from gradlab.numerics.mp_precision import private_digits, working_digits
from gradlab.numerics.mp_tape import TAPE_STEPS, Undefined, mp_tape

EXPRESSIONS = ["exp(x)/sqrt(sin(x)**3 + cos(x)**3)", "sigmoid(x)*tanh(x)", "log(1+x)", "1/x", "x**3 - 2.5*x",
               "atan(x)*pi", "exp(-x**2)/3", "sqrt(x)", "cosh(x)**-2", "asin(x/4)"]


def _walk(expr: sympy.Expr, x, ctx, memo: dict):
    if expr is X:
        return x
    if expr.is_Rational:
        return ctx.mpf(expr.p) / expr.q
    if expr.is_Number or expr.is_NumberSymbol:
        return ctx.mpf(expr.evalf(ctx.dps))
    if expr not in memo:
        args = [_walk(a, x, ctx, memo) for a in expr.args]
        if any(hasattr(a, "_mpc_") for a in args):
            raise ValueError("not real")
        if expr.is_Add:
            memo[expr] = ctx.fsum(args)
        elif expr.is_Mul:
            memo[expr] = ctx.fprod(args)
        elif expr.is_Pow:
            if args[0] == 0 and args[1] < 0:
                raise ZeroDivisionError
            memo[expr] = ctx.power(*args)
        else:
            memo[expr] = getattr(ctx, type(expr).__name__.lower())(*args)
    return memo[expr]


def _outcome(run):
    try:
        value = run()
    except (ValueError, ZeroDivisionError):
        return "undefined"
    return "complex" if hasattr(value, "_mpc_") else value._mpf_


@settings(max_examples=60, deadline=None)
@given(text=st.sampled_from(EXPRESSIONS), order=st.sampled_from([0, 1, 2, 3, 5]),
       x=st.floats(-6.0, 6.0, allow_nan=False), dps=st.sampled_from([15, 30, 65, 115]))
def test_the_tape_computes_what_the_tree_walk_computes(text, order, x, dps):
    expr = parse(text).derivative(order)
    with private_digits(dps) as ctx:
        walked = _outcome(lambda: _walk(expr, ctx.mpf(x), ctx, {}))
        taped = _outcome(lambda: mp_tape(expr).run(ctx, ctx.mpf(x)))
    assert taped == walked


def test_a_value_that_leaves_the_reals_is_undefined_and_a_node_without_a_rule_says_so():
    with private_digits(30) as ctx:
        with pytest.raises(Undefined):
            mp_tape(sympy.log(X) + 1).run(ctx, ctx.mpf(-2.0))
        with pytest.raises(NotImplementedError):
            mp_tape(sympy.gamma(X)).run(ctx, ctx.mpf(2.0))
    assert float(mp_evaluate(sympy.gamma(X), 5.0)) == 24.0  # sympy's evalf takes over


def test_constants_are_rounded_at_each_precision_anew():
    tape = mp_tape(sympy.pi * X)
    low, high = (mp_evaluate(sympy.pi * X, 1.0, dps) for dps in (20, 60))
    assert len(tape._rounded) >= 2
    with working_digits(80):
        assert abs(low - mpmath.pi) > 1e-25 and abs(high - mpmath.pi) < 1e-58


def test_exact_derivatives_are_the_calculus_ones():
    r = exact_derivatives("exp(x)", 1.0)
    with working_digits(80):
        assert r.defined and all(abs(v - mpmath.e) < 1e-48 for _, v in r.values)
    assert exact_derivatives("1/x", 4.0).d1 == mpmath.mpf(-1) / 16


def test_the_tapes_kept_stay_within_their_budget():
    from gradlab.numerics import mp_tape as module

    for k in range(40):
        mp_tape(sympy.sin(X + k) * sympy.exp(X / (k + 1)))
    assert sum(len(t.steps) for t in module._tapes.values()) <= TAPE_STEPS
