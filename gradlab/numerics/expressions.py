"""The safe expression language: text -> validated tree -> torch function + sympy expression.

Users type functions of ``x`` such as ``exp(x)/sqrt(sin(x)**3 + cos(x)**3)``.
The text is parsed with :mod:`ast` and walked against a whitelist; nothing the
user typed is ever handed to ``eval``, ``exec`` or sympy's parser. From the one
validated tree we build, ourselves, a torch callable (every real and complex
dtype, autograd-safe) and a sympy expression for exact differentiation.

>>> f = parse("1/x")
>>> f.derivative()
-1/x**2
>>> float(f(torch.tensor(4.0)))
0.25
>>> try:
...     parse("foo(x)")
... except ExpressionError as err:
...     print(str(err)[:48])
Unknown function 'foo'. Known functions: abs, ac

The language's parts: :mod:`~gradlab.numerics.expression_functions` (x, the
whitelisted functions and constants), :mod:`~gradlab.numerics.expression_syntax`
(the syntax check) and :mod:`~gradlab.numerics.expression_building` (torch and
sympy forms). This module holds the result, :class:`Expression`, and
:func:`parse`; the public names of the others are importable from here too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache

import sympy
import torch

from gradlab.limits import LIMITS
from gradlab.numerics.expression_building import build
from gradlab.numerics.expression_functions import CONSTANTS, FUNCTIONS, KINKED, X, FunctionSpec, TorchFn, cbrt
from gradlab.numerics.expression_syntax import ExpressionError, syntax_tree, validate

__all__ = ["ExpressionError", "Expression", "FunctionSpec", "FUNCTIONS", "CONSTANTS", "KINKED", "X", "cbrt", "parse"]


@dataclass(frozen=True, eq=False)
class Expression:
    """A validated expression of x, usable by torch (any dtype, autograd) and by sympy.

    >>> e = parse("sin(x)**2")
    >>> e.holomorphic, sorted(e.functions)
    (True, ['sin'])
    >>> e.derivative()
    2*sin(x)*cos(x)
    """

    text: str
    sympy: sympy.Expr
    functions: frozenset[str]
    _torch_fn: TorchFn | None = field(repr=False)
    _constant: float | None = field(repr=False)

    @property
    def holomorphic(self) -> bool:
        """False when a function with a kink (abs, relu) makes the complex step invalid."""
        return all(FUNCTIONS[name].holomorphic for name in self.functions)

    @property
    def complex_ok(self) -> bool:
        """True when torch can evaluate the expression on complex tensors."""
        return all(FUNCTIONS[name].complex_ok for name in self.functions)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """Evaluate elementwise on a tensor of any real or complex dtype."""
        if self._torch_fn is None:
            # A constant function: tie it to x so autograd sees a (zero) dependence.
            return x * 0 + self._constant
        return self._torch_fn(x)

    def derivative(self, order: int = 1) -> sympy.Expr:
        """The exact derivative of the given order, as a sympy expression."""
        return _derivative(self.sympy, order)

    def latex(self) -> str:
        return _latex(self.sympy)

    def derivative_latex(self) -> str:
        return _latex(self.derivative())

    def kink_arguments(self) -> list[sympy.Expr]:
        """Arguments of abs/relu: where one is zero the function has no derivative."""
        found = self.sympy.atoms(sympy.Abs, sympy.Max)
        return [arg for a in found for arg in a.args if arg != 0]


#: x without assumptions, for typesetting only. sympy's printer splits a product into
#: numerator and denominator by asking whether each exponent is negative, which for the
#: real x the engine uses runs the assumptions system and simplify() on every nested exp:
#: the derivative of sigmoid 3 deep takes 2.4 s, 6 deep 21 s, 8 deep minutes; with a plain
#: x the same text takes 10-15 ms (8 deep) and 0.1 s (20 deep).
_PLAIN_X = sympy.Symbol("x")


def _latex(expr: sympy.Expr) -> str:
    return sympy.latex(expr.xreplace({X: _PLAIN_X}))


@lru_cache(maxsize=512)
def _derivative(expr: sympy.Expr, order: int) -> sympy.Expr:
    # One order at a time from the cached lower order: the third derivative reuses the
    # second instead of differentiating f three times over (high orders can be huge).
    if order <= 0:
        return expr
    return sympy.diff(_derivative(expr, order - 1), X)


def parse(text: str) -> Expression:
    """Parse and validate ``text``; raise :class:`ExpressionError` naming what is wrong.

    >>> parse("exp(x)/sqrt(sin(x)**3 + cos(x)**3)").text
    'exp(x)/sqrt(sin(x)**3 + cos(x)**3)'
    >>> try:
    ...     parse("x.__class__")
    ... except ExpressionError as err:
    ...     print(err)
    Attribute access such as 'x.__class__' is not allowed.
    """
    if not isinstance(text, str):
        raise ExpressionError("The expression must be text, such as 'sin(x)'.")
    return _parse_cached(text.strip())


@lru_cache(maxsize=256)
def _parse_cached(text: str) -> Expression:
    if not text:
        raise ExpressionError("The expression is empty; type a function of x such as 'sin(x)'.")
    if len(text) > LIMITS.expression_chars:
        raise ExpressionError(
            f"The expression is {len(text)} characters long; at most {LIMITS.expression_chars} are allowed."
        )
    tree = syntax_tree(text)
    validate(text, tree)
    built = build(text, tree.body)
    functions = frozenset(n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call))
    return Expression(text, built.sympy_expr, functions, built.torch_fn, built.constant)
