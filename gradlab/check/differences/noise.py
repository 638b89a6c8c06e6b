"""The rounding noise of fn along a perturbation, measured rather than modelled.

A finite difference's round-off is the noise of the values it subtracts. Modelled
as u·|L|, it is far too small whenever the loss is a sum that cancels
(normalisations, softmax, attention, recurrent cells): their rounding noise is u
times the size of the *terms*, not of the sum. So it is measured, as Moré and Wild
do ("Estimating computational noise", SIAM J. Sci. Comput. 33(3), 2011, their
ECnoise): φ(t) = L(x + t·d) is evaluated at :data:`POINTS` closely spaced points
``t = i·δ, i = -3..3`` along the perturbation d; the k-th differences of a smooth
function shrink like δ^k, those of noise of level σ do not: for independent noise
``γ_k·mean((Δ^k φ)²)`` estimates σ², with ``γ_k = (k!)²/(2k)!``. A level k is
accepted (as in ECnoise) when the estimates at k, k+1 and k+2 agree within a
factor 4 and the k-th differences change sign (a smooth remainder has one sign).

Rounding noise can be correlated over short distances: in bfloat16 a normalisation's
norm sits on the same representable value while the perturbed element moves by a few
of its own ulps, so a table at spacing h/16 sees almost no noise while the difference
at step h sees the norm's rounding jump. The table is therefore taken at two spacings,
:data:`SPACING` and :data:`WIDE_SPACING` of the step, in one batched evaluation; the
wide one counts only where ECnoise accepts it (there the smooth part's differences are
not what it measured), and σ is the larger of the two.

A finite difference ``Σ w_j φ(c_j h)/h`` then carries noise of about
``σ·‖w‖₂/h`` (independent noise at its points); its round-off bound is
:data:`SAFETY` times that (:func:`measured_roundoff`).

The check's row estimators live here too (:func:`onehot_estimator`, :func:`dense_estimator`:
a table row's estimate at a per-row step, and the perturbation its noise is sampled along).

>>> t = np.arange(-3, 4) * 1e-3
>>> rng = np.random.default_rng(0)
>>> table = np.exp(t)[None, :] + 1e-9 * rng.standard_normal((200, 7))
>>> sigma, accepted = ecnoise(table)
>>> bool(accepted.mean() > 0.9), 0.5e-9 < float(np.median(sigma)) < 2e-9
(True, True)
>>> ecnoise(np.ones((1, 7)))  # no noise at all at this resolution
(array([0.]), array([False]))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from gradlab.check.differences.stencil import dense_maker, estimates, onehot_maker
from gradlab.check.running.batching import memory_rows
from gradlab.check.running.blocks import some_of
from gradlab.check.running.evaluation import chunk_size, onehot_evaluator, run_chunks
from gradlab.check.running.problem import NumericProblem, reduce_outputs
from gradlab.numerics.dtypes import facts

__all__ = ["POINTS", "SAFETY", "SPACING", "WIDE_SPACING", "Measured", "ecnoise", "measured_roundoff", "sample", "measure",
           "RowEstimator", "onehot_estimator", "dense_estimator", "measure_noise"]

POINTS = 7  # i = -3..3: levels 1..6, so levels 1..4 can each be tested with the two above
# Table spacing δ as a share of the step: the smooth part's third differences are then
# (1/16)³ of the truncation scale, far below the noise at the steps a check takes.
SPACING = 1 / 16
# The second table's spacing: its 7 points span ±1.5 h, the distances over which noise
# must be independent for the difference at step h to see it as noise.
WIDE_SPACING = 1 / 2
# The bound is SAFETY times the noise of the difference. Why 3: the level accepted is
# the largest of three estimates that agree within 4x (so it is rarely below σ), and
# rounding noise, a sum of many bounded roundings, has tails lighter than a Gaussian's,
# which exceeds 3σ 0.27 % of the time.
SAFETY = 3.0
_GAMMA = np.array([math.factorial(k) ** 2 / math.factorial(2 * k) for k in range(POINTS)])


def ecnoise(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(σ, accepted) per row of an (m, POINTS) table of φ at equally spaced points.

    A row with no accepted level gets the largest estimate of levels >= 3 (an
    over-estimate: whatever smooth part is left adds to it) and ``accepted`` False;
    a row whose values are all equal gets σ = 0 (no noise at this resolution).
    """
    values = np.asarray(table, dtype=np.float64)
    m, points = values.shape
    sigma = np.zeros((m, points))
    signs = np.zeros((m, points), dtype=bool)
    diffs = values
    for k in range(1, points):
        diffs = np.diff(diffs, axis=1)
        sigma[:, k] = np.sqrt(_GAMMA[k] * np.mean(diffs ** 2, axis=1))
        signs[:, k] = (diffs > 0).any(axis=1) & (diffs < 0).any(axis=1)
    found = np.full(m, np.nan)
    for k in range(points - 3, 0, -1):  # the lowest acceptable level wins: fill from the top
        three = sigma[:, k:k + 3]
        ok = (three.min(axis=1) > 0) & (three.max(axis=1) <= 4 * three.min(axis=1)) & signs[:, k]
        found = np.where(ok, three.max(axis=1), found)
    accepted = np.isfinite(found)
    fallback = sigma[:, 3:].max(axis=1) if points > 3 else sigma.max(axis=1)
    out = np.where(accepted, found, fallback)
    return np.where(np.isfinite(out), out, np.inf), accepted


