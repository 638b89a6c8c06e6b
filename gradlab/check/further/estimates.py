"""Autograd and finite-difference values at chosen elements and steps: the error-vs-eps
sweep's building block (:mod:`gradlab.check.lab.reduction_sweep`).

Every (element, step) pair is one perturbed row, and rows are evaluated a chunk at a time
(:mod:`gradlab.check.running.evaluation`); no verdict is taken, only the two values.

>>> a, n = element_estimates(torch.exp, torch.zeros(1, dtype=torch.float64), torch.tensor([0]),
...                          torch.tensor([1e-4]))
>>> a.tolist(), bool(abs(n[0] - 1) < 1e-8)
([1.0], True)
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from gradlab.check.inputs.validation import REDUCTIONS, choose
from gradlab.check.running.evaluation import SharedOnehot, chunk_size, run_chunks
from gradlab.check.running.problem import as_inputs, autograd_gradient, numeric_problem
from gradlab.errors import GradLabError
from gradlab.numerics.schemes import get_scheme, not_applicable_reason

__all__ = ["element_estimates", "reduction_estimates"]


def element_estimates(
    fn: Callable[..., torch.Tensor],
    x: torch.Tensor | Sequence[torch.Tensor],
    index: torch.Tensor,
    steps: torch.Tensor,
    *,
    reduction: str = "sum",
    scheme: str = "central",
    grad_outputs: str | torch.Tensor = "ones",
    seed: int = 0,
    numeric_float64: bool = False,
    numeric_fn: Callable[..., torch.Tensor] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(autograd, finite difference) at flat element ``index[r]`` with step ``steps[r]``.

    The building block of error-vs-eps sweeps: every (element, step) pair is
    one perturbed row, and rows are evaluated a chunk at a time.

    >>> a, n = element_estimates(lambda t: t ** 2, torch.tensor([3.0], dtype=torch.float64),
    ...                          torch.tensor([0, 0]), torch.tensor([1e-1, 1e-3]), scheme="forward")
    >>> a.tolist(), n.round(6).tolist()  # forward error = h exactly for x**2
    ([6.0, 6.0], [6.1, 6.001])
    """
    return reduction_estimates(
        fn, x, index, steps, reductions=(reduction,), scheme=scheme, grad_outputs=grad_outputs,
        seed=seed, numeric_float64=numeric_float64, numeric_fn=numeric_fn)[reduction]


def reduction_estimates(
    fn: Callable[..., torch.Tensor],
    x: torch.Tensor | Sequence[torch.Tensor],
    index: torch.Tensor,
    steps: torch.Tensor,
    *,
    reductions: Sequence[str] = REDUCTIONS,
    scheme: str = "central",
    grad_outputs: str | torch.Tensor = "ones",
    seed: int = 0,
    numeric_float64: bool = False,
    numeric_fn: Callable[..., torch.Tensor] | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`element_estimates` under several reductions, by reduction name.

    fn runs once per perturbed row, whatever the number of reductions: its
    outputs are reduced each way (a sweep of sum, mean and none costs one
    sweep of fn, not three), and each reduction's values are what it alone
    would give.

    >>> est = reduction_estimates(lambda t: t ** 2, torch.tensor([3.0, 1.0], dtype=torch.float64),
    ...                           torch.tensor([0]), torch.tensor([1e-1]), scheme="forward")
    >>> {r: n.round(6).tolist() for r, (_, n) in est.items()}  # mean halves L and dL/dx alike
    {'sum': [6.1], 'mean': [3.05], 'none': [6.1]}
    """
    for reduction in reductions:
        choose("reduction", reduction, REDUCTIONS)
    if not reductions:
        raise GradLabError("Name at least one reduction.")
    xs = as_inputs(x)
    s = get_scheme(scheme)
    numeric_dtype = torch.float64 if numeric_float64 else xs[0].dtype
    reason = not_applicable_reason(s, numeric_dtype)
    if reason:
        raise GradLabError(reason)
    callable_ = (numeric_fn or fn) if numeric_float64 else fn
    grads, problems = [], []
    for reduction in reductions:
        g, _, v = autograd_gradient(fn, xs, reduction, grad_outputs, seed)
        grads.append(g[index].numpy())
        problems.append(numeric_problem(callable_, xs, reduction, v, s, 1.0, numeric_dtype,
                                        like=problems[0] if problems else None))
    steps = steps.to(torch.float64)
    chunk = chunk_size(problems[0], len(index))
    results = run_chunks(SharedOnehot(problems, index, chunk, steps), len(index), chunk)
    return {r: (g, est.numpy()) for r, g, (est, _) in zip(reductions, grads, results)}
