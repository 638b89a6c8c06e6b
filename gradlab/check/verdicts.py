"""Each checked value's state, after re-estimating the values that do not pass.

:func:`judge` takes the first table (every value at the check's step) and
returns it with the verdict columns: values that do not pass get an error
bound (:mod:`gradlab.check.error_bounds`), a per-value step search
(:mod:`gradlab.check.refinement`), then, if fn runs in float64, the same
search with float64 finite differences; kink candidates (and what is still
unexplained) go through :func:`gradlab.check.kinks.confirm`. Then each value
gets its state (:mod:`gradlab.check.states`).

The first table's columns keep their meaning (``numeric``, ``abs_error``,
``ok`` ... at the check's own step: what a hand-written check at that step
sees). Columns added: ``best_numeric`` (the estimate with the smallest bound
found), ``best_step`` and ``best_dtype`` (where it was taken),
``best_abs_error`` and ``best_tolerance`` (|autograd - best_numeric| and the
tolerance there), ``error_bound`` (of best_numeric: round-off plus
truncation; for a value that passed at the first step, its round-off only:
truncation was not measured there), ``state``, and on kinks ``left_slope``,
``right_slope`` and ``autograd_side`` (NaN and "" elsewhere).

>>> from gradlab.check.api import gradcheck
>>> r = gradcheck(torch.relu, torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64), mode="full",
...               taylor=False)
>>> r.table["state"].tolist(), r.verdict
(['pass', 'not_differentiable', 'pass'], 'not_differentiable')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from gradlab.check.columns import Columns
from gradlab.check.error_bounds import Bounded, Estimator, bound_of, bounded_estimates
from gradlab.check.evaluation import chunk_size, onehot_evaluator, run_chunks
from gradlab.check.kinks import candidates, confirm
from gradlab.check.problem import NumericProblem
from gradlab.check.refinement import search, torch_steps
from gradlab.check.stencil import dense_maker, estimates
from gradlab.numerics.dtypes import facts

__all__ = ["Tolerance", "backward_spread", "onehot_estimator", "dense_estimator", "judge"]

Tolerance = Callable[[np.ndarray], np.ndarray]  # |numeric| -> per-value tolerance

#: Autograd's value carries rounding of its own (a backward pass is a few operations in
#: its dtype, each within half an ulp): this many machine epsilons of it are not evidence.
AUTOGRAD_ULPS = 8


def backward_spread(first: torch.Tensor, second: torch.Tensor) -> float:
    """max |first - second| over two backward passes' gradients (0: deterministic;
    NaN in the same place in both counts as agreement).

    >>> backward_spread(torch.tensor([1.0, float("nan")]), torch.tensor([1.5, float("nan")]))
    0.5
    """
    same = (first == second) | (first.isnan() & second.isnan())
    diff = torch.where(same, torch.zeros_like(first), (first - second).abs())
    return float(diff.nan_to_num(nan=float("inf")).max()) if diff.numel() else 0.0


def onehot_estimator(index: torch.Tensor, workers: int = 1) -> Estimator:
    """Estimates of table rows ``rows`` (flat elements ``index[rows]``) at per-row steps."""
    def estimate(p: NumericProblem, rows: np.ndarray, h: torch.Tensor):
        chunk = chunk_size(p, len(rows))
        evaluator = onehot_evaluator(p, index[torch.from_numpy(rows)], chunk, h)
        return run_chunks(evaluator, len(rows), chunk, workers=workers)

    return estimate


def dense_estimator(directions: torch.Tensor) -> Estimator:
    """Estimates of table rows ``rows`` (directions ``directions[rows]``) at per-row steps."""
    def estimate(p: NumericProblem, rows: np.ndarray, h: torch.Tensor):
        return estimates(p, dense_maker(p, directions[torch.from_numpy(rows)]), h)

    return estimate


@dataclass(frozen=True, eq=False)
class _Best:
    """The best estimate so far of every row, and where it was taken."""

    bounded: Bounded
    dtype: np.ndarray  # numeric dtype name per row


def judge(p: NumericProblem, table: Columns, estimator: Estimator, tolerance: Tolerance, *,
          sides=None, scale: np.ndarray, float64_problem: Callable[[], NumericProblem | None],
          autograd_eps: float = 0.0) -> Columns:
    """The table with every value's state (see the module docstring).

    ``autograd_eps``: machine epsilon of autograd's dtype. Autograd's own value is
    rounded too, so a disagreement within AUTOGRAD_ULPS of it is never a fail (it
    matters only with tolerances near 0)."""
    a = table["autograd"]
    n = table["numeric"]
    step = np.full(len(n), p.step)
    best = _Best(Bounded(n.copy(), step, scale.astype(np.float64), table["roundoff"].copy(),
                         np.zeros(len(n))), np.full(len(n), facts(p.dtype).name, dtype=object))
    bad = _not_passing(a, best.bounded.estimate, tolerance)
    if bad.size:
        half, _ = estimator(p, bad, torch_steps(step[bad] / 2))
        start = bound_of(p.scheme, p.dtype, n[bad], half.numpy(), scale[bad], step[bad])
        found = search(p, estimator, bad, a[bad], tolerance(n[bad]), start)
        best = _put(best, bad, found, facts(p.dtype).name)
    best = _in_float64(p, best, a, tolerance, estimator, float64_problem)
    suspects = np.flatnonzero(~(np.abs(best.bounded.estimate - a) <= tolerance(best.bounded.estimate)))
    if sides is not None:
        suspects = np.union1d(suspects, candidates(p, sides, scale, tolerance(n)))
    return _table(table, best, a, tolerance, p, estimator, suspects, AUTOGRAD_ULPS * autograd_eps * np.abs(a))


def _not_passing(a, n, tolerance: Tolerance) -> np.ndarray:
    return np.flatnonzero(~(np.abs(a - n) <= tolerance(n)))


def _put(best: _Best, rows: np.ndarray, found: Bounded, dtype: str) -> _Best:
    fields = {}
    for name in ("estimate", "step", "scale", "roundoff", "truncation"):
        column = getattr(best.bounded, name).copy()
        column[rows] = getattr(found, name)
        fields[name] = column
    dtypes = best.dtype.copy()
    dtypes[rows] = dtype
    return _Best(Bounded(**fields), dtypes)


def _in_float64(p, best: _Best, a, tolerance, estimator, float64_problem) -> _Best:
    """Rows still not passing, searched again with float64 finite differences (if fn runs so)."""
    rows = _not_passing(a, best.bounded.estimate, tolerance)
    if not rows.size or p.dtype == torch.float64:
        return best
    p64 = float64_problem()
    if p64 is None:
        return best
    start = bounded_estimates(p64, estimator, rows, np.full(len(rows), p64.step))
    found = search(p64, estimator, rows, a[rows], tolerance(start.estimate), start)
    better = (np.abs(found.estimate - a[rows]) <= tolerance(found.estimate)) | \
        (found.bound < best.bounded.bound[rows])
    return _put(best, rows[better], found.rows(np.flatnonzero(better)), "float64")


def _table(table: Columns, best: _Best, a, tolerance, p, estimator, suspects, slack) -> Columns:
    b = best.bounded
    n, bound = b.estimate, b.bound
    tol = tolerance(n)
    err = np.abs(a - n)
    passed = err <= tol
    unexplained = np.isfinite(n) & np.isfinite(bound) & ~(err <= tol + bound + slack)
    state = np.where(passed, "pass", np.where(unexplained, "fail", "inconclusive")).astype(object)
    left, right = np.full(len(n), np.nan), np.full(len(n), np.nan)
    side = np.full(len(n), "", dtype=object)
    if suspects.size:
        k = confirm(p, estimator, suspects, a[suspects], tolerance(n[suspects]))
        kinks = suspects[k.kink]
        left[kinks], right[kinks], side[kinks] = k.left[k.kink], k.right[k.kink], k.side[k.kink]
        state[kinks] = np.where(k.side[k.kink] == "outside", "fail", "not_differentiable")
    return table.joined(
        best_numeric=n, best_step=b.step, best_dtype=best.dtype, best_abs_error=err,
        best_tolerance=tol, error_bound=bound, state=state, left_slope=left,
        right_slope=right, autograd_side=side)
