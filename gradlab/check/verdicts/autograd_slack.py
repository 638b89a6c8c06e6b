"""How far autograd's own value may be off without being evidence: its rounding, and a
nondeterministic backward's spread.

A backward pass is a few operations in its dtype, each within half an ulp, so a disagreement
within :data:`AUTOGRAD_ULPS` machine epsilons of autograd's value (or within autograd's
rounding as measured against fn in float64: :mod:`gradlab.check.running.float64_witness`) says
nothing about the gradient; two backward passes that differ (atomics, a nondeterministic
kernel) widen the tolerance by their spread.

>>> autograd_slack(np.array([2.0]), 2.0 ** -10).tolist()  # 8 ulps of float16 at 2
[0.015625]
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["AUTOGRAD_ULPS", "autograd_slack", "rounding_allowance", "backward_spread"]

#: Autograd's value carries rounding of its own (a backward pass is a few operations in
#: its dtype, each within half an ulp): this many machine epsilons of it are not evidence.
AUTOGRAD_ULPS = 8


def autograd_slack(autograd, eps: float, rounding=None) -> np.ndarray:
    """Autograd's own rounding per value: measured, ``rounding`` (what
    gradlab.check.running.float64_witness.AutogradRounding allows: |autograd - float64 autograd| up to a bound
    of what rounding can produce, never the distance alone: a backward wrong only below
    float64 is that distance too); where not measured (None, NaN), AUTOGRAD_ULPS machine
    epsilons of the value.

    >>> autograd_slack(np.array([1.0, 1.0]), 2.0 ** -7, np.array([1e-3, np.nan])).tolist()
    [0.001, 0.0625]
    """
    model = AUTOGRAD_ULPS * eps * np.abs(np.asarray(autograd, dtype=np.float64))
    if rounding is None:
        return model
    measured = np.asarray(rounding, dtype=np.float64)
    return np.where(np.isnan(measured), model, measured)


def backward_spread(first: torch.Tensor, second: torch.Tensor) -> float:
    """max |first - second| over two backward passes' gradients (0: deterministic;
    NaN in the same place in both counts as agreement).

    >>> backward_spread(torch.tensor([1.0, float("nan")]), torch.tensor([1.5, float("nan")]))
    0.5
    """
    if torch.equal(first, second):  # the usual case, in one op
        return 0.0
    same = (first == second) | (first.isnan() & second.isnan())
    diff = torch.where(same, torch.zeros_like(first), (first - second).abs())
    return float(diff.nan_to_num(nan=float("inf")).max()) if diff.numel() else 0.0


def rounding_allowance(a, estimate, tol, eps: float, rounding) -> np.ndarray:
    """Autograd's rounding allowance per row (:func:`autograd_slack`); a measurement still to be
    made (``rounding`` callable: gradlab.check.running.float64_witness.AutogradRounding.rows) is made only
    when some row is not within ``tol`` of ``estimate`` (else nothing needs it: 0).

    >>> never = lambda: 1 / 0  # noqa: E731 - every row is within tol: the measurement is not made
    >>> rounding_allowance(np.array([1.0]), np.array([1.05]), np.array([0.1]), 2.0 ** -7, never).tolist()
    [0.0]
    """
    if callable(rounding):
        rounding = rounding() if not (np.abs(a - estimate) <= tol).all() else np.zeros(len(a))
    return autograd_slack(a, eps, rounding)
