"""The Taylor-remainder test: a gradient verdict that needs no step and no tolerance.

Along a direction v, ``r(h) = |L(x + h v) - L(x) - h (∇L·v)|`` is O(h²) when
the gradient is right and O(h) when it is wrong. On a log-log plot the slope
is 2 or 1 — until h is so small that r drops to the round-off floor of the
loss (about u·|L|), where the curve flattens. The slope is fitted on the
small-h end of the part above that floor.

>>> h = np.logspace(-6, 0, 13)
>>> round(fit_taylor(h, 3 * h**2, floor=1e-20).slope, 3)
2.0
>>> fit_taylor(h, 0.5 * h + h**2, floor=1e-20).verdict
'wrong'

:func:`taylor_test` measures the remainders of a check's problem along one seeded
direction, for the steps of :func:`taylor_steps`, with the round-off floor of two
rounded values of the loss's size, and fits them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from gradlab.check.differences.stencil import contract, moved_rows, roundoff_scale
from gradlab.check.running.problem import NumericProblem, reduce_outputs
from gradlab.numerics.dtypes import facts

__all__ = ["TaylorResult", "fit_taylor", "taylor_steps", "taylor_test"]

# Points per decade of h, and the largest h (per element, in units of the
# direction's rms entry): big enough to see curvature, small enough to stay local.
POINTS_PER_DECADE = 2
H_LARGEST = 1.0
# Only points this far above the round-off floor count as signal.
FLOOR_MARGIN = 10.0
# Fit on the smallest h above the floor, over this many decades: the
# asymptotic regime, before higher-order terms bend the curve.
FIT_DECADES = 2.0
MIN_FIT_POINTS = 3
# Slopes near 2 mean a right gradient, near 1 a wrong one; split halfway.
SLOPE_SPLIT = 1.5


@dataclass(frozen=True, eq=False)
class TaylorResult:
    """The remainder curve and what its slope says."""

    table: pd.DataFrame  # columns: h, remainder, floor, fitted
    slope: float | None
    h_min: float | None  # range of h the slope was fitted on
    h_max: float | None
    floor: float
    verdict: str  # "right", "wrong" or "inconclusive"
    text: str


def taylor_steps(eps: float) -> np.ndarray:
    """Steps from H_LARGEST down to about the dtype's machine epsilon.

    >>> taylor_steps(1e-4)[[0, -1]].tolist()
    [1.0, 0.0001]
    """
    decades = max(1, int(np.ceil(-np.log10(eps))))
    return np.logspace(0, -decades, decades * POINTS_PER_DECADE + 1) * H_LARGEST


def fit_taylor(h: np.ndarray, remainder: np.ndarray, floor: float) -> TaylorResult:
    """Fit log r = s·log h + c on the small-h end of the points above the floor."""
    h = np.asarray(h, dtype=np.float64)
    r = np.asarray(remainder, dtype=np.float64)
    signal = np.isfinite(r) & (r > FLOOR_MARGIN * floor) & (r > 0)
    fitted = np.zeros_like(signal)
    if signal.sum() >= MIN_FIT_POINTS:
        h_low = h[signal].min()
        fitted = signal & (h <= h_low * 10**FIT_DECADES)
    if fitted.sum() < MIN_FIT_POINTS:
        fitted = np.zeros_like(signal)  # "fitted" means used for the slope: none was fitted
    table = pd.DataFrame({"h": h, "remainder": r, "floor": floor, "fitted": fitted})
    if not fitted.any():
        return TaylorResult(table, None, None, None, floor, "inconclusive", _inconclusive_text(floor))
    slope = float(np.polyfit(np.log10(h[fitted]), np.log10(r[fitted]), 1)[0])
    h_min, h_max = float(h[fitted].min()), float(h[fitted].max())
    verdict = "right" if slope >= SLOPE_SPLIT else "wrong"
    return TaylorResult(table, slope, h_min, h_max, floor, verdict, _text(slope, h_min, h_max, verdict))


def taylor_test(p: NumericProblem, grad: torch.Tensor, seed: int) -> TaylorResult:
    """Remainders along a seeded direction with rms entry 1; ``grad`` is autograd's (flat, float64).

    >>> from gradlab.check.running.problem import numeric_problem
    >>> from gradlab.numerics.schemes import get_scheme
    >>> x = torch.linspace(0.5, 2, 5, dtype=torch.float64)
    >>> p = numeric_problem(lambda t: t ** 3, [x], "sum", None, get_scheme("central"), 1e-3, torch.float64)
    >>> taylor_test(p, 3 * x ** 2, seed=0).verdict, taylor_test(p, 2 * x ** 2, seed=0).verdict
    ('right', 'wrong')
    """
    gen = torch.Generator().manual_seed(seed + 2)
    v = torch.randn(p.flat.numel, generator=gen, dtype=torch.float64)
    v = v / v.pow(2).mean().sqrt()
    nd = facts(p.dtype)
    hs = taylor_steps(nd.eps)
    rows = moved_rows(p.flat.values, v[None], torch.as_tensor(hs, dtype=torch.float64)[:, None])
    values = contract(p, reduce_outputs(p.batched(rows), p.reduction).to(torch.float64))
    slope = float(grad @ v)
    remainder = (values - p.loss - torch.as_tensor(hs) * slope).abs().numpy()
    floor = 2 * nd.unit_roundoff * float(roundoff_scale(p, None, 1)[0])  # two rounded values of size S
    return fit_taylor(hs, remainder, floor)


def _text(slope: float, h_min: float, h_max: float, verdict: str) -> str:
    where = f"for h from {h_min:.1e} to {h_max:.1e}"
    if verdict == "right":
        return (f"The Taylor remainder shrinks like h^{slope:.2f} {where}: about h², "
                "as it must when the gradient is right.")
    return (f"The Taylor remainder shrinks only like h^{slope:.2f} {where}: about h, "
            "so the gradient is wrong along this direction.")


def _inconclusive_text(floor: float) -> str:
    return (f"The Taylor remainder stays near the round-off floor (~{floor:.1e}) for every h, "
            "so no slope can be fitted. A right gradient of a function that is (almost) linear "
            "along the direction does this; so does a loss too large for the dtype to resolve.")
