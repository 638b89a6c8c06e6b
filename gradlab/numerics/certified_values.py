"""Exact values of an expression at many points, each with a certified error bound.

The round-off lab needs the exact value of a formula at thousands of points.
mpmath, point by point (:func:`gradlab.numerics.exact_derivatives.mp_evaluate`), costs ~90 µs a
point and cannot say how many of its digits survived a cancellation. Arb's
ball arithmetic (python-flint) costs a few µs and carries a rigorous radius:
each point is evaluated at doubling precision until its value is known to
:data:`TARGET_BITS` relative bits (``1 - cos(x)`` at tiny x needs hundreds of
bits). Only points Arb cannot settle by :data:`MAX_BITS` (a value that is not
real, a singular point, an exact zero reached through rounded steps) go to
mpmath, which decides them as the rest of GradLab does.

Each value travels as a pair of float64 ``hi + lo``: ``hi`` is the nearest
float64 and ``lo`` the remainder, so ``|computed - exact|`` is
``|(computed - hi) - lo|``, vectorised and good to ~2**-100 relative (to
2**-1074 absolute for values so small that lo is subnormal).

>>> from gradlab.numerics.expressions import parse
>>> v = exact_values(parse("(1 - cos(x))/x**2").sympy, np.array([1e-5, 0.5]))
>>> float(v.hi[0])  # 1/2 - x**2/24 + ...: float64 alone cancels to 0.5000000413701855
0.49999999999583333
>>> v.settled.tolist(), v.by_mpmath.tolist()
([True, True], [False, False])
"""

from __future__ import annotations

import functools
import math
import operator
import threading
from collections.abc import Callable
from dataclasses import dataclass

import flint
import numpy as np
import sympy
from flint import arb

from gradlab.numerics.expressions import X, cbrt
from gradlab.numerics.mp_precision import private_digits
from gradlab.numerics.exact_derivatives import mp_evaluate

__all__ = ["ExactValues", "exact_values", "TARGET_BITS", "MAX_BITS"]

#: Relative bits each value must be known to: a float64 ulp is 2**-52 relative,
#: so an error bound of 2**-85 moves a distance in ulps by less than 2**-32 ulp.
TARGET_BITS = 85
#: First working precision, doubled for the points not yet known to TARGET_BITS.
START_BITS = 128
#: Past this, a point goes to mpmath (float64's range needs at most ~3,300 bits of cancellation).
MAX_BITS = 4096
#: Points evaluated per hold of the precision lock: Arb's precision is one
#: process-wide setting, so threads take turns, a few milliseconds at a time.
CHUNK = 1000

_PRECISION_LOCK = threading.Lock()


class _Unsettled(ArithmeticError):
    """A ball straddles a point where the next operation is undefined or has a jump: more precision."""


class _Undefined(ArithmeticError):
    """The exact value does not exist at this point (a step function at its jump)."""


@dataclass(frozen=True)
class ExactValues:
    """Exact values as float64 pairs: ``hi`` nearest (nan where undefined), ``lo = exact - hi``.

    ``settled``: known to TARGET_BITS (by Arb) or computed by mpmath
    (``by_mpmath``), or undefined. ``False`` only for points that were not
    ``wanted`` and did not settle at the first precision.
    """

    hi: np.ndarray
    lo: np.ndarray
    settled: np.ndarray
    by_mpmath: np.ndarray


# ---------------------------------------------------------------- compiling the expression


Tape = list[tuple[Callable[..., arb], tuple[int, ...]]]


def _step(v: arb, *rest) -> arb:
    if v > 0:
        return arb(1)
    if v < 0:
        return arb(0)
    raise _Undefined() if v.is_zero() else _Unsettled()


def _spike(v: arb, *rest) -> arb:
    if v.is_zero():
        raise _Undefined()
    if v > 0 or v < 0:
        return arb(0)
    raise _Unsettled()


def _real_cbrt(v: arb) -> arb:
    if v > 0 or v.is_zero():
        return v.root(3)
    if v < 0:
        return -((-v).root(3))
    raise _Unsettled()


_FUNCTIONS: dict[type, Callable[..., arb]] = {
    **{getattr(sympy, name): operator.methodcaller(name) for name in (
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
        "asinh", "acosh", "atanh", "exp", "log", "erf", "sec", "csc", "cot")},
    sympy.sign: operator.methodcaller("sgn"), sympy.Abs: abs, sympy.Heaviside: _step,
    sympy.DiracDelta: _spike, cbrt: _real_cbrt,
    sympy.Max: lambda *args: functools.reduce(arb.max, args),
    sympy.Min: lambda *args: functools.reduce(arb.min, args),
}


def _constant(expr: sympy.Expr) -> Callable[[], arb]:
    """A number, as a function of the working precision (pi and e are rounded to it)."""
    if expr.is_Integer:
        return lambda: arb(int(expr))
    if expr.is_Rational:
        return lambda: arb(expr.p) / expr.q
    if expr.is_Float:
        sign, man, exp, _ = expr._mpf_  # exact binary data
        return lambda: arb(((-1) ** sign * int(man), int(exp)))
    if expr is sympy.pi:
        return arb.pi
    if expr is sympy.E:
        return arb.const_e
    raise NotImplementedError(f"no Arb rule for the number {expr}")


def _power_int(k: int) -> Callable[[arb], arb]:
    return lambda base: base**k  # exact for exact bases, defined for negative ones


