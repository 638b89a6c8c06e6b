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
"""

from __future__ import annotations

import ast
import math
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import mpmath
import sympy
import torch

from gradlab.errors import GradLabError
from gradlab.limits import LIMITS
from gradlab.numerics.mp_precision import working_precision

__all__ = ["ExpressionError", "Expression", "FunctionSpec", "FUNCTIONS", "CONSTANTS", "X", "parse"]

X = sympy.Symbol("x", real=True)
TorchFn = Callable[[torch.Tensor], torch.Tensor]


class ExpressionError(GradLabError):
    """Text the expression language refuses; the message names the offending part."""


# ---------------------------------------------------------------- the whitelist


class cbrt(sympy.Function):
    """Real cube root: defined for negative x too, unlike sympy's principal x**(1/3)."""

    def fdiff(self, argindex=1):
        return 1 / (3 * cbrt(self.args[0]) ** 2)

    def _eval_evalf(self, prec):
        value = self.args[0].evalf(prec)
        if not value.is_real:
            return None
        with working_precision(prec):
            v = mpmath.mpf(value)  # mpmath.cbrt is the principal (complex) root for v < 0
            return sympy.Float(mpmath.cbrt(v) if v >= 0 else -mpmath.cbrt(-v), precision=prec)

    def _latex(self, printer, exp=None):
        # sympy passes exp= when the root is raised to a power (its derivative is 1/(3*cbrt(x)**2)).
        root = r"\sqrt[3]{%s}" % printer._print(self.args[0])
        return root if exp is None else r"\left(%s\right)^{%s}" % (root, exp)


def _complex_cbrt(z: torch.Tensor) -> torch.Tensor:
    # The real cube root continued holomorphically off the real axis.
    return torch.where(z.real < 0, -((-z) ** (1 / 3)), z ** (1 / 3))


def _torch_cbrt(x: torch.Tensor) -> torch.Tensor:
    if x.is_complex():
        return _complex_cbrt(x)
    return torch.sign(x) * torch.abs(x) ** (1 / 3)


def _torch_softplus(x: torch.Tensor) -> torch.Tensor:
    # log(1 + e^x) = logaddexp(x, 0), accurate for every x; F.softplus switches to
    # f(x) = x above 20, which is 2500 ulp off in float64 at 25 (and f' = 1 exactly).
    # logaddexp has no complex kernel; there log1p(exp(z)) is the same function.
    if x.is_complex():
        return torch.log1p(torch.exp(x))
    return torch.logaddexp(x, torch.zeros_like(x))


@dataclass(frozen=True)
class FunctionSpec:
    """One whitelisted function: how torch and sympy compute it."""

    name: str
    torch_fn: TorchFn
    sympy_fn: Callable[[sympy.Expr], sympy.Expr]
    holomorphic: bool = True  # analytic near the real axis, so a complex step is valid
    complex_ok: bool = True  # torch can evaluate it on complex tensors


def _spec(name, torch_fn, sympy_fn, **kw) -> tuple[str, FunctionSpec]:
    return name, FunctionSpec(name, torch_fn, sympy_fn, **kw)


FUNCTIONS: dict[str, FunctionSpec] = dict(
    sorted(
        [
            _spec("sin", torch.sin, sympy.sin),
            _spec("cos", torch.cos, sympy.cos),
            _spec("tan", torch.tan, sympy.tan),
            _spec("asin", torch.asin, sympy.asin),
            _spec("acos", torch.acos, sympy.acos),
            _spec("atan", torch.atan, sympy.atan),
            _spec("sinh", torch.sinh, sympy.sinh),
            _spec("cosh", torch.cosh, sympy.cosh),
            _spec("tanh", torch.tanh, sympy.tanh),
            _spec("asinh", torch.asinh, sympy.asinh),
            _spec("acosh", torch.acosh, sympy.acosh),
            _spec("atanh", torch.atanh, sympy.atanh),
            _spec("exp", torch.exp, sympy.exp),
            _spec("expm1", torch.expm1, lambda a: sympy.exp(a) - 1),
            _spec("log", torch.log, sympy.log),
            _spec("log1p", torch.log1p, lambda a: sympy.log(1 + a)),
            _spec("log2", torch.log2, lambda a: sympy.log(a) / sympy.log(2)),
            _spec("log10", torch.log10, lambda a: sympy.log(a) / sympy.log(10)),
            _spec("sqrt", torch.sqrt, sympy.sqrt),
            _spec("cbrt", _torch_cbrt, cbrt),
            _spec("abs", torch.abs, sympy.Abs, holomorphic=False),
            _spec("sigmoid", torch.sigmoid, lambda a: 1 / (1 + sympy.exp(-a))),
            _spec("softplus", _torch_softplus, lambda a: sympy.log(1 + sympy.exp(a))),
            _spec("relu", torch.relu, lambda a: sympy.Max(0, a), holomorphic=False, complex_ok=False),
            _spec("erf", torch.erf, sympy.erf, complex_ok=False),
        ],
        key=lambda item: item[0],
    )
)

