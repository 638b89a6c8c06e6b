"""Each checked value's state, after re-estimating the values that do not pass.

:func:`judge` takes the first table (every value at the check's step) and
returns it with the verdict columns: values that do not pass get an error
bound (:mod:`gradlab.check.differences.error_bounds`) and a per-value step search
(:mod:`gradlab.check.differences.step_search`). In float32, bfloat16 and float16, where fn
has a float64 twin (:mod:`gradlab.check.running.float64_witness`), every value is estimated
with the twin instead, and those that do not pass there are searched there.
Values still not passing get fn's rounding noise measured (:mod:`gradlab.check.differences.noise`)
and their search again with it; kink candidates go through
:func:`gradlab.check.differences.kinks.confirm` (in the twin, for a low-precision check with one).
A value that would fail on an estimate at a step grown past the check's own keeps it only
where three steps show Richardson's regime (:func:`gradlab.check.differences.error_bounds.asymptotic`).
Then each value gets its state (:mod:`gradlab.check.verdicts.states`).

The first table's columns keep their meaning (``numeric``, ``abs_error``,
``ok`` ... at the check's own step: what a hand-written check at that step
sees). Columns added: ``best_numeric`` (the estimate with the smallest bound
found), ``best_step`` and ``best_dtype`` (where it was taken),
``best_abs_error`` and ``best_tolerance`` (|autograd - best_numeric| and the
tolerance there), ``error_bound`` (of best_numeric: round-off plus
truncation; for a value that passed at the first step, its round-off only:
truncation was not measured there), ``state``, and on kinks ``left_slope``,
``right_slope`` and ``autograd_side`` (NaN and "" elsewhere).

>>> from gradlab.check.running.engine import check_gradient
>>> r = check_gradient(torch.relu, torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64), mode="full")
>>> r.table["state"].tolist(), r.verdict
(['pass', 'not_differentiable', 'pass'], 'not_differentiable')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from gradlab.check.differences.error_bounds import (Bounded, Estimator, asymptotic, bound_of, bounded_estimates,
                                                    richardson_uncertainty, roundoff_bound)
from gradlab.check.differences.kinks import candidates, confirm
from gradlab.check.differences.noise import dense_estimator, measure_noise, onehot_estimator
from gradlab.check.differences.step_search import search, torch_steps
from gradlab.check.running.problem import NumericProblem
from gradlab.check.verdicts.autograd_slack import rounding_allowance
from gradlab.check.verdicts.columns import Columns, Later, filled
from gradlab.numerics.dtypes import facts

__all__ = ["Tolerance", "state_of", "onehot_estimator", "dense_estimator", "judge"]

Tolerance = Callable[[np.ndarray], np.ndarray]  # |numeric| -> per-value tolerance

def state_of(autograd, numeric, tolerance, bound, slack, kink) -> np.ndarray:
    """Each value's state from arrays: pass within tolerance plus ``slack`` (autograd's own
    rounding); fail only beyond tolerance, slack *and* the finite difference's bound, with a
    finite estimate and bound; a kink is not differentiable, never fail; else inconclusive.

    >>> state_of(np.array([1.0, 1.0, 1.0, 1.0]), np.array([1.0, 1.5, 3.0, 3.0]), np.full(4, 0.1),
    ...          np.array([0.0, 1.0, 0.5, 0.5]), np.zeros(4), np.array([False, False, False, True])).tolist()
    ['pass', 'inconclusive', 'fail', 'not_differentiable']
    """
    a, n = np.asarray(autograd, dtype=np.float64), np.asarray(numeric, dtype=np.float64)
    tol, slack = np.asarray(tolerance, dtype=np.float64), np.asarray(slack, dtype=np.float64)
    bound = np.maximum(np.asarray(bound, dtype=np.float64), 0.0)  # NaN stays NaN: not finite, never a fail
    err = np.abs(a - n)
    passed = err <= tol + slack
    unexplained = np.isfinite(n) & np.isfinite(bound) & ~(err <= tol + bound + slack) & ~passed
    state = filled(unexplained.shape, "inconclusive")
    state[passed if passed.shape == state.shape else np.broadcast_to(passed, state.shape)] = "pass"
    state[unexplained] = "fail"  # never a passed row
    state[np.asarray(kink, dtype=bool)] = "not_differentiable"
    return state


@dataclass(frozen=True, eq=False)
class _Best:
    """The best estimate so far of every row, and where it was taken."""

    bounded: Bounded
    dtype: np.ndarray  # numeric dtype name per row


def judge(p: NumericProblem, table: Columns, estimator: Estimator, tolerance: Tolerance, *,
          sides=None, scale: np.ndarray, float64_problem: Callable[[], NumericProblem | None],
          autograd_eps: float = 0.0, autograd_rounding: np.ndarray | None = None,
          tolerance_floor: np.ndarray | None = None) -> Columns:
    """The table with every value's state (see the module docstring).

    ``tolerance_floor`` (per row, or None): a value's tolerance is at least this (a
    direction's: the root-sum-square of its elements' tolerances, :func:`direction_tolerance`).

    ``autograd_eps``: machine epsilon of autograd's dtype. Autograd's own value is
    rounded too: a disagreement within it (:func:`~gradlab.check.verdicts.autograd_slack.autograd_slack`) is not evidence;
    ``autograd_rounding`` is what it may be per row (or a callable measuring that, run only
    when some value is not within its tolerance: gradlab.check.running.float64_witness.AutogradRounding.rows)."""
    a, n = table["autograd"], table["numeric"]
    tolerance = _Floored(tolerance, tolerance_floor)
    step = filled(len(n), p.step, np.float64)
    tol = tolerance(n)
    screened = candidates(p, sides, scale, tol) if sides is not None else np.array([], dtype=np.int64)
    # Where fn has a float64 twin, a low-precision check's values are judged on the twin's finite
    # differences: a bfloat16 difference of a sum that cancels is noise far above the tolerance
    # with a model bound far below it, and one that lands within the tolerance by chance passed
    # a wrong gradient (a step search among such estimates stops at the first that lands so).
    # The first table keeps the dtype's own differences: what a hand-written check sees.
    twin = float64_problem() if p.dtype != torch.float64 else None
    if twin is not None:
        est, twin_scale = _twin_estimates(twin, estimator, len(a))
        slack = rounding_allowance(a, est, tolerance(est), autograd_eps, autograd_rounding)
        within = _Within(tolerance, slack)
        best, bad = _witnessed(twin, a, within, estimator, est, twin_scale)
    else:
        slack = rounding_allowance(a, n, tol, autograd_eps, autograd_rounding)
        within = _Within(tolerance, slack)
        bad = np.flatnonzero(~(np.abs(a - n) <= tol + slack))  # within(n)
        model = roundoff_bound(p.scheme, p.dtype, n, scale, step)
        best = _Best(Bounded(n.copy(), step, scale.astype(np.float64), model, np.zeros(len(n)), np.zeros(len(n))),
                     filled(len(n), facts(p.dtype).name))
        if bad.size:
            half, _ = estimator(p, bad, torch_steps(step[bad] / 2))
            start = bound_of(p.scheme, p.dtype, n[bad], half.numpy(), scale[bad], step[bad], np.zeros(len(bad)))
            found = search(p, estimator, bad, a[bad], within(n[bad], bad), start)
            best = _put(best, bad, found, facts(p.dtype).name)
    # The model's bounds cost nothing; the noise is measured (12 evaluations of fn per value)
    # only for values that do not pass yet, and their step search is run again with it: the
    # model's round-off of a sum that cancels is so small that the search takes the noise for
    # truncation and shrinks the step (a float64 log_softmax of 10^4 elements ended
    # inconclusive so). A measured bound is never below the model's.
    est = best.bounded.estimate
    searched = bool(bad.size)  # else the estimates are still those bad was screened on
    unsettled = bad if not searched else np.flatnonzero(~(np.abs(est - a) <= within(est)))
    both = unsettled.size and screened.size  # each sorted without repeats: np.union1d's sort only for two
    kinks = (np.union1d(unsettled, screened) if both else unsettled if unsettled.size else screened).astype(np.int64)
    # A kink is the function's: with a float64 twin it is read there, where rounding cannot
    # make one-sided slopes differ (a bfloat16 normalisation's norm jumping between
    # representable values did), and where bfloat16's noise cannot hide one (abs at 0).
    kp = p if twin is None else twin
    if kinks.size:
        kinks = kinks[confirm(kp, estimator, kinks, a[kinks], tolerance(est[kinks], kinks)).kink]
    failing = unsettled[np.isfinite(est[unsettled])] if unsettled.size else unsettled
    if not failing.size and not kinks.size:  # every value passes: nothing to measure or confirm
        return _table(table, best, a, tolerance, slack, p, estimator, kinks, None, np.zeros(len(a), dtype=bool), kp,
                      tol=tol if twin is None and not searched else None, passed=not unsettled.size)
    best, kink_noise, measured, left = _measured(p, best, failing, kinks if twin is None else kinks[:0], a,
                                                 within, estimator, float64_problem, tolerance)
    best = _grown_steps_checked(p, twin, best, a, within, estimator)
    kinks = left if twin is None else kinks
    return _table(table, best, a, tolerance, slack, p, estimator, kinks, kink_noise, measured, kp)


#: Kink candidates whose noise is measured one by one before the rest share their largest.
KINK_SAMPLE = 12


def _measured(p, best: _Best, failing, kinks, a, within, estimator, float64_problem, tolerance):
    """``best`` with the noise of the ``failing`` rows (every value not passing yet) measured
    (in the dtype their estimate was taken in) and their step search run again with it; the noise of the ``kinks`` rows in
    p's dtype (for their one-sided bounds); which rows were measured; and the kinks left.

    A smooth function in low precision can make most rows look like kinks to the model, so
    the kinks' noise is measured on KINK_SAMPLE of them first; the others are confirmed with
    the largest noise found, and only those still kinks get their own measurement."""
    measured = np.zeros(len(a), dtype=bool)
    kink_noise = np.zeros(len(a))
    in_p = failing[best.dtype[failing] == facts(p.dtype).name]
    first = np.union1d(in_p, kinks[:KINK_SAMPLE]).astype(np.int64)
    found = measure_noise(p, estimator, first, np.full(len(first), p.step))
    if found is None:
        return best, None, measured, kinks
    noise = np.zeros(len(a))  # for bounds: the wide table's too (a kink there is no matter)
    kink_noise[first], noise[first], measured[first] = found.near, found.sigma, True
    rest = kinks[KINK_SAMPLE:]
    if rest.size:
        shared = float(kink_noise[kinks[:KINK_SAMPLE]].max())
        est = best.bounded.estimate[rest]
        still = rest[confirm(p, estimator, rest, a[rest], tolerance(est, rest), noise=np.full(len(rest), shared)).kink]
        kink_noise[still], measured[still] = measure_noise(p, estimator, still, np.full(len(still), p.step)).near, True
        kinks = np.union1d(kinks[:KINK_SAMPLE], still).astype(np.int64)
    best = _research(p, best, in_p, noise[in_p], a, within, estimator, facts(p.dtype).name)
    in_64 = np.setdiff1d(failing, in_p)
    p64 = float64_problem() if in_64.size else None
    if p64 is not None:
        sigma64 = measure_noise(p64, estimator, in_64, np.full(len(in_64), p64.step)).sigma
        measured[in_64] = True
        best = _research(p64, best, in_64, sigma64, a, within, estimator, "float64")
    return best, kink_noise, measured, kinks


def _research(q, best: _Best, rows, noise, a, within, estimator, dtype: str) -> _Best:
    """Rows' bounds with their measured ``noise``, then the step search again from there."""
    if not rows.size:
        return best
    b = best.bounded.rows(rows)
    roundoff = roundoff_bound(q.scheme, q.dtype, b.estimate, b.scale, b.step, noise)
    hidden = richardson_uncertainty(q.scheme, roundoff) - richardson_uncertainty(q.scheme, b.roundoff)
    start = Bounded(b.estimate, b.step, b.scale, roundoff, b.truncation + np.maximum(hidden, 0.0),
                    np.asarray(noise, dtype=np.float64))
    found = search(q, estimator, rows, a[rows], within(b.estimate, rows), start)
    return _put(best, rows, _remeasured(q, estimator, rows, found), dtype)