def weight_norm(p: NumericProblem) -> float:
    """‖w‖₂ of the problem's stencil (its centre weight included)."""
    return float(np.sqrt(sum(w * w for w in p.scheme.weights)))


def measured_roundoff(p: NumericProblem, noise, step) -> np.ndarray:
    """SAFETY·σ·‖w‖₂/h: the round-off bound of a difference at ``step`` from noise σ."""
    return SAFETY * np.asarray(noise, dtype=np.float64) * weight_norm(p) / np.asarray(step, dtype=np.float64)


def sample(p: NumericProblem, make_rows, shifts: torch.Tensor) -> torch.Tensor:
    """φ at the (K, m) ``shifts`` of m perturbations: (K, m) float64, each value moved back
    to its nominal point to first order (:func:`gradlab.check.differences.stencil.nominal_correction`)."""
    from gradlab.check.differences.stencil import contract, nominal_correction

    per = memory_rows(p.flat.numel) // max(1, shifts.shape[1])
    if per < shifts.shape[0]:  # rows of millions of elements: a few shifts at a time
        return torch.cat([sample(p, make_rows, shifts[i:i + max(1, per)])
                          for i in range(0, shifts.shape[0], max(1, per))])
    rows = make_rows(shifts)
    values = reduce_outputs(p.batched(rows), p.reduction).to(torch.float64)
    phi = contract(p, values).reshape(shifts.shape)
    correction = nominal_correction(p, make_rows, shifts, rows)
    return phi if correction is None else phi + correction


@dataclass(frozen=True, eq=False)
class Measured:
    """σ per row: ``near`` from the table at SPACING·step alone, ``sigma`` the larger of it
    and the wide table's where that one is accepted; ``accepted``: either table was."""

    near: np.ndarray
    sigma: np.ndarray
    accepted: np.ndarray


