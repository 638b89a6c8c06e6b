"""The exact derivative, at the point as the dtype rounds it, to 50 digits.

Finite differences and autograd are both measured against this value, never
against float64 autograd. The derivative is sympy's exact one; it is evaluated
with mpmath by a tape of its calls built once from the sympy tree
(:mod:`gradlab.numerics.mp_tape`: nothing is compiled from text). Cancellation can eat digits (``exp(x) - 1`` at tiny x), so f and f'
are evaluated at two working precisions and, when those disagree, by sympy's
adaptive ``evalf``.

>>> r = exact_derivatives(parse("1/x"), 4.0)
>>> r.defined, float(r.d1)
(True, -0.0625)
>>> exact_derivatives(parse("log(x)"), -1.0).reason
'f(x) = log(x) has no real value at x = -1.'
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import mpmath
import sympy

from gradlab.server.deadline import run_within
from gradlab.errors import LimitError
from gradlab.numerics.expressions import X, Expression, parse
from gradlab.limits import LIMITS
from gradlab.numerics.mp_tape import Undefined, mp_tape
from gradlab.numerics.mp_precision import private_digits, to_shared, working_digits
from gradlab.numerics.emulation import round_to_dtype

__all__ = ["Reference", "exact_derivatives", "reference_at", "DIGITS", "mp_evaluate"]

DIGITS = 50  # significant digits the reference is computed to
_GUARD_DIGITS = (DIGITS + 15, 2 * DIGITS + 15)  # two precisions: agreement means no digits were lost
_AGREEMENT = mpmath.mpf(10) ** -(DIGITS - 15)  # f and f' must agree to 35 digits
_ORDERS = (0, 1, 2, 3, 5)  # f, f', and the derivatives the truncation terms need
_ROUGH_DIGITS = (30, 60, 120)  # higher derivatives only feed the theory lines
_ROUGH_AGREEMENT = mpmath.mpf(10) ** -6


class _TooLarge(ValueError):
    """A value's magnitude overflows even mpmath (its exponent has too many digits)."""


def mp_evaluate(expr: sympy.Expr, x, dps: int = DIGITS):
    """Evaluate a sympy expression of x at ``x`` to ``dps`` digits; a real mpf.

    Runs in a private mpmath context (:func:`gradlab.numerics.mp_precision.private_digits`),
    so other threads' precision cannot touch it and it waits for none of them.
    Raises ``ValueError`` when the value is not a finite real number.

    >>> mpmath.nstr(mp_evaluate(sympy.sin(X) ** 2 + sympy.cos(X) ** 2, 0.7), 20)
    '1.0'
    """
    with private_digits(dps) as ctx:
        try:
            value = mp_tape(expr).run(ctx, ctx.mpf(x))
        except NotImplementedError:
            value = ctx.mpf(_evalf(expr, x, dps))
        except OverflowError as err:  # the number itself is too big even for mpmath (x**x**... 24 levels)
            raise _TooLarge(str(err)) from None
        except (ZeroDivisionError, ValueError) as err:  # Undefined is a ValueError
            raise ValueError(str(err)) from None
        if hasattr(value, "_mpc_") or not ctx.isfinite(value):  # an mpc
            raise ValueError("the value is not a finite real number")
        return to_shared(+value)  # rounded to dps digits, then every bit kept


def _evalf(expr: sympy.Expr, x, dps: int):
    """sympy's own adaptive evaluation (it uses mpmath's global context: under the lock)."""
    with working_digits(dps):
        value = expr.evalf(dps, subs={X: sympy.Rational(float(x))})
        real, imag = value.as_real_imag()
        if imag != 0 or not real.is_finite:
            raise Undefined("the value is not a finite real number")
        return mpmath.mpf(real)


def _accurate(expr: sympy.Expr, x):
    """Evaluate at two precisions; if cancellation cost digits, let sympy adapt."""
    low, high = (mp_evaluate(expr, x, dps) for dps in _GUARD_DIGITS)
    if abs(low - high) <= _AGREEMENT * abs(high):
        return high
    return _evalf(expr, x, DIGITS + 10)


def _rough(expr: sympy.Expr, x):
    """A value good to a few digits (for the theory lines), or None if none can be had.

    Higher derivatives can cancel badly (a 5th derivative of (1-cos x)/x**2 at
    tiny x); two precisions that agree to 1e-6 are trusted, else a third is tried.
    """
    previous = None
    for dps in _ROUGH_DIGITS:
        try:
            value = mp_evaluate(expr, x, dps)
        except ValueError:
            return None
        if previous is not None and abs(value - previous) <= _ROUGH_AGREEMENT * abs(value):
            return value
        previous = value
    return None


# ---------------------------------------------------------------- the reference


@dataclass(frozen=True)
class Reference:
    """f and its derivatives at one point, exact to ``DIGITS`` digits, or why not.

    ``values`` maps derivative order to an mpmath number (orders 0, 1, 2, 3, 5);
    a higher derivative that does not exist at x is simply missing.
    """

    expression: str
    x: float
    defined: bool
    reason: str | None = None
    values: tuple[tuple[int, mpmath.mpf], ...] = ()

    def _get(self, order: int):
        return dict(self.values).get(order)

    @property
    def f(self):
        return self._get(0)

    @property
    def d1(self):
        return self._get(1)

    @property
    def d2(self):
        return self._get(2)

    @property
    def d3(self):
        return self._get(3)

    @property
    def d5(self):
        return self._get(5)

    def floats(self) -> dict[int, float]:
        """The values as float64, for the theory model and the tables."""
        return {order: float(v) for order, v in self.values}


def _fmt(x: float) -> str:
    return f"{x:.17g}" if x != int(x) or abs(x) >= 1e16 else f"{int(x)}"