#: The noise tables span +-1.5 steps (noise.WIDE_SPACING x 3 points); beyond that the noise
#: measured at the check's step says nothing (values far from x are larger, and so is their rounding).
NOISE_SPAN = 1.5


def _remeasured(q, estimator, rows, found: Bounded) -> Bounded:
    """``found`` with the noise of rows whose search grew the step past NOISE_SPAN·q.step
    measured again at that step (an affine fn's step can grow to 64x the check's, where its
    rounding is 80x the noise measured at x) and their round-off bound raised to it."""
    grown = np.flatnonzero(found.step > NOISE_SPAN * q.step)
    if not grown.size:
        return found
    sigma = measure_noise(q, estimator, rows[grown], found.step[grown]).near  # a kink in the wide one is no noise
    noise = found.noise.copy() if found.noise is not None else np.zeros(len(found.step))
    noise[grown] = np.maximum(noise[grown], sigma)
    roundoff = found.roundoff.copy()
    roundoff[grown] = np.maximum(roundoff[grown], roundoff_bound(q.scheme, q.dtype, found.estimate[grown],
                                                                 found.scale[grown], found.step[grown], noise[grown]))
    return Bounded(found.estimate, found.step, found.scale, roundoff, found.truncation, noise)


def _grown_steps_checked(p, twin, best: _Best, a, within, estimator) -> _Best:
    """``best`` with each row that would fail on an estimate at a step grown past its problem's
    own (round-off swamped the smaller ones) kept only where that step is in Richardson's regime
    (:func:`gradlab.check.differences.error_bounds.asymptotic`); elsewhere the row's estimate at its
    problem's own step stands, with its bound (its measured noise too): a secant across a
    kink or a saturation at a grown step is no evidence of a wrong gradient (a bfloat16 RNN's,
    PReLU's and inactive relu units' right gradients failed on such secants)."""
    b = best.bounded
    wrong = ~(np.abs(a - b.estimate) <= within(b.estimate) + b.bound) & np.isfinite(b.estimate)
    for q in (p, twin) if twin is not None else (p,):
        name = facts(q.dtype).name
        rows = np.flatnonzero(wrong & (best.dtype == name) & (b.step > _GROWN * q.step))
        if not rows.size:
            continue
        back = rows[~asymptotic(q, estimator, rows, b.rows(rows))]
        if back.size:
            noise = None if b.noise is None else b.noise[back]
            best = _put(best, back, bounded_estimates(q, estimator, back, np.full(len(back), q.step), noise), name)
    return best


