"""The error bound of a finite difference: round-off plus Richardson-estimated truncation.

For a scheme of order p with step h, the estimate D(h) differs from the
derivative by round-off plus truncation ``C·h^p``. Round-off is the larger of
the model ``sum|w_k|·u·scale/h`` (u: the numeric dtype's unit round-off, scale:
the magnitude of the values subtracted, see
:func:`gradlab.check.differences.stencil.roundoff_scale`) and, where it was measured, the
noise of fn along the perturbation (:mod:`gradlab.check.differences.noise`:
``3·σ·‖w‖₂/h``); truncation ``C·h^p`` is
estimated from a second step: ``trunc(h) ≈ |D(h) - D(h/2)|·2^p/(2^p - 1)``,
plus what the two estimates' own round-off can hide of it
(:func:`richardson_uncertainty`: the change from h to h/2 holds both estimates'
round-off, which can cancel part of the truncation's change as well as add to it;
a check of ``sinc`` at complex inputs of size 10, summed, failed a right gradient
when it was left out). The complex step subtracts nothing: its round-off is ``u·|D|``.

>>> from gradlab.numerics.schemes import get_scheme
>>> s = get_scheme("forward")
>>> b = bound_of(s, torch.float64, np.array([3.0301]), np.array([3.015025]), np.array([0.0]),
...              np.array([1e-2]))
>>> round(float(b.truncation[0]), 3)  # x**3 at 1, h = 0.01: the true truncation is 3h + h**2
0.03
>>> float(b.truncation[0]) > 0.0301 - 1e-12  # never below it (plus the estimates' round-off)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from gradlab.check.differences.noise import SAFETY
from gradlab.check.running.problem import NumericProblem
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import Scheme

__all__ = ["Bounded", "Estimator", "roundoff_bound", "richardson_uncertainty", "bound_of", "bounded_estimates",
           "RESOLVED", "asymptotic"]

# estimator(problem, rows, steps) -> (estimate, scale), float64 tensors, one per row
Estimator = Callable[[NumericProblem, np.ndarray, torch.Tensor], tuple]


@dataclass(frozen=True, eq=False)
class Bounded:
    """Estimates at steps ``step`` with their error bound = roundoff + truncation (float64 arrays)."""

    estimate: np.ndarray
    step: np.ndarray
    scale: np.ndarray  # of the values subtracted (round-off scales with it)
    roundoff: np.ndarray
    truncation: np.ndarray
    noise: np.ndarray | None = None  # measured σ of fn along each perturbation (None: not measured)

    def rows(self, idx: np.ndarray) -> "Bounded":
        """The bounds of rows ``idx``."""
        return Bounded(*(getattr(self, f)[idx] for f in _FIELDS),
                       noise=None if self.noise is None else self.noise[idx])

    @property
    def bound(self) -> np.ndarray:
        b = self.roundoff + self.truncation
        return np.where(np.isnan(b), np.inf, b)


_FIELDS = ("estimate", "step", "scale", "roundoff", "truncation")


def roundoff_bound(scheme: Scheme, dtype: torch.dtype, estimate, scale, step, noise=None) -> np.ndarray:
    """Round-off part of the error of estimates at ``step`` (arrays, broadcast): the model,
    or the measured ``noise`` σ's bound where that is larger (never below the model)."""
    u = facts(dtype).unit_roundoff
    if scheme.complex_step:
        return u * np.abs(np.asarray(estimate, dtype=np.float64))
    model = scheme.roundoff_constant * u * np.asarray(scale, dtype=np.float64) / np.asarray(step)
    if noise is None:
        return model
    norm = float(np.sqrt(sum(w * w for w in scheme.weights)))
    return np.maximum(model, SAFETY * np.asarray(noise, dtype=np.float64) * norm / np.asarray(step))


def richardson_uncertainty(scheme: Scheme, roundoff) -> np.ndarray:
    """How much of the truncation the two estimates' round-off can hide from Richardson's
    estimate, given D(h)'s round-off R: D(h) - D(h/2) = (1 - 2^-p)·C·h^p + e(h) - e(h/2), so
    C·h^p is within factor·(|D(h) - D(h/2)| + R + R(h/2)); R(h/2) = 2R for a difference
    (R ∝ 1/h), R for the complex step (u·|D|).

    >>> from gradlab.numerics.schemes import get_scheme
    >>> float(richardson_uncertainty(get_scheme("central"), 1.0))  # 4/3 · (1 + 2)
    4.0
    """
    factor = 2.0 ** scheme.order / (2.0 ** scheme.order - 1)
    return factor * (2.0 if scheme.complex_step else 3.0) * np.asarray(roundoff, dtype=np.float64)


