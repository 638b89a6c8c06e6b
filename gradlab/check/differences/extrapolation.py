"""Richardson extrapolation on a ladder of steps, bounded by the extrapolations above it.

A stencil of order p at step s is off from the derivative by about ``C·s^p``; differenced at s
and at r·s, ``R(s) = D(s) + (D(s) - D(r·s))/(r^p - 1)`` cancels that term and leaves the next,
of order q (:func:`next_order`: p + 2 for a symmetric stencil, p + 1 for a one-sided one). On a
ladder of steps :data:`RATIO` apart, R's own truncation shows in the next extrapolation,
``|R(s) - R(r·s)|/(r^q - 1)``, and its round-off is D's through Richardson's weights. The level
taken is the least bound among those that agree with every smaller step's
(:func:`least_consistent`). :mod:`gradlab.check.running.detector` differences its dense directions so,
at steps far above one element's, where the bound is 1e-11 of |∇L·v| instead of a plain
difference's 1e-9.

>>> from gradlab.check.running.problem import numeric_problem
>>> from gradlab.numerics.schemes import get_scheme
>>> p = numeric_problem(torch.exp, [torch.zeros(1, dtype=torch.float64)], "sum", None, get_scheme("central"),
...                     0.1, torch.float64)
>>> d = lambda s: math.sinh(s) / s  # the central difference of exp at 0: 1 + s²/6 + s⁴/120 + ...
>>> r = float(extrapolated(p, d(0.1), d(0.4), RATIO))  # s² cancelled; s⁴/120·(1 - (4⁴ - 1)/15) left
>>> abs(d(0.1) - 1) > 1e-3, abs(r - 1 + 16 * 0.1 ** 4 / 120) < 1e-7  # the s⁶ term: 5e-8
(True, True)
"""

from __future__ import annotations

import math

import numpy as np
import torch

from gradlab.check.differences.error_bounds import Bounded, roundoff_bound
from gradlab.check.running.problem import NumericProblem
from gradlab.numerics.schemes import Scheme, get_scheme  # noqa: F401 - get_scheme: doctests

__all__ = ["RATIO", "TRUNCATION_SAFETY", "extrapolated", "ladder", "least_consistent", "next_order"]

#: The ratio of the ladder's steps: each difference extrapolates with the next (Richardson), each
#: extrapolation's truncation shows in the next two. 4 rather than 2: half the evaluations, and the
#: level taken is at most 4x from the best (whose bound is 40-400x below what is needed).
RATIO = 4.0

#: The extrapolation's truncation estimate is taken this many times: between the steps it is
#: asymptotic (exact) but the ladder's least bound is also the level where it looks smallest.
TRUNCATION_SAFETY = 2.0


def least_consistent(b: Bounded) -> int:
    """The level of least bound among those whose extrapolation agrees with every smaller
    step's within both bounds. At steps far past the asymptotic range an extrapolation can be
    consistent with the next two and wrong: fn saturating (tanh) along a direction makes every
    difference there ~0, and their agreement a tiny, false bound (measured: 5e-5 for an error
    of 0.19). The smaller steps, whose bounds are wider but true, disagree with such a level.

    >>> b = Bounded(np.array([1.0, 1.0, 0.0, np.nan]), np.ones(4), np.ones(4), np.zeros(4),
    ...             np.array([0.1, 0.01, 1e-6, np.nan]))
    >>> least_consistent(b)  # level 2's tiny bound disagrees with levels 0 and 1
    1
    """
    bound, r = b.bound, b.estimate  # NaN already inf
    agree = np.abs(r[:, None] - r[None, :]) <= bound[:, None] + bound[None, :]  # NaN: disagrees
    consistent = np.array([agree[k, :k].all() for k in range(len(r))]) & np.isfinite(bound)
    return int(np.argmin(np.where(consistent, bound, np.inf)))


