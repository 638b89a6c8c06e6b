"""The float32 grad-check question's own code (../shared/seeds, the second question), as its
author ran it: an oracle for what a hand-written check prints, independent of GradLab.

Its inputs are the Grad check page's: x and the targets drawn from the seed in float64 and
rounded to the dtype, in that order (gradlab.check.lab.builtin_models).
"""

from __future__ import annotations

import torch
from torch import nn


class TestModel(nn.Module):
    """The question's model: (x + 1) / 2."""

    __test__ = False  # a model, not a pytest class

    def forward(self, x):
        return (x + 1) / 2


def page_data(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0):
    """x and the targets as the page draws them: randn in float64 from ``seed``, rounded to ``dtype``."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)
    target = torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)
    return x.requires_grad_(True), target


def questions_grad_check(data, target, reduction: str, eps: float, elements) -> list[float]:
    """The question's ``grad_check`` loop, op for op: its numerical gradients at ``elements``."""
    model, loss_fn = TestModel(), nn.MSELoss(reduction=reduction)
    loss_original = loss_fn(torch.squeeze(model(data)), torch.squeeze(target))
    num_grads = []
    with torch.no_grad():
        for where in elements:
            data_copy = data.clone()
            data_copy[where] = data_copy[where] + eps
            loss_ptb = loss_fn(torch.squeeze(model(data_copy)), torch.squeeze(target))
            num_grads.append((loss_ptb - loss_original) / eps)
    return [float(g) for g in num_grads]
