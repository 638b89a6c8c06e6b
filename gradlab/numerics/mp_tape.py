"""A sympy expression of x as a tape of mpmath calls: built once per expression, run at any x and precision.

The exact reference evaluates f and its derivatives at a few precisions for every point a view
asks about; walking the sympy tree each time (hashing every node, asking sympy what kind it is)
cost more than mpmath's arithmetic. A tape is that walk done once: each distinct sub-expression
one step, in the order the walk evaluates them (the arguments left to right, then the node), so a
run computes, and fails, exactly as the walk does. Nothing is compiled from text: the steps are
mpmath's functions, looked up from the parsed expression's nodes.

A step's arguments are checked real before it runs (a value that left the reals is
:class:`Undefined`); a node with no mpmath rule is a step raising ``NotImplementedError`` when
reached (the caller falls back on sympy's evalf). Constants (pi, a Float, 1/3) are rounded once
per working precision.

>>> import mpmath, sympy
>>> from gradlab.numerics.expressions import X
>>> tape = mp_tape(sympy.sin(X) ** 2 + sympy.cos(X) ** 2)
>>> ctx = mpmath.MPContext(); ctx.dps = 30
>>> mpmath.nstr(tape.run(ctx, ctx.mpf(0.7)), 20), len(tape.steps)
('1.0', 7)
>>> mp_tape(sympy.sqrt(X) + 1).run(ctx, ctx.mpf(-1.0))
Traceback (most recent call last):
...
gradlab.numerics.mp_tape.Undefined: an intermediate value is not real
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy

from gradlab.numerics.expressions import X, cbrt

__all__ = ["Undefined", "MpTape", "mp_tape", "TAPE_STEPS"]

#: Steps of all the tapes kept, at most (a fifth derivative of a nested f can have 10^5 of them).
TAPE_STEPS = 200_000


class Undefined(ValueError):
    """An evaluation left the reals or hit a singularity.

    A ValueError, so that the sympy fallback (raised from inside an ``except``
    clause of :func:`gradlab.numerics.exact_derivatives.mp_evaluate`) is caught by
    the callers like every other undefined value.
    """


def _heaviside(ctx, v, *rest):
    if v == 0:
        raise Undefined("a step function is evaluated at its jump")
    return ctx.mpf(1) if v > 0 else ctx.mpf(0)


def _dirac(ctx, v, *rest):
    if v == 0:
        raise Undefined("a delta function is evaluated at its spike")
    return ctx.mpf(0)


def _real_cbrt(ctx, v):
    return ctx.cbrt(v) if v >= 0 else -ctx.cbrt(-v)


def _method(name: str):
    """The mpmath function ``name`` of whichever context the tape runs in."""
    return lambda ctx, *args: getattr(ctx, name)(*args)


_MP_FUNCTIONS = {
    **{getattr(sympy, name): _method(name) for name in (
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
        "asinh", "acosh", "atanh", "exp", "log", "erf", "sec", "csc", "cot", "sign")},
    sympy.Abs: lambda ctx, v: abs(v), sympy.Heaviside: _heaviside,
    sympy.DiracDelta: _dirac, cbrt: _real_cbrt,
}


def _power(ctx, base, exponent):
    if base == 0 and exponent < 0:
        raise Undefined("division by zero")
    return ctx.power(base, exponent)


def _number(expr, ctx):
    if expr.is_Rational:
        return ctx.mpf(expr.p) / expr.q
    if expr.is_finite is False or expr is sympy.nan:
        raise Undefined("a value is infinite")
    return ctx.mpf(expr.evalf(ctx.dps))  # a Float or a constant such as pi: no global precision used


def _no_rule(func) -> Callable:
    def run(ctx, values):
        raise NotImplementedError(f"no mpmath rule for {func}")
    return run


def _rule(node: sympy.Expr) -> Callable:
    """What a step of ``node`` does with its arguments' values, in a context."""
    if node.is_Add:
        return lambda ctx, v: ctx.fsum(v)
    if node.is_Mul:
        return lambda ctx, v: ctx.fprod(v)
    if node.is_Pow:
        return lambda ctx, v: _power(ctx, *v)
    if isinstance(node, sympy.Max):
        return lambda ctx, v: max(v)
    if isinstance(node, sympy.Min):
        return lambda ctx, v: min(v)
    fn = _MP_FUNCTIONS.get(node.func)
    return _no_rule(node.func) if fn is None else (lambda ctx, v: fn(ctx, *v))


@dataclass(eq=False)
class MpTape:
    """The steps of one expression: (constant, rule, argument slots) each, slot 0 is x; a constant
    step (an index into :attr:`constants`) has no rule."""

    steps: tuple[tuple[int | None, Callable | None, tuple[int, ...]], ...]
    out: int
    constants: tuple[sympy.Expr, ...]
    _rounded: dict = field(default_factory=dict, repr=False)  # (prec, dps) -> each constant's _mpf_ or sentence

    def run(self, ctx, x):
        """The expression's value at ``x`` (an mpf of ``ctx``) in ``ctx`` at its precision; raises as
        the tree's walk does (:class:`Undefined`, ``NotImplementedError``, mpmath's own errors)."""
        constants = self._constants(ctx)
        values = [x]
        append = values.append
        for constant, rule, args in self.steps:
            if rule is None:
                value = constants[constant]
                if isinstance(value, str):
                    raise Undefined(value)
                append(ctx.make_mpf(value))
                continue
            operands = [values[a] for a in args]
            for a in operands:
                if hasattr(a, "_mpc_"):  # an mpc of any context
                    raise Undefined("an intermediate value is not real")
            append(rule(ctx, operands))
        return values[self.out]

    def _constants(self, ctx) -> list:
        key = (ctx.prec, ctx.dps)
        found = self._rounded.get(key)
        if found is None:
            found = []
            for expr in self.constants:
                try:
                    found.append(_number(expr, ctx)._mpf_)
                except Undefined as err:
                    found.append(str(err))
            self._rounded[key] = found
        return found


def _compiled(expr: sympy.Expr) -> MpTape:
    steps: list = []
    constants: list = []
    slots: dict[sympy.Expr, int] = {}

    def visit(node: sympy.Expr) -> int:
        if node is X:
            return 0
        if node.is_Number or node.is_NumberSymbol:  # each occurrence its own step, as the walk has it
            constants.append(node)
            steps.append((len(constants) - 1, None, ()))
            return len(steps)
        if node in slots:
            return slots[node]
        args = tuple(visit(a) for a in node.args)
        steps.append((None, _rule(node), args))
        slots[node] = len(steps)
        return slots[node]

    out = visit(expr)
    return MpTape(tuple(steps), out, tuple(constants))


_tapes: OrderedDict[sympy.Expr, MpTape] = OrderedDict()
_tapes_lock = threading.Lock()


def mp_tape(expr: sympy.Expr) -> MpTape:
    """The tape of ``expr``, kept while the tapes kept have at most :data:`TAPE_STEPS` steps
    (the least recently used go first).

    >>> from gradlab.numerics.expressions import X
    >>> mp_tape(sympy.exp(X) * X) is mp_tape(sympy.exp(X) * X)
    True
    """
    with _tapes_lock:
        tape = _tapes.get(expr)
        if tape is not None:
            _tapes.move_to_end(expr)
            return tape
    tape = _compiled(expr)
    if len(tape.steps) <= TAPE_STEPS:
        with _tapes_lock:
            _tapes[expr] = tape
            total = sum(len(t.steps) for t in _tapes.values())
            while total > TAPE_STEPS:
                _, dropped = _tapes.popitem(last=False)
                total -= len(dropped.steps)
    return tape