def extrapolated(p: NumericProblem, d_s, d_far, ratio: float = 2.0) -> np.ndarray:
    """Richardson's ``D(s) + (D(s) - D(r·s))/(r^p - 1)`` from D at s and at ``ratio`` r times it:
    the stencil's leading truncation term (order p) cancelled, the next (:func:`next_order`) left.

    >>> from gradlab.check.running.problem import numeric_problem
    >>> p = numeric_problem(torch.exp, [torch.zeros(1, dtype=torch.float64)], "sum", None, get_scheme("central"),
    ...                     0.1, torch.float64)
    >>> d = lambda s: math.sinh(s) / s  # the central difference of exp at 0
    >>> abs(d(0.1) - 1) > 1e-3, abs(float(extrapolated(p, d(0.1), d(0.2))) - 1) < 1e-5
    (True, True)
    """
    d_s = np.asarray(d_s, dtype=np.float64)
    return d_s + (d_s - np.asarray(d_far, dtype=np.float64)) / (ratio ** p.scheme.order - 1)


def ladder(p: NumericProblem, estimator, row: int, steps: np.ndarray, sigma: float | None) -> Bounded:
    """Direction ``row`` differenced at each of ``steps`` (RATIO apart, one batch): the
    extrapolations from each step and the next, each bounded by its round-off (σ's, through
    the extrapolation's weights) and its truncation from the two above it; the last three
    steps only feed the others (a bound of NaN)."""
    est, scale = estimator(p, np.full(len(steps), row), torch.from_numpy(steps))
    d, scale = est.numpy(), scale.numpy()
    r = extrapolated(p, d[:-1], d[1:], RATIO)
    gain = RATIO ** next_order(p.scheme) - 1  # R(RATIO·s)'s truncation over R(s)'s, less one
    # round-off of R(s): that of D(s) (measured σ or the model) through Richardson's weights
    roundoff = roundoff_bound(p.scheme, p.dtype, d[:-1], scale[:-1], steps[:-1],
                              None if sigma is None else np.full(len(steps) - 1, sigma)) * _extrapolation_gain(p.scheme, RATIO)
    n = len(r) - 2
    near, above = np.abs(r[:n] - r[1:n + 1]), np.abs(r[1:n + 1] - r[2:n + 2]) / (gain + 1)
    truncation = TRUNCATION_SAFETY * np.maximum(near, above) / gain + (roundoff[:n] + roundoff[1:n + 1]) / gain
    pad = np.full(len(steps) - n, np.nan)
    return Bounded(np.concatenate([r[:n], pad]), steps, scale, np.concatenate([roundoff[:n], pad]),
                   np.concatenate([truncation, pad]), None)


def _extrapolation_gain(scheme: Scheme, ratio: float) -> float:
    """‖Richardson's weights‖₂ over ‖the stencil's‖₂, both per unit step (1.07 for central, ratio 4): how
    much the extrapolation amplifies the independent noise of the values it combines (D(r·s)'s
    weights are D(s)'s over r, at r times the offsets)."""
    k = ratio ** scheme.order
    weights: dict[float, float] = {}
    for c, w in zip(scheme.offsets, scheme.weights):
        weights[c] = weights.get(c, 0.0) + w * k / (k - 1)
        weights[ratio * c] = weights.get(ratio * c, 0.0) - w / (ratio * (k - 1))
    return math.sqrt(sum(w * w for w in weights.values()) / sum(w * w for w in scheme.weights))


def next_order(scheme: Scheme) -> int:
    """The order of the truncation an extrapolation leaves: p + 2 for a symmetric stencil (its
    error has only every other power of h), p + 1 otherwise.

    >>> next_order(get_scheme("central")), next_order(get_scheme("forward"))
    (4, 2)
    """
    pairs = dict(zip(scheme.offsets, scheme.weights))
    symmetric = bool(pairs) and all(pairs.get(-c) == -w for c, w in pairs.items())
    return scheme.order + (2 if symmetric else 1)