# Functions with a kink where their argument is zero: no derivative there.
KINKED = frozenset({"abs", "relu"})

CONSTANTS: dict[str, tuple[float, sympy.Expr]] = {"pi": (math.pi, sympy.pi), "e": (math.e, sympy.E)}

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_HINTS = {
    ast.BitXor: "use ** for powers, not ^",
    ast.FloorDiv: "use / for division",
    ast.Mod: "the % operator is not part of the language",
    ast.MatMult: "the @ operator is not part of the language",
}


# ---------------------------------------------------------------- validation


def _segment(text: str, node: ast.AST) -> str:
    part = ast.get_source_segment(text, node) or type(node).__name__
    return part if len(part) <= 40 else part[:37] + "..."


def _validate(text: str, tree: ast.Expression) -> None:
    """Walk the tree once: refuse anything outside the whitelist, and enforce the size limits."""
    count = 0

    def walk(node: ast.AST, depth: int) -> None:
        nonlocal count
        count += 1
        if count > LIMITS.expression_nodes:
            raise ExpressionError(
                f"The expression has more than {LIMITS.expression_nodes} parts; please simplify it."
            )
        if depth > LIMITS.expression_depth:
            raise ExpressionError(
                f"The expression is nested more than {LIMITS.expression_depth} levels deep "
                f"(at '{_segment(text, node)}'); please simplify it."
            )
        for child in _children(text, node):
            walk(child, depth + 1)

    walk(tree.body, 1)


def _children(text: str, node: ast.AST) -> list[ast.AST]:
    """The sub-expressions of an allowed node; raise for a node that is not allowed."""
    if isinstance(node, ast.Constant):
        _check_literal(text, node)
        return []
    if isinstance(node, ast.Name):
        if node.id != "x" and node.id not in CONSTANTS:
            raise ExpressionError(_unknown_name_message(node.id))
        return []
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise ExpressionError(f"The operator in '{_segment(text, node)}' is not allowed; use + - * / **.")
        return [node.operand]
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            hint = _HINTS.get(type(node.op), "only + - * / ** are allowed")
            raise ExpressionError(f"The operator in '{_segment(text, node)}' is not allowed: {hint}.")
        return [node.left, node.right]
    if isinstance(node, ast.Call):
        _check_call(text, node)
        return [node.args[0]]
    raise ExpressionError(_refusal_message(text, node))


def _check_literal(text: str, node: ast.Constant) -> None:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExpressionError(f"Only real numbers can be written literally; '{_segment(text, node)}' is not one.")
    if not math.isfinite(value) or abs(value) > LIMITS.literal_magnitude:
        raise ExpressionError(
            f"The number '{_segment(text, node)}' is too large; numbers up to "
            f"{LIMITS.literal_magnitude:g} in size are allowed."
        )


def _check_call(text: str, node: ast.Call) -> None:
    if not isinstance(node.func, ast.Name):
        raise ExpressionError(
            f"Only plain function calls such as sin(x) are allowed; '{_segment(text, node.func)}' is not one."
        )
    name = node.func.id
    if name not in FUNCTIONS:
        raise ExpressionError(_unknown_function_message(name))
    if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
        raise ExpressionError(f"The function {name} takes exactly one argument, as in {name}(x).")


def _unknown_function_message(name: str) -> str:
    return f"Unknown function '{name}'. Known functions: {', '.join(FUNCTIONS)}."


def _unknown_name_message(name: str) -> str:
    if name in FUNCTIONS:
        return f"'{name}' is a function: call it, as in {name}(x)."
    return f"Unknown name '{name}'. The variable is x and the constants are pi and e."


def _refusal_message(text: str, node: ast.AST) -> str:
    part = _segment(text, node)
    if isinstance(node, ast.Attribute):
        return f"Attribute access such as '{part}' is not allowed."
    if isinstance(node, ast.Compare):
        return f"Comparisons such as '{part}' are not allowed; write a function of x."
    kind = type(node).__name__
    return f"'{part}' ({kind}) is not part of the expression language; use numbers, x, pi, e, + - * / ** and functions."


# ---------------------------------------------------------------- building


@dataclass(frozen=True)
class _Built:
    """A sub-expression built both ways; ``constant`` holds its float when it has no x."""

    torch_fn: TorchFn | None
    sympy_expr: sympy.Expr
    constant: float | None = None


