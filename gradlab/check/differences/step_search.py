"""Checked values re-estimated at steps other than the check's own: the step search, and h/2.

The step search re-estimates the values that do not pass at steps chosen from their own
error model. A value that does not pass at the check's step h is first bounded (its
estimate at h/2 gives the truncation, see :mod:`gradlab.check.differences.error_bounds`).
Then, per value, a short step search: the error model ``E(h) = R/h + C·h^p``
(round-off R from the scale of the values subtracted, truncation C from the
Richardson estimate) has its minimum at ``h* = (R/(p·C))^(1/(p+1))``; when
truncation is not resolved above round-off (:data:`RESOLVED`) the step grows
by :data:`GROWTH`. Each round evaluates D(h*) and D(h*/2) for the values still
not passing, and keeps, per value, the estimate with the smallest bound
(as scipy.differentiate does for scalars). Only the rows that need it are
evaluated.

>>> from gradlab.check.running.problem import numeric_problem
>>> from gradlab.check.differences.stencil import estimates, onehot_maker
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.tensor([1.5], dtype=torch.float64)
>>> p = numeric_problem(torch.tan, [x], "sum", None, get_scheme("central"), 1e-2, torch.float64)
>>> est = lambda q, rows, h: estimates(q, onehot_maker(q, torch.from_numpy(rows)), h)
>>> exact = float(1 / np.cos(1.5) ** 2)
>>> first = bounded_estimates(p, est, np.array([0]), np.array([1e-2]))
>>> abs(float(first.estimate[0]) - exact) > 1e-3 * exact  # at h = 1e-2 truncation is large
True
>>> best = search(p, est, np.array([0]), np.array([exact]), np.array([1e-7 * exact]), first)
>>> abs(float(best.estimate[0]) - exact) < 1e-7 * exact, float(best.step[0]) < 1e-3
(True, True)

Re-estimating the worst failing values at h/2 tells truncation from a wrong gradient
(:func:`truncation_share`). A scheme of order p has truncation error ∝ h^p, so halving h
moves an estimate dominated by truncation by (1 - 2^-p) of its error from autograd; an
estimate that stays put while autograd disagrees points at the gradient. The measured
share ``|D(h) - D(h/2)| / ((1 - 2^-p)|D(h) - a|)`` is the diagnosis's evidence
(:attr:`gradlab.check.verdicts.diagnosis.Evidence.truncation_share`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from gradlab.check.differences.error_bounds import (Bounded, Estimator, bounded_estimates, richardson_uncertainty,
                                                    roundoff_bound)
from gradlab.check.differences.stencil import RowMaker, estimates
from gradlab.check.running.problem import NumericProblem
from gradlab.check.verdicts.columns import Columns

__all__ = ["ROUNDS", "GROWTH", "SPAN", "RESOLVED", "next_steps", "merge", "search", "PROBE_ROWS", "truncation_share"]

ROUNDS = 4  # step-search rounds per dtype
GROWTH = 8.0  # step growth when truncation is not resolved above round-off
SPAN = 1e3  # a round moves the step by at most this factor
# Truncation is resolved when |D(h) - D(h/2)| exceeds this many times the round-off of
# both estimates (R/h + 2R/h): below it the difference may be rounding alone.
RESOLVED = 2.0


def next_steps(p: NumericProblem, b: Bounded) -> np.ndarray:
    """The model's best step for each value, from its bound at its current step."""
    order, h = p.scheme.order, b.step
    r = roundoff_bound(p.scheme, p.dtype, b.estimate, b.scale, 1.0, b.noise)  # R in R/h
    factor = 2.0 ** order / (2.0 ** order - 1)
    # Richardson's own estimate, without the share the estimates' round-off may hide of it
    richardson = np.maximum(b.truncation - richardson_uncertainty(p.scheme, b.roundoff), 0.0)
    resolved = richardson / factor > RESOLVED * 3 * b.roundoff
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        c = np.where(resolved, richardson / h ** order, 0.0)
        best = np.where(resolved & (c > 0), (r / (order * c)) ** (1.0 / (order + 1)), h * GROWTH)
    best = np.where(np.isfinite(best) & (best > 0), best, h / GROWTH)
    return np.clip(best, h / SPAN, h * SPAN)


