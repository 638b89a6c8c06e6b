"""The summed loss, term by term: how a sum of many squared errors is rounded, and what that
does to a finite difference of it.

The float32 grad check question's loss is the sum of 16,800 squared errors in float32. Summed in the
dtype, each addition rounds to the grid of the running total, so the result
depends on the order: a naive left-to-right loop, a pairwise tree, what
``torch.sum`` does (blocks and vector lanes), Kahan–Neumaier compensation,
or float64. All are measured against the exact sum of the same terms (a
rational number: every float is one). Two consequences for a gradient check:
a change of one term smaller than about half an ulp of L does not move the
rounded sum at all, and a finite difference of L can only take values that are
multiples of ``ulp(L) / h`` (its *quantum*) — at that question's h = 1e-3 about 2,
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

from gradlab.check import build_model_loss, CheckSettings
from gradlab.errors import GradLabError
from gradlab.labs.summed.compensated import neumaier_resume, neumaier_sum
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import facts
from gradlab.numerics.emulation import round_to_bfloat16, round_to_dtype
from gradlab.numerics.exact_sum import exact_sum
from gradlab.numerics.ulp import ulp

__all__ = ["SumMethod", "SUM_METHODS", "NO_THRESHOLD", "SummedLossSettings", "SumRow", "SummedLoss",
           "summed_loss", "sequential_sum", "pairwise_sum", "neumaier_sum"]


# ------------------------------------------------------------------ the summation methods


def sequential_sum(terms: torch.Tensor) -> float:
    """Left to right, the running total rounded to the terms' dtype after every addition.

    >>> sequential_sum(torch.tensor([2.0 ** 24, 1.0, 1.0], dtype=torch.float32))  # each 1 is lost
    16777216.0
    """
    return _sequential_from(0.0, terms)


def _sequential_from(total: float, terms: torch.Tensor) -> float:
    """:func:`sequential_sum` continued from a running ``total`` (a number of the dtype)."""
    if terms.dtype == torch.bfloat16:  # numpy has no bfloat16: round each partial sum by hand
        for t in terms.tolist():
            total = round_to_bfloat16(total + t)
        return total
    values = terms.numpy()
    if not len(values):
        return float(total)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow shows as inf in the result
        return float(np.add.accumulate(np.concatenate([np.asarray([total], dtype=values.dtype), values]))[-1])


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


# What a threshold search calls once per trial value of term j: the method's total with that
# value in place. A loop resumes from its state before j, computed once, and stops as soon as
# its state meets the unchanged run's again (from there on both runs are the same): a sum that
# has stalled (bfloat16's, float16's) swallows most trial changes within a few terms.


def _sequential_resume(terms: torch.Tensor, j: int) -> Callable[[float], float]:
    before, rest = _sequential_from(0.0, terms[:j]), terms[j + 1:]
    if terms.dtype != torch.bfloat16:  # numpy's accumulate: the whole rest, in C, at once
        as_value = terms.numpy().dtype.type
        return lambda value: _sequential_from(float(as_value(before + value)), rest)
    values, path, total = rest.tolist(), [], before
    for t in terms[j:].tolist():
        total = round_to_bfloat16(total + t)
        path.append(total)

    def with_value(value: float) -> float:
        total = round_to_bfloat16(before + value)
        for t, was in zip(values, path):
            if total == was:
                return path[-1]
            total = round_to_bfloat16(total + t)
        return total

    return with_value


def _pairwise_resume(terms: torch.Tensor, j: int) -> Callable[[float], float]:
    """Only the sums on term j's path to the root change: one addition per level."""
    levels = [terms]
    while levels[-1].numel() > 1:
        level = levels[-1]
        if level.numel() % 2:
            level = torch.cat([level, level.new_zeros(1)])
        levels.append(level[0::2] + level[1::2])

    def with_value(value: float) -> float:
        node, i = torch.tensor(value, dtype=terms.dtype), j
        for level in levels[:-1]:
            sibling = level[i ^ 1] if (i ^ 1) < level.numel() else level.new_zeros(())
            node, i = (node + sibling if i % 2 == 0 else sibling + node), i // 2
        return float(node)

    return with_value


@dataclass(frozen=True)
class SumMethod:
    """One way of summing: how, its label, and whether it works in the terms' dtype."""

    name: str
    label: str
    total: Callable[[torch.Tensor], float]
    in_dtype: bool  # False: float64 (its rounding is not the dtype's)
    help: str
    # (terms, j) -> (value of term j -> total): a loop resumed at j; None: the whole sum again
    resume: Callable[[torch.Tensor, int], Callable[[float], float]] | None = None


SUM_METHODS: tuple[SumMethod, ...] = (
    SumMethod("sequential", "naive loop", sequential_sum, True,
              "s = s + e_i for i = 1..n: every addition rounds to the grid at |s|, which grows.",
              _sequential_resume),
    SumMethod("pairwise", "pairwise tree", pairwise_sum, True,
              "Neighbours in pairs, level by level: each term meets partial sums of similar size.",
              _pairwise_resume),
    SumMethod("torch.sum", "torch.sum", lambda t: float(t.sum()), True,
              "What the loss does: torch's CPU reduction (blocks and vector lanes)."),
    SumMethod("neumaier", "Kahan-Neumaier", neumaier_sum, True,
              "A second running variable catches what each addition rounds away and adds it back.",
              neumaier_resume),
    SumMethod("float64", "float64", lambda t: float(t.to(torch.float64).sum()), False,
              "The same terms summed in float64: 29 more bits than float32."),
)