#: A step is grown past its problem's own beyond this factor (the search grows by 8 at a time).
_GROWN = 1.5


def _put(best: _Best, rows: np.ndarray, found: Bounded, dtype: str) -> _Best:
    fields = {}
    for name in ("estimate", "step", "scale", "roundoff", "truncation", "noise"):
        column = getattr(best.bounded, name).copy()
        value = getattr(found, name)
        column[rows] = value if value is not None else 0.0
        fields[name] = column
    dtypes = best.dtype.copy()
    dtypes[rows] = dtype
    return _Best(Bounded(**fields), dtypes)


def _twin_estimates(p64: NumericProblem, estimator, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(estimate, scale) of every one of the ``m`` rows with fn's float64 twin at its step."""
    h = np.full(m, p64.step)
    return tuple(t.numpy().astype(np.float64) for t in estimator(p64, np.arange(m), torch_steps(h)))


def _witnessed(p64: NumericProblem, a, within, estimator, est, scale) -> tuple[_Best, np.ndarray]:
    """Every row estimated with fn's float64 twin at its step (``est``, ``scale``; round-off bound
    from the model, as a first-step pass has); rows that do not pass there (returned too) get
    their bound and search."""
    rows = np.arange(len(a))
    h = np.full(len(rows), p64.step)
    best = _Best(Bounded(est, h, scale, roundoff_bound(p64.scheme, p64.dtype, est, scale, h), np.zeros(len(rows)),
                         np.zeros(len(rows))), filled(len(rows), "float64"))
    bad = np.flatnonzero(~(np.abs(a - est) <= within(est)))
    if bad.size:
        start = bounded_estimates(p64, estimator, bad, h[bad], np.zeros(len(bad)))
        found = search(p64, estimator, bad, a[bad], within(start.estimate, bad), start)
        best = _put(best, bad, found, "float64")
    return best, bad


@dataclass(frozen=True, eq=False)
class _Floored:
    """A tolerance of the estimates, at least ``floor`` per row (``rows``: which rows
    the estimates are; None: all of them)."""

    tolerance: Tolerance
    floor: np.ndarray | None

    def __call__(self, estimate: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        tol = self.tolerance(estimate)
        if self.floor is None:
            return tol
        return np.maximum(tol, self.floor if rows is None else self.floor[rows])


@dataclass(frozen=True, eq=False)
class _Within:
    """What a value may differ by and still pass: the tolerance of its estimate plus the slack
    for autograd's own rounding (per row)."""

    tolerance: Tolerance
    slack: np.ndarray

    def __call__(self, estimate: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        return self.tolerance(estimate, rows) + (self.slack if rows is None else self.slack[rows])


def _table(table: Columns, best: _Best, a, tolerance, slack, p, estimator, suspects, noise,
           measured, kink_problem: NumericProblem, tol: np.ndarray | None = None, passed: bool = False) -> Columns:
    """``tol``: tolerance(best estimates) if known; ``passed``: all are within tol + slack (state_of's pass).
    What only a reader of the table needs is computed when first read (a tenth of a small check)."""
    b = best.bounded
    n = b.estimate
    tol = tolerance(n) if tol is None else tol
    kink = np.zeros(len(n), dtype=bool)
    left, right = Later(lambda: filled(len(n), np.nan, np.float64)), Later(lambda: filled(len(n), np.nan, np.float64))
    side = Later(lambda: filled(len(n), ""))
    if suspects.size:
        left, right, side = filled(len(n), np.nan, np.float64), filled(len(n), np.nan, np.float64), filled(len(n), "")
        twin = kink_problem is not p  # the twin's kinks: its model round-off (no noise measured)
        k = confirm(kink_problem, estimator, suspects, a[suspects], tolerance(n[suspects], suspects),
                    noise=None if noise is None or twin else noise[suspects])
        kinks = suspects[k.kink]
        left[kinks], right[kinks], side[kinks] = k.left[k.kink], k.right[k.kink], k.side[k.kink]
        kink[kinks] = True
    state = filled(len(n), "pass") if passed and not suspects.size else state_of(a, n, tol, b.bound, slack, kink)
    return table.joined(
        best_numeric=n, best_step=b.step, best_dtype=best.dtype, best_abs_error=Later(lambda: np.abs(a - n)),
        best_tolerance=tol, error_bound=Later(lambda: b.bound), state=state, left_slope=left,
        right_slope=right, autograd_side=side, noise=b.noise,
        bound_source=Later(lambda: _sources(best, p, measured)), autograd_rounding=slack)


def _sources(best: _Best, p: NumericProblem, measured: np.ndarray) -> np.ndarray:
    """Where each value's round-off bound comes from: the model, measured noise, the float64 witness."""
    b = best.bounded
    source = filled(len(b.estimate), "model")
    if measured.any():  # a bound above the model's is the measured noise's
        model = roundoff_bound(p.scheme, p.dtype, b.estimate, b.scale, b.step)
        source[measured & (b.roundoff > model)] = "measured noise"
    if p.dtype != torch.float64:
        source[best.dtype == "float64"] = "float64 witness"
    return source
