"""What the expression language knows: the variable x, the whitelisted functions and the constants.

Each function is one row of :data:`FUNCTIONS`: how torch computes it (every real
and complex dtype), how sympy writes it (for exact derivatives), and whether a
complex step is valid through it. Adding a function to the language is one row here.

>>> FUNCTIONS["sin"].holomorphic, FUNCTIONS["abs"].holomorphic
(True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import mpmath
import sympy
import torch

from gradlab.numerics.mp_precision import working_precision

__all__ = ["X", "TorchFn", "cbrt", "FunctionSpec", "FUNCTIONS", "KINKED", "CONSTANTS"]

X = sympy.Symbol("x", real=True)
TorchFn = Callable[[torch.Tensor], torch.Tensor]


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
