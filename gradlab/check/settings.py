"""Built-in models and losses for the grad-check page and CLI, and ``run_check``.

A model maps an input tensor x to an output of the same shape; a loss
compares it elementwise with seeded ``randn`` targets. The function handed
to the check returns the *per-element* loss, and the check applies the
reduction (sum, mean, none), so the three reductions can be compared on one
problem.

- ``affine``: (x + 1) / 2, the float32 grad-check question;
- ``expression``: any elementwise function typed in the expression language;
- ``mlp``: a small tanh MLP over the last dimension, with seeded weights.

Data are drawn in float64 from the seed and rounded to the dtype, so float32
and float64 runs see the same numbers (up to rounding).

>>> s = CheckSettings(shape=(4, 3), dtype="float64", scheme="central", eps=1e-3)
>>> run_check(s).verdict
'pass'
>>> parse_shape("140x120")
(140, 120)
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Callable

import torch

from gradlab.check.engine import check_gradient
from gradlab.check.results import CheckResult
from gradlab.check.validation import (GRAD_OUTPUTS, MODES, REDUCTIONS, check_full_limit, check_samples, check_seed,
                                      check_step, choose)
from gradlab.errors import GradLabError
from gradlab.numerics.expressions import parse
from gradlab.limits import LIMITS, check_limit
from gradlab.numerics.dtypes import facts, resolve_tolerances
from gradlab.numerics.schemes import get_scheme, not_applicable_reason

__all__ = ["MODELS", "LOSSES", "CheckSettings", "Problem", "parse_shape", "build_problem", "run_check"]

MODELS = ("affine", "expression", "mlp")
LOSSES = ("mse", "l1")
MLP_HIDDEN = 16  # width of the MLP's hidden layer: small, well inside LIMITS.network_width
_MAX_DIMS = 4


@dataclass(frozen=True)
class CheckSettings:
    """Everything that defines a check, as plain values (hashable, cacheable)."""

    model: str = "affine"
    shape: tuple[int, ...] = (140, 120)
    loss: str = "mse"
    reduction: str = "sum"
    dtype: str = "float32"
    scheme: str = "central"
    eps: float | None = None  # None: the scheme's default step for the dtype
    mode: str = "blocks"  # covers every element; the page's question presets ask for "sampled"
    samples: int = 5  # elements (sampled) or directions (directional)
    seed: int = 0
    numeric_float64: bool = False
    expression: str = "sin(x)"
    grad_outputs: str = "ones"  # for reduction "none": ones or random
    rtol: float | None = None
    atol: float | None = None

    def __post_init__(self) -> None:
        """Every rule a check's settings must meet, checked once: a CheckSettings that
        exists can be run. Raises GradLabError (LimitError for a bound) with the fix."""
        choose("model", self.model, MODELS)
        choose("loss", self.loss, LOSSES)
        choose("reduction", self.reduction, REDUCTIONS)
        choose("mode", self.mode, MODES)
        choose("grad_outputs", self.grad_outputs, GRAD_OUTPUTS)
        object.__setattr__(self, "dtype", facts(self.dtype).name)
        object.__setattr__(self, "scheme", get_scheme(self.scheme).name)
        object.__setattr__(self, "shape", _valid_shape(self.shape))
        object.__setattr__(self, "eps", check_step(self.eps))
        check_samples(self.samples)
        check_seed(self.seed)
        resolve_tolerances(self.dtype, self.rtol, self.atol)  # names a bad rtol or atol
        if self.model == "expression":
            parse(self.expression)  # raises ExpressionError naming the bad part
        if self.mode == "full":  # the built-in models' output has the input's shape
            check_full_limit(self.numel, self.numel, self.scheme)
        reason = _complex_step_reason(self)
        if reason:
            raise GradLabError(reason)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def parse_shape(text: str) -> tuple[int, ...]:
    """'140x120', '140,120' or '140 × 120' -> (140, 120).

    >>> parse_shape("5")
    (5,)
    """
    parts = str(text).lower().replace("×", "x").replace(",", "x").replace("*", "x").split("x")
    try:
        dims = tuple(int(p.strip()) for p in parts)
    except ValueError:
        raise GradLabError(f"The shape {text!r} is not a list of sizes; write it like 140x120.") from None
    return _valid_shape(dims)


def _valid_shape(shape) -> tuple[int, ...]:
    dims = tuple(int(d) for d in shape)
    if not dims or len(dims) > _MAX_DIMS or any(d < 1 for d in dims):
        raise GradLabError(f"The shape must have 1 to {_MAX_DIMS} sizes, each at least 1; "
                           f"got {dims}. Write it like 140x120.")
    # Python ints: torch.Size.numel() overflows int64 and can wrap to 0 past the bound.
    check_limit("tensor elements", math.prod(dims), LIMITS.tensor_elements)
    return dims


# ------------------------------------------------------------------ building


@dataclass(frozen=True, eq=False)
class Problem:
    """A per-element loss function of x, the point x, and the same in float64."""

    fn: Callable[[torch.Tensor], torch.Tensor]
    x: torch.Tensor
    fn64: Callable[[torch.Tensor], torch.Tensor]


def _model(settings: CheckSettings, draw):
    if settings.model == "affine":
        return lambda x: (x + 1) / 2
    if settings.model == "expression":
        return parse(settings.expression)
    features = settings.shape[-1]
    w1 = draw(MLP_HIDDEN, features, scale=features**-0.5)
    b1 = draw(MLP_HIDDEN)
    w2 = draw(features, MLP_HIDDEN, scale=MLP_HIDDEN**-0.5)
    b2 = draw(features)
    return lambda x: torch.tanh(x @ w1.T + b1) @ w2.T + b2


def _loss(name: str) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    # (y - t)**2 rather than F.mse_loss: also holomorphic, so the complex step works.
    return (lambda y, t: (y - t) ** 2) if name == "mse" else (lambda y, t: (y - t).abs())


def _build(settings: CheckSettings, compute: torch.dtype):
    """(loss function, x) with every number drawn in float64, rounded to the
    settings' dtype, then held in ``compute``: the float64 twin computes the
    same function as the dtype's, only more precisely."""
    dtype = facts(settings.dtype).torch_dtype
    gen = torch.Generator().manual_seed(settings.seed)

    def draw(*size: int, scale: float = 1.0) -> torch.Tensor:
        values = torch.randn(*size, generator=gen, dtype=torch.float64) * scale
        return values.to(dtype).to(compute)

    x = draw(*settings.shape)
    target = draw(*settings.shape)
    model, loss = _model(settings, draw), _loss(settings.loss)
    return (lambda x: loss(model(x), target)), x


