"""What a first-order check run carries: the caller's options, then what its measurement shares.

:class:`CheckOptions` holds ``check_gradient``'s keywords as given (``validated`` refuses a bad
one in its own sentence); :class:`CheckRun` holds what the engine hands the measurement
once the check is set up: the numeric problem, autograd's gradient, the tolerances, the
workers and progress, the float64 witness and the checked dtype's machine epsilon. Both are
frozen: a run's set-up is done before any value is measured.

>>> o = CheckOptions(mode="full", samples=5, seed=0, scheme="central", eps=None, rtol=None, atol=None,
...                  reduction="sum", grad_outputs="ones", numeric_float64=False, numeric_fn=None,
...                  taylor=False, progress=None, workers=None).validated()
>>> o.mode, o.workers >= 1
('full', True)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import torch

from gradlab.check.inputs.validation import (MODES, REDUCTIONS, choose, resolve_workers, validated_samples,
                                             validated_seed)
from gradlab.check.running.problem import NumericProblem
from gradlab.check.verdicts.report import Tolerances

__all__ = ["CheckOptions", "CheckRun", "Progress"]

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class CheckOptions:
    """A first-order check's options, as :func:`gradlab.check.running.engine.check_gradient`
    takes them (their meaning: :func:`gradlab.check.api.gradcheck`)."""

    mode: str
    samples: int
    seed: int
    scheme: str
    eps: float | None
    rtol: float | None
    atol: float | None
    reduction: str
    grad_outputs: str | torch.Tensor
    numeric_float64: bool
    numeric_fn: Callable[..., Any] | None
    taylor: bool
    progress: Progress | None
    workers: int | None

    def validated(self) -> CheckOptions:
        """These options with mode and reduction chosen, samples, seed and workers validated
        (workers: the default and at most ``LIMITS.check_workers``)."""
        choose("mode", self.mode, MODES)
        choose("reduction", self.reduction, REDUCTIONS)
        return replace(self, samples=validated_samples(self.samples), seed=validated_seed(self.seed),
                       workers=resolve_workers(self.workers))


@dataclass(frozen=True)
class CheckRun:
    """What the measurement of a first-order check shares, once the check is set up."""

    problem: NumericProblem  # fn, x, the step, the scheme, the numeric dtype
    gradient: torch.Tensor  # autograd's flat gradient (float64; skipped elements zeroed)
    tolerances: Tolerances
    workers: int
    progress: Progress | None
    witness: Callable[[], NumericProblem | None]  # fn's float64 problem, built when first asked (or None)
    autograd_eps: float  # the checked dtype's machine epsilon
