"""Narrowing a failing block direction to its wrong element(s) by halving.

The default mode (:mod:`gradlab.check.blocks`) deals the elements into at most
``LIMITS.directional_checks`` blocks: past 8 of those, a block holds N/64 elements (313
at N = 20,000; 18,750 at 1.2 M). Checking each element of a failing block on its own costs
two evaluations of fn per element, far more than the check's own pass. Instead the block's
direction is split in two halves (the same signs and weights, each half's elements only),
both halves are evaluated at the check's step, and every half whose autograd value still
lies beyond its own direction tolerance plus its round-off bound is split again: a wrong
element costs ``4·log2(n)`` evaluations, several wrong ones that many each.

The halves' comparison is a guide, never the verdict: the elements it ends at are checked
on their own by the caller with the check's whole verdict machinery (step search, noise,
float64 witness), as the element-by-element path checks them. A half that neither clearly
fails (beyond tolerance plus bound) nor clearly passes (within tolerance) is inconclusive:
its elements are checked one by one. When the halving ends at no failing element (both
halves of the block passing, or every element it found passing on its own), the caller
falls back to checking every element of the block.

>>> from gradlab.check.problem import numeric_problem
>>> from gradlab.check.report import Tolerances
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.linspace(1.0, 2.0, 64, dtype=torch.float64)
>>> p = numeric_problem(lambda t: t ** 2, [x], "sum", None, get_scheme("central"), 1e-3, torch.float64)
>>> g = 2 * x
>>> g[37] += 1.0  # element 37 is wrong
>>> direction = torch.ones(64, dtype=torch.float64) / 8
>>> tol = Tolerances(rtol=1e-5, atol=1e-8)
>>> halve(p, g, torch.arange(64), direction, tol, tol.of(g.numpy())).tolist()
[37]
"""

from __future__ import annotations

import numpy as np
import torch

from gradlab.check.blocks import direction_tolerance
from gradlab.check.error_bounds import roundoff_bound
from gradlab.check.problem import NumericProblem
from gradlab.check.report import Tolerances
from gradlab.check.stencil import dense_maker, estimates

__all__ = ["HALVING_FROM", "halve"]

#: Blocks of at least this many elements are narrowed by halving: below it the element-by-element
#: check (2 evaluations per element) costs about what the halving's 4·log2(n) does.
HALVING_FROM = 24


def halve(p: NumericProblem, grad: torch.Tensor, active: torch.Tensor, direction: torch.Tensor,
          tol: Tolerances, element_tolerance) -> torch.Tensor:
    """The flat elements (sorted) a failing ``direction`` over the elements ``active`` points at:
    the single elements every clearly failing chain of halves ends at, and every element of an
    inconclusive half. Empty when no half of the block fails (the caller's fallback).
    ``grad``: autograd's flat gradient; ``element_tolerance``: each element's tolerance."""
    element_tolerance = np.asarray(element_tolerance, dtype=np.float64)
    found: list[torch.Tensor] = []
    pending = [active]
    while pending:
        parts = [half for part in pending for half in torch.tensor_split(part, 2)]
        masks = torch.zeros(len(parts), p.flat.numel, dtype=torch.float64)
        for k, part in enumerate(parts):
            masks[k, part] = direction[part]
        numeric, scale = estimates(p, dense_maker(p, masks), torch.full((len(parts),), p.step, dtype=torch.float64))
        a, n, scale = (masks @ grad).numpy(), numeric.numpy(), scale.numpy()
        limit = np.maximum(tol.of(n), direction_tolerance(masks, element_tolerance))
        bound = roundoff_bound(p.scheme, p.dtype, n, scale, np.full(len(n), p.step))
        gap = np.abs(a - n)
        fails = ~(gap <= limit + bound)  # NaN: fails
        unsure = ~fails & ~(gap <= limit)
        pending = []
        for k, part in enumerate(parts):
            if unsure[k] or (fails[k] and part.numel() == 1):
                found.append(part)
            elif fails[k]:
                pending.append(part)
    if not found:
        return torch.zeros(0, dtype=torch.long)
    return torch.sort(torch.cat(found)).values
