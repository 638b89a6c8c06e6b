"""Kinks: where the left and right one-sided differences disagree beyond their bounds.

Screen: the one-sided differences D-(h), D+(h) at the check's step come free
with a symmetric stencil (:attr:`gradlab.check.running.evaluation.Evaluator.sides`);
for a smooth function their gap is about h·|f''|, for a kink it is the jump
in slope. Rows whose gap exceeds the tolerance and round-off, and is at least
:data:`SCREEN_SHARE` of the larger one-sided slope, are candidates (a smooth
function at the check's step rarely turns its slope by that much; a kink whose
slopes differ by less is confirmed only where the value does not pass).

Confirm: each candidate gets forward and backward differences at h and h/2;
their Richardson extrapolations ``S = 2·D(h/2) - D(h)`` remove the first-order
truncation, so for a smooth function the gap of the two shrinks like h² while
the bounds (``|D(h) - D(h/2)|`` plus round-off) shrink like h; at a kink the
gap stays the jump. A kink is declared when the gap exceeds both bounds plus
the tolerance. autograd's value is then compared with both slopes: ``left``,
``right``, ``between`` (a subgradient, as torch's 0 for abs at 0) or
``outside``.

>>> from gradlab.check.running.problem import numeric_problem
>>> from gradlab.check.differences.stencil import estimates, onehot_maker
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.tensor([0.0, 1.0], dtype=torch.float64)
>>> p = numeric_problem(torch.relu, [x], "sum", None, get_scheme("central"), 1e-6, torch.float64)
>>> est = lambda q, rows, h: estimates(q, onehot_maker(q, torch.from_numpy(rows)), h)
>>> k = confirm(p, est, np.array([0, 1]), np.array([0.0, 1.0]), np.array([1e-5, 1e-5]))
>>> k.kink.tolist(), k.left.round(6).tolist(), k.right.round(6).tolist(), k.side.tolist()
([True, False], [0.0, 1.0], [1.0, 1.0], ['left', ''])
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch  # noqa: F401 - the docstring example

from gradlab.check.differences.error_bounds import Estimator, roundoff_bound
from gradlab.check.differences.step_search import torch_steps
from gradlab.check.running.problem import NumericProblem
from gradlab.numerics.schemes import get_scheme

__all__ = ["SCREEN_SHARE", "Kinks", "candidates", "confirm"]

SCREEN_SHARE = 0.1  # a candidate's one-sided slopes differ by this share of the larger one


@dataclass(frozen=True, eq=False)
class Kinks:
    """Per confirmed row: is it a kink, both slopes, and which one autograd chose."""

    kink: np.ndarray  # bool
    left: np.ndarray
    right: np.ndarray
    side: np.ndarray  # "left" | "right" | "between" | "outside" on a kink, "" elsewhere


def candidates(p: NumericProblem, sides, scale: np.ndarray, tolerance: np.ndarray) -> np.ndarray:
    """Rows whose one-sided gap at p.step exceeds the tolerance and round-off (from ``sides``)."""
    left, right = (s.numpy() for s in sides)
    noise = 2 * roundoff_bound(get_scheme("forward"), p.dtype, left, scale, p.step)
    gap = np.abs(right - left)
    turn = SCREEN_SHARE * np.maximum(np.abs(left), np.abs(right))
    return ((gap > tolerance + noise) & (gap >= turn)).nonzero()[0]  # np.flatnonzero, one call less


def _side(p: NumericProblem, name: str, estimator: Estimator, rows: np.ndarray, noise=None):
    """(Richardson-extrapolated one-sided slope, its bound) of ``rows`` at p.step.

    S = 2·D(h/2) - D(h) carries the noise of D(h/2) twice and of D(h) once: at most
    2·R(h/2) + R(h) = 5·R(h), R the round-off bound of D(h) (measured where ``noise``
    is given, see gradlab.check.differences.noise)."""
    q = replace(p, scheme=get_scheme(name))
    h = np.full(len(rows), p.step)
    est, scale = estimator(q, np.concatenate([rows, rows]), torch_steps(np.concatenate([h, h / 2])))
    est, m = est.numpy(), len(rows)
    moved = np.abs(est[:m] - est[m:])
    bound = moved + 5 * roundoff_bound(q.scheme, p.dtype, est[:m], scale.numpy()[:m], h, noise)
    return 2 * est[m:] - est[:m], bound


def confirm(p: NumericProblem, estimator: Estimator, rows: np.ndarray, autograd: np.ndarray,
            tolerance: np.ndarray, noise: np.ndarray | None = None) -> Kinks:
    """Which of ``rows`` are kinks (see the module docstring); per-row autograd, tolerance and
    measured noise σ of fn along the row (None: the round-off model alone)."""
    left, left_bound = _side(p, "backward", estimator, rows, noise)
    right, right_bound = _side(p, "forward", estimator, rows, noise)
    slack = left_bound + right_bound + tolerance
    kink = np.abs(right - left) > slack
    lo, hi = np.minimum(left, right), np.maximum(left, right)
    near_left = np.abs(autograd - left) <= tolerance + left_bound
    near_right = np.abs(autograd - right) <= tolerance + right_bound
    between = (autograd >= lo - tolerance) & (autograd <= hi + tolerance)
    side = np.where(near_left, "left", np.where(near_right, "right",
                                                  np.where(between, "between", "outside")))
    return Kinks(kink, left, right, np.where(kink, side, "").astype(object))
