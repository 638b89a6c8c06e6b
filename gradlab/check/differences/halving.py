"""Narrowing a failing block direction to its wrong element(s) by halving.

The default mode (:mod:`gradlab.check.running.blocks`) deals the elements into at most
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
fails (beyond tolerance plus bound) nor clearly passes (within tolerance) is inconclusive and
is followed too, after the failing ones; at most :data:`MOST_PARTS` halves a level go on.
When the halving ends at no failing element (both halves of the block passing, or every element
it found passing on its own), the caller falls back to checking the block's elements.

The halves are held as :class:`~gradlab.check.running.blocks.BlockDirections` (members and weights) and
made dense a few at a time: at 10 M parameters a dense half is 80 MB.

>>> from gradlab.check.running.problem import numeric_problem
>>> from gradlab.check.verdicts.report import Tolerances
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

from gradlab.check.differences.error_bounds import roundoff_bound
from gradlab.check.differences.stencil import dense_maker, estimates
from gradlab.check.running.blocks import BlockDirections, contract, direction_tolerance
from gradlab.check.running.problem import NumericProblem
from gradlab.check.verdicts.report import Tolerances

__all__ = ["HALVING_FROM", "MOST_PARTS", "halve", "group_test"]

#: Blocks of at least this many elements are narrowed by halving: below it the element-by-element
#: check (2 evaluations per element) costs about what the halving's 4·log2(n) does.
HALVING_FROM = 24

#: Failing halves followed to the next level, at most (the furthest beyond their limit): two
#: wrong elements in one block are both named; a bug on thousands of elements at its worst two.
MOST_PARTS = 2


def halve(p: NumericProblem, grad: torch.Tensor, active: torch.Tensor, direction: torch.Tensor,
          tol: Tolerances, element_tolerance) -> torch.Tensor:
    """The flat elements (sorted) a failing ``direction`` over the elements ``active`` points at:
    the single elements the chains of halves that fail or are inconclusive end at (the furthest
    beyond their limit first). Empty when no half of the block fails (the caller's fallback).
    ``grad``: autograd's flat gradient; ``element_tolerance``: each element's tolerance.
    At most :data:`MOST_PARTS` halves go on to the next level (the furthest beyond their
    limit): a bug on every element of a block names the worst few, at 4·MOST_PARTS
    evaluations a level, not every element."""
    element_tolerance = np.asarray(element_tolerance, dtype=np.float64)

    def judged(halves, a, n, scale):  # followed: beyond tolerance (failing, or inconclusive within the bound)
        limit = np.maximum(tol.of(n), direction_tolerance(halves, element_tolerance))
        bound = roundoff_bound(p.scheme, p.dtype, n, scale, np.full(len(n), p.step))
        gap = np.abs(a - n)
        return ~(gap <= limit + bound) | ~(gap <= limit), (gap - limit - bound) / limit  # NaN: followed, first

    return group_test(p, grad, active, direction, p.step, judged, MOST_PARTS)


def group_test(p: NumericProblem, grad: torch.Tensor, active: torch.Tensor, direction: torch.Tensor, step: float,
               judged, most: int, differenced=None) -> torch.Tensor:
    """The flat elements (sorted; empty if none) that chains of halves of ``direction`` over
    ``active`` end at: each level's halves (the same weights, half the elements) differenced at
    ``step``, ``judged(halves, autograd, numeric, scale)`` -> (followed, rank) per half, and at
    most ``most`` followed halves of more than one element (the highest rank, NaN first) halved
    again; every followed single element is found. The halves are held by their members and made
    dense a few at a time (:func:`~gradlab.check.differences.stencil.estimates`); ``differenced(halves, steps)``
    -> (numeric, scale) tensors replaces the scheme's own difference (the detector extrapolates)."""
    differenced = differenced or (lambda halves, steps: estimates(p, dense_maker(p, halves), steps))
    found: list[torch.Tensor] = []
    pending = [active]
    while pending:
        parts = [half for part in pending for half in torch.tensor_split(part, 2) if half.numel()]
        sizes = np.array([part.numel() for part in parts])
        members = torch.cat(parts)
        halves = BlockDirections(p.flat.numel, members, np.concatenate([[0], np.cumsum(sizes)]), direction[members])
        numeric, scale = differenced(halves, torch.full((len(parts),), step, dtype=torch.float64))
        followed, rank = judged(halves, contract(halves, grad).numpy(), numeric.numpy(), scale.numpy())
        rank = np.nan_to_num(rank, nan=np.inf)
        found += [part for k, part in enumerate(parts) if followed[k] and part.numel() == 1]
        going = sorted((k for k, part in enumerate(parts) if followed[k] and part.numel() > 1), key=lambda k: -rank[k])
        pending = [parts[k] for k in sorted(going[:most])]
    if not found:
        return torch.zeros(0, dtype=torch.long)
    return torch.sort(torch.cat(found)).values
