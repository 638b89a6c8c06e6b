"""Tensors a finite-difference check cannot take, refused in one sentence before any work.

A check perturbs its inputs element by element, through a dense strided view of
their values, and runs fn on real CPU or GPU data. So it refuses, naming the
tensor: a sparse tensor (COO, CSR, CSC, BSR, BSC: its stored values are not its
elements, and perturbing a zero would change its pattern), a tensor on the
``meta`` device (it has no values), and an 8-bit float (``float8_*``: PyTorch
has no autograd and almost no arithmetic for them; GradLab's 8-bit formats
are emulated in the Explorer instead).

>>> refuse_unusable([torch.ones(2)], ["x"])
>>> refuse_unusable([torch.eye(2).to_sparse()], ["x"])
Traceback (most recent call last):
...
gradlab.errors.GradLabError: x is a sparse tensor (sparse_coo); a gradient check perturbs dense values: pass it dense (.to_dense()), and call .to_sparse() inside fn if it needs one.
"""

from __future__ import annotations

from typing import Sequence

import torch

from gradlab.errors import GradLabError

__all__ = ["unusable_reason", "refuse_unusable"]


def _is_float8(dtype: torch.dtype) -> bool:
    return str(dtype).removeprefix("torch.").startswith("float8")


def unusable_reason(t: torch.Tensor, name: str) -> str | None:
    """The one sentence refusing tensor ``t`` (called ``name``), or None if a check can take it.

    >>> unusable_reason(torch.ones(2, device="meta"), "w")
    'w is on the meta device, which holds shapes but no values: create it on the CPU (or a GPU) to check it.'
    """
    if t.layout != torch.strided:
        layout = str(t.layout).removeprefix("torch.")
        return (f"{name} is a sparse tensor ({layout}); a gradient check perturbs dense values: "
                "pass it dense (.to_dense()), and call .to_sparse() inside fn if it needs one.")
    if t.is_meta:
        return (f"{name} is on the meta device, which holds shapes but no values: create it on the "
                "CPU (or a GPU) to check it.")
    if _is_float8(t.dtype):
        dtype = str(t.dtype).removeprefix("torch.")
        return (f"{name} is an 8-bit float tensor ({dtype}), for which PyTorch has no autograd and "
                "almost no arithmetic: check fn in bfloat16 or float32 (the Explorer emulates "
                "the 8-bit formats).")
    return None


def refuse_unusable(tensors: Sequence, names: Sequence[str]) -> None:
    """Raise GradLabError with the first unusable tensor's sentence (non-tensors are skipped)."""
    for t, name in zip(tensors, names):
        if isinstance(t, torch.Tensor):
            reason = unusable_reason(t, name)
            if reason:
                raise GradLabError(reason)