def exact_derivatives(expression: Expression | str, x: float) -> Reference:
    """f, f', f'', f''' and f^(5) of ``expression`` at exactly the float ``x``.

    Undefined points (outside the domain, a pole, a kink) give ``defined=False``
    and a ``reason`` in words, never an exception.

    >>> exact_derivatives("abs(x)", 0.0).reason
    'abs(x) has a kink at x = 0: it has no derivative there.'
    """
    expr = parse(expression) if isinstance(expression, str) else expression
    return _exact_cached(expr.text, float(x))


@lru_cache(maxsize=1024)
def _exact_cached(text: str, x: float) -> Reference:
    expr = parse(text)
    where = _fmt(x)
    kinks = _kinks_at(expr, x)
    if kinks:
        return _through_kinks(expr, x, kinks, where)
    # f and f' are the reference itself: over the time limit, a LimitError says so.
    first = run_within(LIMITS.evaluation_seconds, f"the exact derivative of {text}", _first_two, expr, x)
    if isinstance(first, str):
        return Reference(text, x, False, first.format(text=text, where=where))
    values = list(first) + _higher_derivatives(expr, x)
    return Reference(text, x, True, None, tuple(values))


def _first_two(expr: Expression, x: float):
    """((0, f), (1, f')) at x, or a reason template when either has no finite real value."""
    try:
        f = _accurate(expr.sympy, x)
    except _TooLarge:
        return "f(x) = {text} at x = {where} is too large for any number GradLab can compute with."
    except ValueError:
        return "f(x) = {text} has no real value at x = {where}."
    try:
        d1 = _accurate(expr.derivative(1), x)
    except _TooLarge:
        return "f'(x) of {text} at x = {where} is too large for any number GradLab can compute with."
    except ValueError:
        return "f(x) = {text} has no finite derivative at x = {where}."
    return ((0, f), (1, d1))


@lru_cache(maxsize=256)
def _higher_forms(text: str) -> tuple[tuple[int, sympy.Expr], ...]:
    """f'', f''' and f^(5) as sympy expressions, as many as fit in the time limit.

    Each order of a nested expression can be several times larger than the last
    (tan(tan(...)) with 12 levels: f^(5) has 236,000 operations and takes minutes),
    so the orders are built under ``LIMITS.evaluation_seconds``; those not reached
    are left out, once per expression (the result is cached, the time spent once).
    """
    expr = parse(text)
    forms: list[tuple[int, sympy.Expr]] = []

    def build() -> None:
        for order in _ORDERS[2:]:
            forms.append((order, expr.derivative(order)))

    try:
        run_within(LIMITS.evaluation_seconds, f"the higher derivatives of {text}", build)
    except LimitError:
        pass  # the theory lines that need the missing orders are not drawn
    return tuple(forms)


def _higher_derivatives(expr: Expression, x: float) -> list[tuple[int, mpmath.mpf]]:
    """The higher derivatives at x that can be had within the time limit (for the theory lines)."""
    found: list[tuple[int, mpmath.mpf]] = []

    def evaluate() -> None:
        for order, form in _higher_forms(expr.text):
            value = _rough(form, x)
            if value is not None:  # else the theory line that needs it is simply not drawn
                found.append((order, value))

    try:
        run_within(LIMITS.evaluation_seconds, f"the higher derivatives of {expr.text}", evaluate)
    except LimitError:
        pass
    return found


def _kinks_at(expr: Expression, x: float) -> list[sympy.Expr]:
    """The abs/relu arguments that are exactly zero at x (where a kink may be)."""
    found = []
    for argument in expr.kink_arguments():
        try:
            if mp_evaluate(argument, x) == 0:
                found.append(argument)
        except ValueError:
            continue
    return found


def _one_sided(derivative: sympy.Expr, kinks: list[sympy.Expr], side: int) -> sympy.Expr:
    """The derivative as seen from one side of the kinks: sign(a) -> ±1, Heaviside(a) -> 1 or 0."""
    for a in kinks:
        derivative = derivative.replace(
            lambda e, a=a: isinstance(e, sympy.sign) and e.args[0] == a, lambda e: sympy.Integer(side))
        derivative = derivative.replace(
            lambda e, a=a: isinstance(e, sympy.Heaviside) and e.args[0] == a,
            lambda e: sympy.Integer(1 if side > 0 else 0))
    return derivative


def _through_kinks(expr: Expression, x: float, kinks: list[sympy.Expr], where: str) -> Reference:
    """f'(x) where an abs/relu argument is zero: defined only if both one-sided derivatives agree.

    x*abs(x), abs(x)**3 and relu(x)**2 are differentiable at 0 (f' = 0); abs(x) is not.
    Higher derivatives are not given there, so no theory line is drawn.
    """
    named = ", ".join(f"abs({a})" if expr.sympy.has(sympy.Abs(a)) else f"relu({a})" for a in kinks)
    no_derivative = Reference(expr.text, x, False, f"{named} has a kink at x = {where}: it has no derivative there.")
    try:
        f = mp_evaluate(expr.sympy, x)
        left, right = (mp_evaluate(_one_sided(expr.derivative(1), kinks, side), x) for side in (-1, 1))
    except ValueError:
        return no_derivative
    if left != right:
        return no_derivative
    return Reference(expr.text, x, True, None, ((0, f), (1, right)))


def reference_at(expression: Expression | str, x: float, dtype) -> Reference:
    """The exact reference at x as rounded to ``dtype`` (what the dtype actually evaluates).

    >>> reference_at("x**2", 0.1, "float16").x
    0.0999755859375
    """
    return exact_derivatives(expression, round_to_dtype(x, dtype))
