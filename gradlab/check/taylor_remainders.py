"""The Taylor test of a check's problem: remainders along one seeded direction.

Measures ``|L(x + h v) - L(x) - h ∇L·v|`` for the steps of
:func:`gradlab.check.taylor.taylor_steps` and hands them to
:func:`gradlab.check.taylor.fit_taylor`, with the round-off floor of two
rounded values of the loss's size.

>>> from gradlab.check.problem import numeric_problem
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.linspace(0.5, 2, 5, dtype=torch.float64)
>>> p = numeric_problem(lambda t: t ** 3, [x], "sum", None, get_scheme("central"), 1e-3, torch.float64)
>>> taylor_test(p, 3 * x ** 2, seed=0).verdict, taylor_test(p, 2 * x ** 2, seed=0).verdict
('right', 'wrong')
"""

from __future__ import annotations

import torch

from gradlab.check.batching import dense_rows
from gradlab.check.problem import NumericProblem, reduce_outputs
from gradlab.check.stencil import contract, roundoff_scale
from gradlab.check.taylor import TaylorResult, fit_taylor, taylor_steps
from gradlab.numerics.dtypes import facts

__all__ = ["taylor_test"]


def taylor_test(p: NumericProblem, grad: torch.Tensor, seed: int) -> TaylorResult:
    """Remainders along a seeded direction with rms entry 1; ``grad`` is autograd's (flat, float64)."""
    gen = torch.Generator().manual_seed(seed + 2)
    v = torch.randn(p.flat.numel, generator=gen, dtype=torch.float64)
    v = v / v.pow(2).mean().sqrt()
    nd = facts(p.dtype)
    hs = taylor_steps(nd.eps)
    rows = dense_rows(p.flat.values, v.expand(len(hs), -1), torch.as_tensor(hs))
    values = contract(p, reduce_outputs(p.batched(rows), p.reduction).to(torch.float64))
    slope = float(grad @ v)
    remainder = (values - p.loss - torch.as_tensor(hs) * slope).abs().numpy()
    floor = 2 * nd.unit_roundoff * float(roundoff_scale(p, None, 1)[0])  # two rounded values of size S
    return fit_taylor(hs, remainder, floor)