def _build(text: str, node: ast.AST) -> _Built:
    if isinstance(node, ast.Constant):
        return _literal(node.value)
    if isinstance(node, ast.Name):
        if node.id == "x":
            return _Built(lambda t: t, X)
        value, symbol = CONSTANTS[node.id]
        return _Built(None, symbol, value)
    if isinstance(node, ast.UnaryOp):
        inner = _build(text, node.operand)
        if isinstance(node.op, ast.UAdd):
            return inner
        return _combine(text, node, lambda a: -a, lambda s: -s, inner)
    if isinstance(node, ast.BinOp):
        return _binary(text, node)
    spec = FUNCTIONS[node.func.id]
    return _combine(text, node, spec.torch_fn, spec.sympy_fn, _build(text, node.args[0]))


def _literal(value: int | float) -> _Built:
    # Decimal text is taken at its mathematical value: 0.1 means 1/10 to sympy.
    exact = sympy.Integer(value) if isinstance(value, int) else sympy.Rational(repr(value))
    return _Built(None, exact, float(value))


def _binary(text: str, node: ast.BinOp) -> _Built:
    left, right = _build(text, node.left), _build(text, node.right)
    op = type(node.op)
    if op is ast.Pow:
        _check_exponent(text, node, left, right)
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


def _check_exponent(text: str, node: ast.BinOp, base: _Built, exponent: _Built) -> None:
    if exponent.constant is not None and abs(exponent.constant) > LIMITS.exponent_magnitude:
        raise ExpressionError(
            f"The exponent in '{_segment(text, node)}' is too large; exponents up to "
            f"{LIMITS.exponent_magnitude:g} in size are allowed."
        )
    if base.constant is not None and exponent.constant is not None and base.constant != 0:
        # Estimate the size before sympy computes it exactly (9**9**9 must not hang).
        magnitude = exponent.constant * math.log10(abs(base.constant))
        if magnitude > math.log10(LIMITS.constant_magnitude):
            raise ExpressionError(
                f"The constant '{_segment(text, node)}' is too large (about 1e{magnitude:.0f}); "
                f"constants up to {LIMITS.constant_magnitude:g} are allowed."
            )


def _combine(text: str, node: ast.AST, torch_op, sympy_op, *parts: _Built) -> _Built:
    """Apply one operation to built parts, folding it to a constant when no part has x."""
    sympy_expr = _bounded_size(sympy_op(*(p.sympy_expr for p in parts)))
    if all(p.constant is not None for p in parts):
        return _Built(None, sympy_expr, _constant_value(text, node, sympy_expr))

    def torch_fn(t: torch.Tensor, parts=parts) -> torch.Tensor:
        return torch_op(*(p.constant if p.constant is not None else p.torch_fn(t) for p in parts))

    return _Built(torch_fn, sympy_expr)


def _bounded_size(expr: sympy.Expr) -> sympy.Expr:
    # Exact rationals may grow huge through repeated powers; past a few thousand
    # bits a 60-digit float is as good for a 50-digit reference and much cheaper.
    if isinstance(expr, sympy.Rational) and (expr.p.bit_length() + expr.q.bit_length()) > 4096:
        return sympy.Float(expr, 60)
    return expr


def _constant_value(text: str, node: ast.AST, expr: sympy.Expr) -> float:
    part = _segment(text, node)
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


# ---------------------------------------------------------------- the result


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
        return sympy.latex(self.sympy)

    def derivative_latex(self) -> str:
        return sympy.latex(self.derivative())

    def kink_arguments(self) -> list[sympy.Expr]:
        """Arguments of abs/relu: where one is zero the function has no derivative."""
        found = self.sympy.atoms(sympy.Abs, sympy.Max)
        return [arg for a in found for arg in a.args if arg != 0]


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
    tree = _syntax_tree(text)
    _validate(text, tree)
    built = _build(text, tree.body)
    functions = frozenset(n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call))
    return Expression(text, built.sympy_expr, functions, built.torch_fn, built.constant)


def _syntax_tree(text: str) -> ast.Expression:
    try:
        # A visitor's text must not write to the server log: Python warns about odd
        # string escapes ('\\)') while parsing, and string literals are refused anyway.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
            return ast.parse(text, mode="eval")
    except SyntaxError as err:
        where = f" at character {err.offset}" if err.offset else ""
        raise ExpressionError(f"The expression is not valid syntax{where}: {err.msg}.") from None
    except (ValueError, MemoryError, RecursionError):
        raise ExpressionError("The expression could not be read; check it for stray characters.") from None