@functools.lru_cache(maxsize=64)
def _compile(expr: sympy.Expr) -> tuple[Tape, int]:
    """The expression as a tape: each step is (function, argument slots); slot 0 is x.

    Each distinct sub-expression is one step, so shared ones cost once.
    Constants are steps without arguments (they depend on the precision).
    """
    tape: Tape = [(lambda: None, ())]  # slot 0, filled with x
    slots: dict[sympy.Expr, int] = {X: 0}

    def visit(node: sympy.Expr) -> int:
        if node in slots:
            return slots[node]
        if node.is_Number or node.is_NumberSymbol:
            if node.is_finite is False or node is sympy.nan:
                raise NotImplementedError("an infinite constant")
            step = (_constant(node), ())
        elif node.is_Pow and node.exp.is_Integer:
            step = (_power_int(int(node.exp)), (visit(node.base),))
        else:
            args = tuple(visit(a) for a in node.args)
            if node.is_Add:
                step = (lambda *v: functools.reduce(operator.add, v), args)
            elif node.is_Mul:
                step = (lambda *v: functools.reduce(operator.mul, v), args)
            elif node.is_Pow:
                step = (operator.pow, args)
            elif node.func in _FUNCTIONS:
                step = (_FUNCTIONS[node.func], args)
            else:
                raise NotImplementedError(f"no Arb rule for {node.func}")
        tape.append(step)
        slots[node] = len(tape) - 1
        return slots[node]

    return tape, visit(expr)


# ---------------------------------------------------------------- evaluating


def _program(tape: Tape) -> list[tuple[arb | None, Callable[..., arb], tuple[int, ...]]]:
    """The tape at the current precision: constants evaluated once, as (value, fn, args)."""
    return [(fn() if i and not args else None, fn, args) for i, (fn, args) in enumerate(tape)][1:]


def _run(program: list, out: int, x: float) -> arb:
    values: list = [arb(x)]
    append = values.append
    for constant, fn, args in program:
        append(constant if constant is not None else fn(*[values[a] for a in args]))
    return values[out]


def _split(v: arb) -> tuple[float, float]:
    """``v``'s midpoint as hi + lo, hi the nearest float64."""
    hi = float(v)
    if not math.isfinite(hi):
        return hi, 0.0
    return hi, float(v.mid() - arb(hi))  # exact at the working precision


def _pass(tape: Tape, out: int, xs: np.ndarray, todo: np.ndarray, bits: int,
          hi: np.ndarray, lo: np.ndarray, settled: np.ndarray) -> None:
    """Evaluate the points ``todo`` at ``bits``; fill in those that settle."""
    for start in range(0, todo.size, CHUNK):
        chunk = todo[start:start + CHUNK]
        with _PRECISION_LOCK:
            saved = flint.ctx.prec
            flint.ctx.prec = bits
            try:
                program = _program(tape)
                for i in chunk.tolist():
                    try:
                        v = _run(program, out, float(xs[i]))
                    except _Undefined:
                        hi[i], lo[i], settled[i] = np.nan, 0.0, True
                        continue
                    except _Unsettled:
                        continue
                    if v.is_finite() and (v.is_exact() or v.rel_accuracy_bits() >= TARGET_BITS):
                        hi[i], lo[i] = _split(v)
                        settled[i] = True
            finally:
                flint.ctx.prec = saved


def _by_mpmath(expr: sympy.Expr, x: float, digits: int) -> tuple[float, float]:
    try:
        v = mp_evaluate(expr, x, digits)
    except ValueError:  # undefined, or not real, at x
        return np.nan, 0.0
    hi = float(v)
    if not math.isfinite(hi):
        return hi, 0.0
    with private_digits(digits) as ctx:
        return hi, float(ctx.mpf(v) - hi)


def exact_values(expr: sympy.Expr, xs: np.ndarray, fallback_digits: int = 50,
                 wanted: np.ndarray | None = None) -> ExactValues:
    """The exact value of ``expr`` (a sympy expression of x) at each float in ``xs``.

    Points where ``wanted`` is False get one try at the first precision and
    are otherwise left unsettled (nan): the caller does not use them.
    Points Arb cannot settle go to mpmath at ``fallback_digits``.

    >>> v = exact_values(sympy.log(X), np.array([-1.0, 1.0, np.e]))
    >>> v.hi.tolist(), v.by_mpmath.tolist()
    ([nan, 0.0, 1.0], [True, False, False])
    """
    xs = np.asarray(xs, dtype=np.float64)
    wanted = np.ones(xs.shape, bool) if wanted is None else np.asarray(wanted, bool)
    hi, lo = np.full(xs.shape, np.nan), np.zeros(xs.shape)
    settled, by_mpmath = np.zeros(xs.shape, bool), np.zeros(xs.shape, bool)
    try:
        tape, out = _compile(expr)
    except NotImplementedError:
        tape = None
    settled[~np.isfinite(xs)] = True  # no value at an infinite or NaN x: nan, as mpmath says
    todo, bits = np.flatnonzero(~settled), START_BITS
    while tape is not None and todo.size and bits <= MAX_BITS:
        _pass(tape, out, xs, todo, bits, hi, lo, settled)
        todo = todo[~settled[todo] & (wanted[todo])]
        bits *= 2
    for i in np.flatnonzero(~settled & wanted).tolist():
        hi[i], lo[i] = _by_mpmath(expr, float(xs[i]), fallback_digits)
        settled[i] = by_mpmath[i] = True
    return ExactValues(hi, lo, settled, by_mpmath)


def distance(computed: np.ndarray, exact: ExactValues) -> np.ndarray:
    """``|computed - exact|`` in float64, from the hi/lo pair (nan where exact is undefined).

    >>> from fractions import Fraction
    >>> v = exact_values(X / 3, np.array([1.0]))
    >>> float(distance(np.array([1 / 3]), v)[0]) == float(abs(Fraction(1, 3) - Fraction(1 / 3)))
    True
    """
    with np.errstate(all="ignore"):
        return np.abs((computed - exact.hi) - exact.lo)
