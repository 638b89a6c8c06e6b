"""What a hand-written check of the summed loss prints: forward differences of L, element by element.

For a few evenly spaced elements i, ``(L(x + h·eᵢ) − L(x)) / h`` computed as the question
did (the loss summed with ``torch.sum`` in the dtype, the step added in the dtype), next
to autograd's ``dL/dxᵢ``. Both losses are numbers of the dtype near L, so each difference
is a whole number k of ulps of L divided by h: a multiple of the quantum ``ulp(L)/h``
(:mod:`gradlab.labs.summed.loss`). ``k`` is returned too.

>>> from gradlab.labs.summed.loss import SummedLossSettings
>>> t = sampled_differences(SummedLossSettings(), count=8)
>>> list(t.columns)
['element', 'gradient', 'difference', 'k']
>>> import numpy as np  # float32 L in [2**14, 2**15): ulp 2**-9; divided by h, rounded once
>>> bool(np.allclose(t["difference"], t["k"] * 2.0 ** -9 / 1e-3, rtol=2 ** -23, atol=0))
True
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from gradlab.check import build_model_loss, CheckSettings
from gradlab.labs.summed.loss import SummedLossSettings
from gradlab.numerics.ulp import ulp

__all__ = ["sampled_differences", "DEFAULT_COUNT"]

#: Elements sampled: enough to see the staircase, few enough to draw as points on a phone.
DEFAULT_COUNT = 40


def sampled_differences(settings: SummedLossSettings, count: int = DEFAULT_COUNT) -> pd.DataFrame:
    """Forward differences of the loss and autograd's gradient at ``count`` evenly spaced elements."""
    problem = build_model_loss(CheckSettings(shape=settings.shape, dtype=settings.dtype, loss=settings.loss,
                                             reduction=settings.reduction, seed=settings.seed))
    n = problem.x.numel()
    scale = 1.0 / n if settings.reduction == "mean" else 1.0

    def loss(x: torch.Tensor) -> torch.Tensor:
        total = problem.fn(x).sum()
        return total / n if scale != 1.0 else total

    x = problem.x.clone().requires_grad_(True)
    base = loss(x)
    grad = torch.autograd.grad(base, x)[0].reshape(-1)
    base = base.detach()
    h = torch.tensor(settings.h, dtype=problem.x.dtype)
    unit = ulp(float(base), settings.dtype)
    elements = np.unique(np.linspace(0, n - 1, min(count, n)).round().astype(int))
    rows = []
    flat = problem.x.reshape(-1)
    with torch.no_grad():
        for i in elements:
            moved = flat.clone()
            moved[i] = moved[i] + h
            changed = loss(moved.reshape(problem.x.shape))
            difference = float((changed - base) / h)
            steps = float(changed.to(torch.float64) - base.to(torch.float64)) / unit
            k = round(steps) if np.isfinite(steps) else np.nan  # an overflowed loss has no grid to count on
            rows.append((int(i), float(grad[i]), difference, k))
    return pd.DataFrame(rows, columns=["element", "gradient", "difference", "k"])
