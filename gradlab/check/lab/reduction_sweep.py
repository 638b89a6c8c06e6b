"""Error against step for the sampled elements, under the three reductions side by side.

The chart that answers the float32 grad-check question: with ``sum`` or ``mean`` the finite
difference of the summed loss is swamped by round-off for every reasonable
step in float32 (mean scales L and dL/dx_i alike, so its curve is the sum's,
shifted), while ``none`` — each difference taken per output element — shows
the usual V with a wide band of good steps.

>>> from gradlab.check.lab.settings import CheckSettings
>>> df = reduction_sweep(CheckSettings(shape=(6, 5), samples=2, dtype="float64"), points_per_decade=1)
>>> sorted(df["reduction"].unique())
['mean', 'none', 'sum']
>>> list(df.columns)[:6]
['reduction', 'element', 'eps', 'autograd', 'estimate', 'abs_error']

:func:`check_sweep` is the sweep that goes with a check (the Grad check page's
"Error vs eps" tab): the engine, not the page, chooses its settings.

>>> s = CheckSettings(shape=(6, 5), samples=8, dtype="float64", mode="full", eps=1e-3)
>>> base = sweep_settings_for(s)
>>> base.mode, base.eps, base.reduction, base.samples
('sampled', None, 'sum', 3)
>>> sweep_settings_for(base) == base  # so a cache keyed on it is shared by every mode and step
True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from gradlab.check.further.estimates import reduction_estimates
from gradlab.check.inputs.validation import REDUCTIONS
from gradlab.check.lab.builtin_models import build_model_loss
from gradlab.check.lab.settings import CheckSettings
from gradlab.check.running.batching import FlatInputs
from gradlab.check.running.engine import sample_indices
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import resolve_tolerances

__all__ = ["EPS_RANGE", "eps_grid", "reduction_sweep", "CheckSweep", "sweep_settings_for", "check_sweep"]

# Steps from 1e-10 (below float64's best central step) to 1 (the size of the data).
EPS_RANGE = (1e-10, 1.0)
POINTS_PER_DECADE = 3
# The sweep next to a check is most of a page rerun's work when the settings change (a
# class clicking at random: about half of the server's CPU); these keep it to 3 elements x
# 21 steps x 3 reductions.
CHECK_SWEEP_ELEMENTS = 3  # lines per panel: enough to see the pattern and its spread
CHECK_SWEEP_POINTS_PER_DECADE = 2  # 21 steps over 1e-10..1: the V and its bottom still show


def eps_grid(points_per_decade: int = POINTS_PER_DECADE) -> np.ndarray:
    """Log-spaced steps over EPS_RANGE.

    >>> eps_grid(1)[[0, -1]].tolist()
    [1e-10, 1.0]
    """
    lo, hi = np.log10(EPS_RANGE[0]), np.log10(EPS_RANGE[1])
    count = int(round((hi - lo) * points_per_decade)) + 1
    within_limit("sweep points", count, LIMITS.sweep_points)
    return np.logspace(lo, hi, count)


def reduction_sweep(settings: CheckSettings, points_per_decade: int = POINTS_PER_DECADE) -> pd.DataFrame:
    """Tidy table: reduction, element, eps, autograd, estimate, abs_error, rel_error, ok.

    Uses the same elements as the sampled check with these settings, the
    settings' scheme and dtype, and the reductions sum, mean and none (with
    the settings' grad_outputs).
    """
    problem = build_model_loss(settings)
    numel = FlatInputs.of([problem.x]).numel
    elements = sample_indices(numel, settings.samples, settings.seed)
    eps = eps_grid(points_per_decade)
    index = elements.repeat_interleave(len(eps))
    steps = torch.as_tensor(np.tile(eps, len(elements)))
    rtol, atol = resolve_tolerances(settings.dtype, settings.rtol, settings.atol)
    labels = [_label(problem.x.shape, int(i)) for i in elements]
    # One sweep of fn serves the three reductions: they differ only in how its outputs are reduced.
    estimates = reduction_estimates(
        problem.fn, problem.x, index, steps, reductions=REDUCTIONS, scheme=settings.scheme,
        grad_outputs=settings.grad_outputs, seed=settings.seed,
        numeric_float64=settings.numeric_float64, numeric_fn=problem.fn64)
    frames = [_frame(reduction, np.repeat(labels, len(eps)), steps.numpy(), autograd, estimate, rtol, atol)
              for reduction, (autograd, estimate) in estimates.items()]
    return pd.concat(frames, ignore_index=True)


def _label(shape: torch.Size, flat: int) -> str:
    return "x[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, tuple(shape))) + "]"


def _frame(reduction, labels, eps, autograd, estimate, rtol, atol) -> pd.DataFrame:
    abs_error = np.abs(estimate - autograd)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_error = np.where(autograd != 0, abs_error / np.abs(autograd), np.nan)
    return pd.DataFrame({
        "reduction": reduction, "element": labels, "eps": eps, "autograd": autograd,
        "estimate": estimate, "abs_error": abs_error, "rel_error": rel_error,
        "ok": abs_error <= atol + rtol * np.abs(estimate),
    })


@dataclass(frozen=True, eq=False)
class CheckSweep:
    """The sweep that goes with a check: its tidy table, and the rtol to draw on it."""

    table: pd.DataFrame
    rtol: float


def sweep_settings_for(settings: CheckSettings) -> CheckSettings:
    """The settings the sweep next to a check runs with: the check's problem, dtype and
    scheme, at most CHECK_SWEEP_ELEMENTS sampled elements; its own steps (so no eps, and
    any mode), all three reductions (so reduction sum stands for them)."""
    return dataclasses.replace(settings, mode="sampled", eps=None, reduction="sum",
                               samples=min(settings.samples, CHECK_SWEEP_ELEMENTS))


def check_sweep(settings: CheckSettings) -> CheckSweep:
    """The sweep next to a check with ``settings`` (see :func:`sweep_settings_for`)."""
    base = sweep_settings_for(settings)
    rtol, _ = resolve_tolerances(base.dtype, base.rtol, base.atol)
    return CheckSweep(reduction_sweep(base, CHECK_SWEEP_POINTS_PER_DECADE), rtol)