def merge(old: Bounded, new: Bounded, where: np.ndarray) -> Bounded:
    """Per row, ``new`` (for rows ``where`` of old) where its bound is smaller, else ``old``."""
    better = where[new.bound < old.bound[where]]
    take = new.bound < old.bound[where]
    fields = {}
    for name in ("estimate", "step", "scale", "roundoff", "truncation"):
        column = getattr(old, name).copy()
        column[better] = getattr(new, name)[take]
        fields[name] = column
    if old.noise is not None:
        fields["noise"] = old.noise  # measured once per row: the same at every step
    return Bounded(**fields)


def search(p: NumericProblem, estimator: Estimator, rows: np.ndarray, autograd: np.ndarray,
           tolerance: np.ndarray, start: Bounded) -> Bounded:
    """The best bounded estimate of each of ``rows`` (``start``: their bounds so far, in
    ``p``'s dtype); a row stops once |autograd - estimate| <= tolerance (arrays per row)."""
    best = start
    for _ in range(ROUNDS):
        todo = np.flatnonzero(~(np.abs(best.estimate - autograd) <= tolerance))
        if todo.size == 0:
            break
        steps = next_steps(p, best.rows(todo))
        noise = None if best.noise is None else best.noise[todo]
        best = merge(best, bounded_estimates(p, estimator, rows[todo], steps, noise), todo)
    return best


def torch_steps(h: np.ndarray) -> torch.Tensor:
    """Steps as the float64 tensor an estimator takes."""
    return torch.from_numpy(np.ascontiguousarray(h, dtype=np.float64))


# How many of the worst failing values are re-estimated at h/2.
PROBE_ROWS = 8


def truncation_share(p: NumericProblem, table: Columns, maker_for: Callable[[int, int], RowMaker],
                     numeric: torch.Tensor, autograd: torch.Tensor) -> float | None:
    """Median share over the worst failing values (None: nothing fails, or the complex step).

    ``maker_for(a, b)`` builds the rows of checked values a..b-1.

    >>> from gradlab.check.running.problem import numeric_problem
    >>> from gradlab.numerics.schemes import get_scheme
    >>> from gradlab.check.differences.stencil import onehot_maker
    >>> x = torch.tensor([1.0], dtype=torch.float64)
    >>> p = numeric_problem(lambda t: t ** 3, [x], "sum", None, get_scheme("forward"), 1e-2, torch.float64)
    >>> table = Columns({"ok": np.array([False]), "abs_error": np.array([0.03])})
    >>> share = truncation_share(p, table, lambda a, b: onehot_maker(p, torch.tensor([0])),
    ...                          torch.tensor([3.0301]), torch.tensor([3.0]))
    >>> round(share, 2)  # pure truncation: 3h + h**2 halves to 3h/2 + h**2/4
    1.0
    """
    failing = np.flatnonzero(~table["ok"])
    if failing.size == 0 or p.scheme.complex_step:
        return None
    worst = failing[np.argsort(-table["abs_error"][failing])][:PROBE_ROWS]
    half = torch.tensor([p.step / 2], dtype=torch.float64)
    halves = [estimates(p, maker_for(int(i), int(i) + 1), half)[0] for i in worst]
    moved = np.abs(numeric.numpy()[worst] - torch.cat(halves).numpy())
    error = np.abs(numeric.numpy()[worst] - autograd.numpy()[worst])
    predicted = (1 - 2.0 ** -p.scheme.order) * error
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(predicted > 0, moved / predicted, np.nan)
    share = share[np.isfinite(share)]
    return float(np.median(share)) if share.size else None
