"""The summed loss, term by term: how a sum of many squared errors is rounded, and what that
does to a finite difference of it.

Seed 001's loss is the sum of 16,800 squared errors in float32. Summed in the
dtype, each addition rounds to the grid of the running total, so the result
depends on the order: a naive left-to-right loop, a pairwise tree, what
``torch.sum`` does (blocks and vector lanes), Kahan–Neumaier compensation,
or float64. All are measured against the exact sum of the same terms (a
rational number: every float is one). Two consequences for a gradient check:
a change of one term smaller than about half an ulp of L does not move the
rounded sum at all, and a finite difference of L can only take values that are
multiples of ``ulp(L) / h`` (its *quantum*) — at seed 001's h = 1e-3 about 2,
while each gradient element is about 1.

>>> r = summed_loss(SummedLossSettings(shape=(4, 5)))
>>> r.exact_float == float(sum(Fraction(float(t)) for t in r.terms))
True
>>> r.row("float64").error_ulps == 0.0  # 20 float32 terms: float64 holds their sum exactly
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np
import torch

from gradlab.check.settings import CheckSettings, build_problem
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS, check_limit
from gradlab.numerics.dtypes import facts
from gradlab.numerics.emulation import round_to_bfloat16
from gradlab.numerics.exact_sum import exact_sum
from gradlab.numerics.ulp import ulp

__all__ = ["SumMethod", "SUM_METHODS", "SummedLossSettings", "SumRow", "SummedLoss", "summed_loss",
           "sequential_sum", "pairwise_sum", "neumaier_sum"]


# ------------------------------------------------------------------ the summation methods


def sequential_sum(terms: torch.Tensor) -> float:
    """Left to right, the running total rounded to the terms' dtype after every addition.

    >>> sequential_sum(torch.tensor([2.0 ** 24, 1.0, 1.0], dtype=torch.float32))  # each 1 is lost
    16777216.0
    """
    if terms.dtype == torch.bfloat16:  # numpy has no bfloat16: round each partial sum by hand
        total = 0.0
        for t in terms.tolist():
            total = round_to_bfloat16(total + t)
        return total
    return float(np.add.accumulate(terms.numpy())[-1]) if terms.numel() else 0.0


def pairwise_sum(terms: torch.Tensor) -> float:
    """A balanced tree: neighbours added in pairs, level by level, each sum rounded to the dtype.

    >>> pairwise_sum(torch.tensor([2.0 ** 24, 0.0, 1.0, 1.0], dtype=torch.float32))  # 1 + 1 meet first
    16777218.0
    """
    level = terms.clone()
    while level.numel() > 1:
        if level.numel() % 2:
            level = torch.cat([level, level.new_zeros(1)])
        level = level[0::2] + level[1::2]
    return float(level[0]) if level.numel() else 0.0


def neumaier_sum(terms: torch.Tensor) -> float:
    """Kahan's compensated sum with Neumaier's fix, every operation in the terms' dtype.

    >>> neumaier_sum(torch.tensor([2.0 ** 24, 1.0, 1.0], dtype=torch.float32))
    16777218.0
    """
    if terms.dtype == torch.bfloat16:  # numpy has no bfloat16: round every operation by hand
        return _neumaier(terms.tolist(), 0.0, round_to_bfloat16)
    values = terms.numpy()
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow shows as inf in the result
        return float(_neumaier(values, values[0] * 0 if len(values) else 0.0, lambda v: v))


def _neumaier(values, zero, rounded: Callable[[float], float]) -> float:
    """The compensated loop; ``rounded`` rounds each operation's result to the dtype (numpy's
    scalars already have: identity)."""
    total = carry = zero
    for t in values:
        s = rounded(total + t)
        lost = rounded(rounded(total - s) + t) if abs(total) >= abs(t) else rounded(rounded(t - s) + total)
        carry = rounded(carry + lost)
        total = s
    return rounded(total + carry)


@dataclass(frozen=True)
class SumMethod:
    """One way of summing: how, its label, and whether it works in the terms' dtype."""

    name: str
    label: str
    total: Callable[[torch.Tensor], float]
    in_dtype: bool  # False: float64 (its rounding is not the dtype's)
    help: str


SUM_METHODS: tuple[SumMethod, ...] = (
    SumMethod("sequential", "naive loop", sequential_sum, True,
              "s = s + e_i for i = 1..n: every addition rounds to the grid at |s|, which grows."),
    SumMethod("pairwise", "pairwise tree", pairwise_sum, True,
              "Neighbours in pairs, level by level: each term meets partial sums of similar size."),
    SumMethod("torch.sum", "torch.sum", lambda t: float(t.sum()), True,
              "What the loss does: torch's CPU reduction (blocks and vector lanes)."),
    SumMethod("neumaier", "Kahan-Neumaier", neumaier_sum, True,
              "A second running variable catches what each addition rounds away and adds it back."),
    SumMethod("float64", "float64", lambda t: float(t.to(torch.float64).sum()), False,
              "The same terms summed in float64: 29 more bits than float32."),
)


# ------------------------------------------------------------------ the lab