#: Why a method has no threshold (SumRow.threshold_reason): its key, and the words to show.
NO_THRESHOLD: dict[str, str] = {
    "overflowed": "the sum is inf or NaN: no change of one term brings it back",
    "out_of_range": "no increase of the term that the dtype can hold changes the sum",
}


# ------------------------------------------------------------------ the lab


@dataclass(frozen=True)
class SummedLossSettings:
    """The float32 MSE-sum check question's loss by default: the affine model, mse, 140 x 120
    elements, float32, h = 1e-3."""

    shape: tuple[int, ...] = (140, 120)
    dtype: str = "float32"
    reduction: str = "sum"
    loss: str = "mse"
    seed: int = 0
    h: float = 1e-3

    def __post_init__(self) -> None:
        CheckSettings(shape=self.shape, dtype=self.dtype, reduction=self.reduction, loss=self.loss,
                      seed=self.seed)  # the check's own validation of each value
        within_limit("summed terms", math.prod(self.shape), LIMITS.summed_terms)
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
    threshold: float  # smallest increase of the largest term that changes the value (NaN: none)
    threshold_reason: str | None = None  # why there is none: a key of NO_THRESHOLD


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
    problem = build_model_loss(CheckSettings(shape=settings.shape, dtype=settings.dtype, loss=settings.loss,
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
    value = _reduced(m, m.total(terms), terms, reduction)
    if not math.isfinite(value):  # a sum kept in a narrow dtype overflowed: no term can move it back
        return SumRow(m.name, m.label, value, value, value, math.nan, "overflowed")
    error = float(Fraction(value) - exact)
    threshold = _threshold(m, terms, j, reduction, value, exact)
    return SumRow(m.name, m.label, value, error, error / unit, threshold,
                  None if math.isfinite(threshold) else "out_of_range")


def _reduced(m: SumMethod, total: float, terms: torch.Tensor, reduction: str) -> float:
    """The method's total as the loss: itself (sum), or divided by n in the method's dtype (mean)."""
    if reduction == "sum":
        return total
    dtype = torch.float64 if not m.in_dtype else terms.dtype
    return float(torch.tensor(total, dtype=dtype) / terms.numel())


def _threshold(m: SumMethod, terms: torch.Tensor, j: int, reduction: str, base: float,
               exact: Fraction | None = None) -> float:
    """The smallest increase of term j (a whole number of its ulps, the term kept a number of the
    dtype) that changes the method's result ``base``; NaN when no finite value of the term does.

    Galloping from a first guess (what a correctly rounded sum needs, or half an ulp of the
    result, in ulps of the term), then bisection: a handful to a few dozen trials, each resuming
    at j (:attr:`SumMethod.resume`). Bisection finds the
    smallest increase when a larger one never moves the result back, as in a rounded sum
    (rounding and adding are monotone); Neumaier's is checked increase by increase on small sums
    in tests/test_summed_loss.py."""
    name, n = facts(terms.dtype).name, terms.numel()
    original = float(terms[j])
    spacing = ulp(original, name)
    total_with = m.resume(terms, j) if m.resume is not None else _replaced(m.total, terms, j)

    def held(k: int) -> float:
        return round_to_dtype(original + k * spacing, name)

    def moves(k: int) -> bool:
        return _reduced(m, total_with(held(k)), terms, reduction) != base

    grid = name if m.in_dtype else "float64"
    guess = ulp(base, grid) * (n if reduction == "mean" else 1) / 2 / spacing
    if exact is not None and reduction == "sum" and m.in_dtype and base > 0:
        # The increase a correctly rounded sum needs (the exact sum past the midpoint above
        # base): a method that rounds nearly so (Neumaier, pairwise) is found a few trials away.
        guess = float((Fraction(base) + Fraction(ulp(base, grid)) / 2 - exact) / Fraction(spacing)) + 1
    lo, hi, step = 0, max(1, math.floor(guess)), 1  # moves(0) is False: no change at all
    if moves(hi):  # gallop down from the guess to a k that does not move it ...
        while hi - step > 0 and moves(hi - step):
            hi, step = hi - step, 2 * step
        lo = max(0, hi - step)
    else:  # ... or up to one that does
        lo = hi
        while True:
            hi = lo + step
            if not math.isfinite(held(hi)):
                return math.nan
            if moves(hi):
                break
            lo, step = hi, 2 * step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if moves(mid) else (mid, hi)
    return held(hi) - original


def _replaced(total: Callable[[torch.Tensor], float], terms: torch.Tensor, j: int) -> Callable[[float], float]:
    """``total`` of the terms with term j set to a value, in place and put back (a fresh
    200,000-term copy per trial cost more than the sum)."""
    original = terms[j].clone()

    def with_value(value: float) -> float:
        terms[j] = value
        try:
            return total(terms)
        finally:
            terms[j] = original

    return with_value