def build_problem(settings: CheckSettings) -> Problem:
    """The per-element loss in the settings' dtype, x in that dtype, and a float64 twin."""
    fn, x = _build(settings, facts(settings.dtype).torch_dtype)
    fn64, _ = _build(settings, torch.float64)
    return Problem(fn, x, fn64)


def _complex_step_reason(settings: CheckSettings) -> str | None:
    dtype = "float64" if settings.numeric_float64 else settings.dtype
    expression = parse(settings.expression) if settings.model == "expression" else None
    reason = not_applicable_reason(settings.scheme, dtype, expression)
    if reason is None and get_scheme(settings.scheme).complex_step and settings.loss == "l1":
        reason = "The complex step needs a holomorphic function; the l1 loss uses abs, which is not."
    return reason


def run_check(settings: CheckSettings, progress=None, taylor: bool = True,
              workers: int | None = None) -> CheckResult:
    """Build the settings' problem and check it; the page and the CLI both call this.

    ``workers``: threads for the finite differences (default LIMITS.check_workers;
    the page passes :data:`gradlab.ui.runtime.CHECK_WORKERS`). The results do not
    depend on it.
    """
    p = build_problem(settings)
    return check_gradient(
        p.fn, p.x, mode=settings.mode, samples=settings.samples, seed=settings.seed,
        scheme=settings.scheme, eps=settings.eps, rtol=settings.rtol, atol=settings.atol,
        reduction=settings.reduction, grad_outputs=settings.grad_outputs,
        numeric_float64=settings.numeric_float64, numeric_fn=p.fn64, taylor=taylor,
        progress=progress, workers=workers,
    )

