"""Locating the element a failing direction points at, by bisection.

A directional check compares ∇L·v with a finite difference along a dense
direction v, so a failure says "somewhere along v". Splitting v's support in
two halves, re-estimating both and keeping the worse half, ``log2(N)`` times,
ends at one element; that element is then checked on its own.

>>> from gradlab.check.problem import numeric_problem
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
>>> p = numeric_problem(lambda t: t ** 2, [x], "sum", None, get_scheme("central"), 1e-3, torch.float64)
>>> wrong = torch.tensor([2.0, 4.0, 60.0, 8.0], dtype=torch.float64)  # x[2] is wrong
>>> locate(p, wrong, torch.full((4,), 0.5, dtype=torch.float64), Tolerances(rtol=1e-5, atol=1e-8)).label
'x[2]'
"""

from __future__ import annotations

import math

import torch

from gradlab.check.report import Estimates, Tolerances, element, value_table
from gradlab.check.problem import NumericProblem
from gradlab.check.results import Element
from gradlab.check.stencil import dense_maker, estimates, onehot_maker

__all__ = ["locate"]


def locate(p: NumericProblem, grad: torch.Tensor, direction: torch.Tensor, tol: Tolerances) -> Element:
    """Bisect a failing ``direction`` down to one element; return that element's checked value.

    ``grad`` is autograd's flat gradient (float64).
    """
    numel = p.flat.numel
    active = torch.arange(numel)
    steps = torch.full((2,), p.step, dtype=torch.float64)
    while active.numel() > 1:
        halves = torch.tensor_split(active, 2)
        masks = torch.zeros(2, numel, dtype=torch.float64)
        for k, part in enumerate(halves):
            masks[k, part] = direction[part]
        est, _ = estimates(p, dense_maker(p, masks), steps)
        excess = (est - masks @ grad).abs() / (tol.atol + tol.rtol * est.abs())
        active = halves[int(torch.argmax(torch.nan_to_num(excess, nan=math.inf)))]
    i = active[:1]
    est, scale = estimates(p, onehot_maker(p, i), steps[:1])
    return element(value_table(p, i, Estimates(grad[i], est, scale), tol), 0)
