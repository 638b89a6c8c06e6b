"""From a validated syntax tree to both of an expression's forms: a torch function and a sympy expression.

Each node is built both ways at once (:class:`Built`); parts without x are
folded to constants, and exponents and constants are kept within their limits as they are built.

>>> from gradlab.numerics.expression_syntax import syntax_tree
>>> built = build("2*x", syntax_tree("2*x").body)
>>> built.sympy_expr, built.constant
(2*x, None)
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

import sympy
import torch

from gradlab.limits import LIMITS
from gradlab.numerics.expression_functions import CONSTANTS, FUNCTIONS, TorchFn, X
from gradlab.numerics.expression_syntax import ExpressionError, segment

__all__ = ["Built", "build"]


@dataclass(frozen=True)
class Built:
    """A sub-expression built both ways; ``constant`` holds its float when it has no x."""

    torch_fn: TorchFn | None
    sympy_expr: sympy.Expr
    constant: float | None = None


def build(text: str, node: ast.AST) -> Built:
    if isinstance(node, ast.Constant):
        return _literal(node.value)
    if isinstance(node, ast.Name):
        if node.id == "x":
            return Built(lambda t: t, X)
        value, symbol = CONSTANTS[node.id]
        return Built(None, symbol, value)
    if isinstance(node, ast.UnaryOp):
        inner = build(text, node.operand)
        if isinstance(node.op, ast.UAdd):
            return inner
        return _combine(text, node, lambda a: -a, lambda s: -s, inner)
    if isinstance(node, ast.BinOp):
        return _binary(text, node)
    spec = FUNCTIONS[node.func.id]
    return _combine(text, node, spec.torch_fn, spec.sympy_fn, build(text, node.args[0]))


def _literal(value: int | float) -> Built:
    # Decimal text is taken at its mathematical value: 0.1 means 1/10 to sympy.
    exact = sympy.Integer(value) if isinstance(value, int) else sympy.Rational(repr(value))
    return Built(None, exact, float(value))


def _binary(text: str, node: ast.BinOp) -> Built:
    left, right = build(text, node.left), build(text, node.right)
    op = type(node.op)
    if op is ast.Pow:
        _require_small_exponent(text, node, left, right)
    torch_ops = {
        ast.Add: lambda a, b: a + b,
        ast.Sub: lambda a, b: a - b,
        ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b,
        ast.Pow: _torch_pow,
    }
    sympy_ops = {
        ast.Add: lambda a, b: a + b,
        ast.Sub: lambda a, b: a - b,
        ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b,
        ast.Pow: lambda a, b: a**b,
    }
    return _combine(text, node, torch_ops[op], sympy_ops[op], left, right)


def _torch_pow(base, exponent):
    # An integral constant exponent stays an int so negative bases work (x**2 at x<0).
    if isinstance(exponent, float) and exponent.is_integer():
        exponent = int(exponent)
    return torch.pow(base, exponent)


def _require_small_exponent(text: str, node: ast.BinOp, base: Built, exponent: Built) -> None:
    if exponent.constant is not None and abs(exponent.constant) > LIMITS.exponent_magnitude:
        raise ExpressionError(
            f"The exponent in '{segment(text, node)}' is too large; exponents up to "
            f"{LIMITS.exponent_magnitude:g} in size are allowed."
        )
    if base.constant is not None and exponent.constant is not None and base.constant != 0:
        # Estimate the size before sympy computes it exactly (9**9**9 must not hang).
        magnitude = exponent.constant * math.log10(abs(base.constant))
        if magnitude > math.log10(LIMITS.constant_magnitude):
            raise ExpressionError(
                f"The constant '{segment(text, node)}' is too large (about 1e{magnitude:.0f}); "
                f"constants up to {LIMITS.constant_magnitude:g} are allowed."
            )


def _combine(text: str, node: ast.AST, torch_op, sympy_op, *parts: Built) -> Built:
    """Apply one operation to built parts, folding it to a constant when no part has x."""
    sympy_expr = _size_limited(sympy_op(*(p.sympy_expr for p in parts)))
    if all(p.constant is not None for p in parts):
        return Built(None, sympy_expr, _constant_value(text, node, sympy_expr))

    def torch_fn(t: torch.Tensor, parts=parts) -> torch.Tensor:
        return torch_op(*(p.constant if p.constant is not None else p.torch_fn(t) for p in parts))

    return Built(torch_fn, sympy_expr)


def _size_limited(expr: sympy.Expr) -> sympy.Expr:
    # Exact rationals may grow huge through repeated powers; past a few thousand
    # bits a 60-digit float is as good for a 50-digit reference and much cheaper.
    if isinstance(expr, sympy.Rational) and (expr.p.bit_length() + expr.q.bit_length()) > 4096:
        return sympy.Float(expr, 60)
    return expr


def _constant_value(text: str, node: ast.AST, expr: sympy.Expr) -> float:
    part = segment(text, node)
    # sympy floats keep huge exponents, so the size test happens before any float().
    real, imag = (sympy.N(expr, 20).as_real_imag() if expr.is_finite is not False else (sympy.nan, 0))
    if not (real.is_finite and imag.is_finite):
        raise ExpressionError(f"The constant part '{part}' is not a finite number (a division by zero?).")
    if abs(imag) > 1e-15 * max(1, abs(real)):
        raise ExpressionError(f"The constant part '{part}' is not a real number.")
    if abs(real) > LIMITS.constant_magnitude:
        raise ExpressionError(
            f"The constant part '{part}' is too large; constants up to {LIMITS.constant_magnitude:g} are allowed."
        )
    return float(real)
