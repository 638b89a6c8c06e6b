"""The formulas the Round-off lab compares: built-in names, ``grad(<expr>)``, or an expression of x.

A formula is evaluated in a dtype (torch) and carries its exact value as a sympy
expression, which :mod:`gradlab.labs.roundoff.reference` evaluates to many digits.

>>> formula("autograd").sympy
-1/x**2
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch

from gradlab.errors import GradLabError
from gradlab.numerics.expressions import Expression, parse

__all__ = ["FormulaSpec", "BUILTIN_FORMULAS", "Formula", "formula"]


@dataclass(frozen=True)
class FormulaSpec:
    """A built-in formula: a short name, the text it stands for, and how it rounds."""

    name: str
    text: str
    label: str
    note: str


BUILTIN_FORMULAS: dict[str, FormulaSpec] = {
    spec.name: spec
    for spec in (
        FormulaSpec(
            "autograd", "grad(1/x)", "autograd of 1/x",
            "torch.autograd.grad of 1/x. PyTorch evaluates 1/x as reciprocal(x)*1, and "
            "reciprocal's backward is -grad*(result*result): the rounded r = fl(1/x) is "
            "squared and rounded again, so this is bit for bit -(1/x)*(1/x).",
        ),
        FormulaSpec(
            "-1/x**2", "-1/x**2", "-1/x**2",
            "Rounds x*x, then divides once: two roundings, each of the same size, so it stays "
            "within 1.5 ulp of the exact value.",
        ),
        FormulaSpec(
            "-(1/x)*(1/x)", "-(1/x)*(1/x)", "-(1/x)*(1/x)",
            "Rounds 1/x, then multiplies it by itself: the first rounding error is doubled by "
            "the square, so the bound is 2.5 ulp.",
        ),
    )
}

_GRAD = re.compile(r"^\s*grad\s*\((.*)\)\s*$", re.DOTALL)


@dataclass(frozen=True, eq=False)
class Formula:
    """A formula of x evaluated in a dtype, with its exact value as a sympy expression.

    >>> f = formula("autograd")
    >>> f.label, f.sympy
    ('autograd of 1/x', -1/x**2)
    >>> f.evaluate(torch.tensor([2.0])).tolist()
    [-0.25]
    """

    text: str
    label: str
    sympy: sympy.Expr
    note: str = ""
    _expression: Expression | None = field(default=None, repr=False)
    _differentiate: bool = field(default=False, repr=False)

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        """The formula at every element of ``x``, computed in ``x``'s dtype (detached)."""
        if not self._differentiate:
            return self._expression(x).detach()
        with torch.enable_grad():
            leaf = x.detach().clone().requires_grad_(True)
            # The sum's backward feeds 1 to every element, as loss.backward() did in the question.
            (grad,) = torch.autograd.grad(self._expression(leaf).sum(), leaf)
        return grad.detach()


def formula(text: str) -> Formula:
    """A built-in formula by name, ``grad(<expr>)`` for autograd of an expression, or an expression.

    >>> formula("log1p(x)").sympy
    log(x + 1)
    >>> formula("grad(sin(x))").sympy
    cos(x)
    """
    if not isinstance(text, str) or not text.strip():
        raise GradLabError("A formula is needed: type an expression of x such as '-1/x**2', or 'autograd'.")
    text = text.strip()
    spec = BUILTIN_FORMULAS.get(text)
    source = spec.text if spec else text
    match = _GRAD.match(source)
    if match:
        inner = parse(match.group(1))
        label = spec.label if spec else f"autograd of {inner.text}"
        return Formula(text, label, inner.derivative(), spec.note if spec else "", inner, True)
    expression = parse(source)
    return Formula(text, spec.label if spec else expression.text, expression.sympy,
                   spec.note if spec else "", expression, False)
