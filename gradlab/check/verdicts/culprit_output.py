"""Which output a wrong gradient comes through, for functions with several outputs.

A check compares autograd with finite differences of one scalar, the weighted
sum of every output part (``vᵀy``), so a failing input element says "the
gradient of x[3] is wrong" but not through which output. Splitting that
scalar by part, autograd's and the finite difference's contributions of each
part agree except where the wrong backward is: that part is named.

>>> def fn(t):  # out[1]'s backward is wrong: it claims d(2t)/dt = 3
...     return t.sin(), _Wrong.apply(t)
>>> class _Wrong(torch.autograd.Function):
...     @staticmethod
...     def forward(ctx, t):
...         return 2 * t
...     @staticmethod
...     def backward(ctx, g):
...         return 3 * g
>>> x = torch.tensor([0.5, 1.0], dtype=torch.float64)
>>> culprit_output(fn, [x], "sum", None, flat_index=1, step=1e-6)
'out[1]'
"""

from __future__ import annotations

from typing import Callable

import torch

from gradlab.check.inputs.outputs import OutputLayout

__all__ = ["culprit_output"]


def culprit_output(fn: Callable, xs: list[torch.Tensor], reduction: str, v: torch.Tensor | None, *,
                   flat_index: int, step: float) -> str | None:
    """The output part whose contribution to the checked gradient of input element
    ``flat_index`` disagrees most (central differences at ``step`` in float64 when the
    inputs are); None when fn has one output part or fn refuses a point."""
    try:
        autograd, layout, weights = _autograd_parts(fn, xs, reduction, v, flat_index)
        if len(layout.names) < 2:
            return None
        numeric = _numeric_parts(fn, xs, layout, weights, flat_index, step)
    except Exception:  # noqa: BLE001 - naming the output is extra; the verdict stands without it
        return None
    off = (autograd - numeric).abs().nan_to_num(nan=float("inf"))
    return layout.names[int(off.argmax())]


def _autograd_parts(fn, xs, reduction, v, flat_index):
    leaves = [t.clone().requires_grad_(True) for t in xs]
    with torch.enable_grad():
        out = fn(*leaves)
        layout = OutputLayout.of(out)
        y = layout.flatten(out)
        weights = _weights(layout, reduction, v, y.dtype)
        contributions = []
        for part in _slices(layout):
            grads = torch.autograd.grad((weights[part] * y[part]).sum(), leaves, retain_graph=True,
                                        allow_unused=True)
            flat = torch.cat([(g if g is not None else torch.zeros_like(t)).reshape(-1)
                              for g, t in zip(grads, leaves)])
            contributions.append(flat[flat_index].to(torch.float64))
    return torch.stack(contributions), layout, weights.detach()


def _numeric_parts(fn, xs, layout, weights, flat_index, step):
    sizes = [t.numel() for t in xs]
    flat = torch.cat([t.detach().reshape(-1) for t in xs])

    def at(shift: float) -> torch.Tensor:
        moved = flat.clone()
        moved[flat_index] += shift
        parts = [p.view(t.shape).to(t.dtype) for p, t in zip(torch.split(moved, sizes), xs)]
        with torch.no_grad():
            return (weights * layout.flatten(fn(*parts))).to(torch.float64)

    plus, minus = at(step), at(-step)
    return torch.stack([(plus[s] - minus[s]).sum() / (2 * step) for s in _slices(layout)])


def _weights(layout: OutputLayout, reduction: str, v, dtype) -> torch.Tensor:
    if reduction == "none" and v is not None:
        return v.to(dtype)
    scale = 1.0 / layout.numel if reduction == "mean" else 1.0
    return torch.full((layout.numel,), scale, dtype=dtype)


def _slices(layout: OutputLayout) -> list[slice]:
    starts = [0]
    for size in layout.sizes:
        starts.append(starts[-1] + size)
    return [slice(a, b) for a, b in zip(starts, starts[1:])]