def measure(p: NumericProblem, maker, rows: np.ndarray, steps: np.ndarray, floor: np.ndarray | None = None,
            chunk: int = 64) -> Measured:
    """σ of φ along the perturbations ``rows``, from tables at spacings SPACING·step and
    WIDE_SPACING·step (each at least ``floor``, per row: a spacing that moves the perturbed
    values in the dtype). A kink at x shows in a table that straddles it as noise of about
    0.4 times the spacing: the wide σ bounds a difference's round-off, the near one is what
    a kink's one-sided slopes are compared with.

    ``maker(p, rows)`` gives the RowMaker of those perturbations; fn runs on 2·(POINTS - 1)
    extra points per row (x itself is p.base_rows), ``chunk`` rows at a time.
    """
    m = len(rows)
    out = Measured(np.zeros(m), np.zeros(m), np.zeros(m, dtype=bool))
    if m == 0 or p.scheme.complex_step:
        return out
    steps = np.asarray(steps, dtype=np.float64)
    narrow, wide = steps * SPACING, steps * WIDE_SPACING
    if floor is not None:
        narrow, wide = np.maximum(narrow, floor), np.maximum(wide, floor)
    offsets = torch.tensor([i for i in range(-(POINTS // 2), POINTS // 2 + 1) if i != 0], dtype=torch.float64)
    base = float(contract_base(p))
    k = len(offsets)
    chunk = max(1, min(chunk, memory_rows(p.flat.numel) // (2 * k)))  # a model of millions: a row at a time
    for a in range(0, m, chunk):
        b = min(m, a + chunk)
        spacing = torch.from_numpy(np.ascontiguousarray(np.stack([narrow[a:b], wide[a:b]])))  # (2, b - a)
        shifts = torch.cat([offsets[:, None] * spacing[0][None, :], offsets[:, None] * spacing[1][None, :]])
        phi = sample(p, maker(p, rows[a:b]), shifts).numpy()  # (2·(POINTS - 1), b - a)
        near, near_ok = ecnoise(np.insert(phi[:k].T, POINTS // 2, base, axis=1))
        far, far_ok = ecnoise(np.insert(phi[k:].T, POINTS // 2, base, axis=1))
        # No value is computed closer than its own last rounding: a table of equal values (an
        # affine fn) says the noise is below resolution, not zero; at a large step that rounding
        # alone is the difference's error (2.9e-15 at h = 130 for an exact float64 gradient).
        floor_sigma = 0.5 * torch.finfo(p.dtype).eps * np.maximum(np.abs(phi).max(axis=0), abs(base))
        near = np.maximum(near, floor_sigma)
        out.near[a:b], out.sigma[a:b] = near, np.where(far_ok, np.maximum(near, far), near)
        out.accepted[a:b] = near_ok | far_ok
    return out


def contract_base(p: NumericProblem) -> float:
    """φ(0) = L(x), as the stencil sees it."""
    return p.loss


class RowEstimator:
    """Estimates of table rows at per-row steps (``estimator(p, rows, h)``), and the rows'
    perturbations themselves (:meth:`maker`), which the noise measurement samples along."""

    def __init__(self, estimate, maker, floor):
        self._estimate, self.maker, self.floor = estimate, maker, floor

    def __call__(self, p: NumericProblem, rows: np.ndarray, h: torch.Tensor):
        return self._estimate(p, rows, h)


def onehot_estimator(index: torch.Tensor, workers: int = 1) -> RowEstimator:
    """Estimates of table rows ``rows`` (flat elements ``index[rows]``) at per-row steps."""
    def estimate(p: NumericProblem, rows: np.ndarray, h: torch.Tensor):
        chunk = chunk_size(p, len(rows))
        evaluator = onehot_evaluator(p, index[torch.from_numpy(rows)], chunk, h)
        return run_chunks(evaluator, len(rows), chunk, workers=workers)

    def floor(p: NumericProblem, rows: np.ndarray) -> np.ndarray:
        """A table spacing that moves element index[r]: a few of its ulps."""
        x = p.flat.values[index[torch.from_numpy(rows)]].to(torch.float64).abs().numpy()
        return _ULPS_MOVED * facts(p.dtype).eps * np.maximum(x, facts(p.dtype).tiny)

    return RowEstimator(estimate, lambda p, rows: onehot_maker(p, index[torch.from_numpy(rows)]), floor)


def dense_estimator(directions: torch.Tensor) -> RowEstimator:
    """Estimates of table rows ``rows`` (directions ``directions[rows]``) at per-row steps."""
    def estimate(p: NumericProblem, rows: np.ndarray, h: torch.Tensor):
        return estimates(p, dense_maker(p, some_of(directions, rows)), h)

    def floor(p: NumericProblem, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows))  # points off the dtype's grid are moved back (stencil.nominal_correction)

    return RowEstimator(estimate, lambda p, rows: dense_maker(p, some_of(directions, rows)), floor)


#: A noise table's spacing moves a one-hot element by at least this many of its ulps.
_ULPS_MOVED = 4


def measure_noise(p: NumericProblem, estimator, rows: np.ndarray, steps: np.ndarray) -> Measured | None:
    """Measured σ of fn along each of ``rows`` (:func:`gradlab.check.differences.noise.measure`), or
    None when the estimator cannot say what a row's perturbation is."""
    if not isinstance(estimator, RowEstimator) or p.scheme.complex_step:
        return None
    return measure(p, estimator.maker, rows, steps, estimator.floor(p, rows))