@dataclass(frozen=True)
class SummedLossSettings:
    """Seed 001's loss by default: the affine model, mse, 140 x 120 elements, float32, h = 1e-3."""

    shape: tuple[int, ...] = (140, 120)
    dtype: str = "float32"
    reduction: str = "sum"
    loss: str = "mse"
    seed: int = 0
    h: float = 1e-3

    def __post_init__(self) -> None:
        CheckSettings(shape=self.shape, dtype=self.dtype, reduction=self.reduction, loss=self.loss,
                      seed=self.seed)  # the check's own validation of each value
        check_limit("summed terms", math.prod(self.shape), LIMITS.summed_terms)
        if self.reduction == "none":
            raise GradLabError("The summed loss needs reduction 'sum' or 'mean': 'none' sums nothing.")
        if not (math.isfinite(self.h) and self.h > 0):
            raise GradLabError(f"The step h must be a positive finite number; got {self.h!r}.")


@dataclass(frozen=True)
class SumRow:
    """One method's loss, its error, and the smallest one-term change that moves it."""

    method: str
    label: str
    value: float
    error: float  # value - exact
    error_ulps: float  # in ulps of the exact L in the dtype
    threshold: float  # smallest increase of the chosen term that changes the value (NaN: not searched)


@dataclass(frozen=True)
class SummedLoss:
    settings: SummedLossSettings
    terms: torch.Tensor  # the per-element losses in the dtype (flat)
    exact: Fraction  # the exact sum (or mean) of the terms
    rows: tuple[SumRow, ...]
    ulp_loss: float  # ulp of the exact L in the dtype
    quantum: float  # ulp(L) / h: the spacing of a forward difference's values
    term_index: int  # the term the thresholds move (the largest)
    gradient_size: float  # median |dL/dx_i|: what the quantum compares with

    @property
    def exact_float(self) -> float:
        return float(self.exact)

    @property
    def overflows(self) -> bool:
        """The exact loss lies beyond the dtype's largest finite value: the dtype cannot hold L."""
        return abs(self.exact_float) > facts(self.settings.dtype).max

    @property
    def overflowed_rows(self) -> tuple[SumRow, ...]:
        """The methods whose result is inf or NaN (a running sum passed the dtype's largest value)."""
        return tuple(r for r in self.rows if not math.isfinite(r.value))

    def row(self, method: str) -> SumRow:
        return next(r for r in self.rows if r.method == method)


def summed_loss(settings: SummedLossSettings) -> SummedLoss:
    """Every method's sum of the settings' loss terms against the exact sum (module docstring)."""
    problem = build_problem(CheckSettings(shape=settings.shape, dtype=settings.dtype, loss=settings.loss,
                                          reduction=settings.reduction, seed=settings.seed))
    x = problem.x.clone().requires_grad_(True)
    terms = problem.fn(x)
    n = terms.numel()
    scale = 1.0 / n if settings.reduction == "mean" else 1.0
    loss = terms.sum() * scale
    grad = torch.autograd.grad(loss, x)[0]
    terms = terms.detach().reshape(-1)
    exact = exact_sum(terms.double().numpy())
    if settings.reduction == "mean":
        exact /= n
    unit = ulp(float(exact), settings.dtype)
    j = int(terms.abs().argmax())
    rows = tuple(_row(m, terms, exact, unit, j, settings.reduction) for m in SUM_METHODS)
    return SummedLoss(settings, terms, exact, rows, unit, unit / settings.h, j,
                      float(grad.abs().median()))


def _row(m: SumMethod, terms, exact: Fraction, unit: float, j: int, reduction: str) -> SumRow:
    value = _reduced(m, terms, reduction)
    if not math.isfinite(value):  # a sum kept in a narrow dtype overflowed: no term can move it back
        return SumRow(m.name, m.label, value, value, value, math.nan)
    error = float(Fraction(value) - exact)
    # The compensated loop is slow in Python and moves at the smallest changes anyway: not searched.
    searched = m.total is not neumaier_sum and terms.dtype != torch.bfloat16
    threshold = _threshold(m, terms, j, reduction) if searched else math.nan
    return SumRow(m.name, m.label, value, error, error / unit, threshold)


def _reduced(m: SumMethod, terms: torch.Tensor, reduction: str) -> float:
    total = m.total(terms)
    if reduction == "sum":
        return total
    dtype = torch.float64 if not m.in_dtype else terms.dtype
    return float(torch.tensor(total, dtype=dtype) / terms.numel())


def _threshold(m: SumMethod, terms: torch.Tensor, j: int, reduction: str) -> float:
    """The smallest increase of term j (in whole ulps of it, as the dtype can hold) that changes
    the method's result: a bisection over the number of ulps."""
    base = _reduced(m, terms, reduction)
    spacing = ulp(float(terms[j]), facts(terms.dtype).name)

    original = float(terms[j])

    def moves(k: int) -> bool:
        # In place and put back: a fresh 200,000-term copy per probe cost more than the sum.
        terms[j] = original + k * spacing
        try:
            return _reduced(m, terms, reduction) != base
        finally:
            terms[j] = original

    hi = 1
    while not moves(hi):
        hi *= 2
        if hi > 2 ** 40:
            return math.inf
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if moves(mid) else (mid, hi)
    return float(terms[j].to(torch.float64) + hi * spacing) - float(terms[j])
