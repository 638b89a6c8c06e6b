"""A wrong gradient planted at chosen elements of a function's input, the forward unchanged.

``fn(off_by_tolerances(t, at, times, rtol, atol))`` is ``fn(t)``, but its gradient at each flat
element k of ``at`` is off by ``times·(atol + rtol·|g_k|)``, g_k being the true gradient there (the
identity passes the true gradient back to it): ``times`` of the element's own tolerance. What a
check must fail and name (10 tolerances in float64), or pass (within one).

>>> x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
>>> (off_by_tolerances(x, [1], 10.0, 1e-5, 1e-8) ** 2).sum().backward()
>>> x.grad.tolist() == [2.0, 4.0 + 10 * (1e-8 + 1e-5 * 4.0), 6.0]
True
"""

from __future__ import annotations

from typing import Sequence

import torch

__all__ = ["off_by_tolerances"]


class _OffByTolerances(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, at, times, rtol, atol, dtypes):
        ctx.at, ctx.times, ctx.rtol, ctx.atol, ctx.dtypes = at, times, rtol, atol, dtypes
        return t.view_as(t)

    @staticmethod
    def backward(ctx, go):
        g = go.clone()
        flat, true = g.view(-1), go.reshape(-1)
        for k in ctx.at if ctx.dtypes is None or go.dtype in ctx.dtypes else ():
            flat[k] += ctx.times * (ctx.atol + ctx.rtol * abs(float(true[k])))
        return g, None, None, None, None, None


def off_by_tolerances(t: torch.Tensor, at: Sequence[int], times: float, rtol: float, atol: float,
                      dtypes: Sequence[torch.dtype] | None = None) -> torch.Tensor:
    """``t`` unchanged, its gradient off by ``times`` tolerances at the flat elements ``at`` (only
    when the gradient is in one of ``dtypes``, if given: a backward wrong only below float64).

    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    >>> off_by_tolerances(x, [0], 10.0, 1e-3, 1e-5, dtypes=(torch.float32,)).sum().backward()
    >>> x.grad.tolist()  # right in float64
    [1.0, 1.0]
    """
    return _OffByTolerances.apply(t, list(at), times, rtol, atol, None if dtypes is None else tuple(dtypes))