def bound_of(scheme: Scheme, dtype: torch.dtype, d_h, d_half, scale, step, noise=None) -> Bounded:
    """The bound of D(h) from D(h) and D(h/2) (arrays): Richardson truncation, with what the
    estimates' round-off can hide of it, plus round-off."""
    factor = 2.0 ** scheme.order / (2.0 ** scheme.order - 1)
    d_h = np.asarray(d_h, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    roundoff = roundoff_bound(scheme, dtype, d_h, scale, step, noise)
    trunc = np.abs(d_h - np.asarray(d_half, dtype=np.float64)) * factor + richardson_uncertainty(scheme, roundoff)
    return Bounded(d_h, np.asarray(step, dtype=np.float64), scale, roundoff, trunc,
                   None if noise is None else np.asarray(noise, dtype=np.float64))


def bounded_estimates(p: NumericProblem, estimator: Estimator, rows: np.ndarray,
                      steps: np.ndarray, noise=None) -> Bounded:
    """D at ``steps`` and at half of them for ``rows`` (one batched evaluation), with bounds
    (``noise``: the rows' measured σ, or None)."""
    both = torch.from_numpy(np.concatenate([steps, steps / 2]))
    est, scale = estimator(p, np.concatenate([rows, rows]), both)
    est, scale, m = est.numpy(), scale.numpy(), len(rows)
    return bound_of(p.scheme, p.dtype, est[:m], est[m:], scale[:m], steps, noise)


#: Truncation is resolved when |D(h) - D(h/2)| exceeds this many times the round-off of both
#: estimates (R/h + 2R/h): below it the difference may be rounding alone.
RESOLVED = 2.0


def asymptotic(p: NumericProblem, estimator: Estimator, rows: np.ndarray, b: Bounded) -> np.ndarray:
    """Per row, whether its estimate's step is in the regime Richardson's truncation assumes:
    D(h) - D(h/2) = 2^p·(D(h/2) - D(h/4)) within half of itself (C·h^p halves p times per
    halving), and D(h) - D(h/2) larger than RESOLVED times the round-off that test carries
    (R(h) + R(h/2) + 2^p·(R(h/2) + R(h/4)) = (3 + 6·2^p)·R for a difference: R ∝ 1/h), so the
    test measures the regime rather than noise. A step grown past a kink
    (relu, an inactive unit switching on) or a saturation (tanh of a large step) is not: there
    D(h) and D(h/2) can agree while both are far from the derivative (the secant of the far
    field), and the bound says truncation is small when it is not measured at all.

    >>> from gradlab.check.running.problem import numeric_problem
    >>> from gradlab.check.differences.stencil import estimates, onehot_maker
    >>> from gradlab.numerics.schemes import get_scheme
    >>> x = torch.tensor([0.5], dtype=torch.float64)
    >>> est = lambda q, rows, h: estimates(q, onehot_maker(q, torch.from_numpy(rows)), h)
    >>> def at(fn, h):
    ...     p = numeric_problem(fn, [x], "sum", None, get_scheme("central"), h, torch.float64)
    ...     return asymptotic(p, est, np.array([0]), bounded_estimates(p, est, np.array([0]), np.array([h]))).tolist()
    >>> at(torch.sin, 1e-2), at(torch.relu, 8.0)  # smooth at a small step; relu's secant across 0
    ([True], [False])
    """
    h = np.asarray(b.step, dtype=np.float64)
    steps = torch.from_numpy(np.concatenate([h, h / 2, h / 4]))
    d = estimator(p, np.concatenate([rows, rows, rows]), steps)[0].numpy().reshape(3, -1)
    r = np.asarray(b.roundoff, dtype=np.float64)  # of D(h); D(h/2)'s is 2r, D(h/4)'s 4r (r: the complex step)
    first, second, k = d[0] - d[1], d[1] - d[2], 2.0 ** p.scheme.order
    noise = (3.0 + 3.0 * k if p.scheme.complex_step else 3.0 + 6.0 * k) * r
    return (np.abs(first) > RESOLVED * noise) & (np.abs(first - k * second) <= 0.5 * np.abs(first) + noise)
