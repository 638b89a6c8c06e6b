"""Forward-mode AD (Jacobian-vector products) checked against finite differences.

:func:`forward_mode_twin` turns ``fn`` into a function that computes exactly what
``fn`` computes, but whose *backward* is assembled from forward-mode AD: column
``i`` of the Jacobian is the JVP along the unit vector ``e_i`` (``torch.func.jvp``
under ``vmap``, or one ``torch.autograd.forward_ad`` dual pass per column when a
function cannot be vmapped, e.g. an ``autograd.Function`` without
``setup_context``), and the vector–Jacobian product gradcheck asks for is
``Σ_i (vᵀ J e_i) e_i``. Running :func:`gradlab.check.api.gradcheck` on the twin
therefore compares forward mode, not reverse mode, with the finite differences
of ``fn``, through every mode, reduction, tolerance and verdict gradcheck has,
and returns the same :class:`~gradlab.check.results.CheckResult`. The finite
differences never see the twin's backward: gradcheck evaluates them without
grad, where the twin is ``fn`` itself.

Cost: the twin's backward takes one JVP per input element (vectorised in chunks
when vmap works), whatever the mode, so it is bounded by
``LIMITS.full_check_elements`` like a full check.

>>> x = torch.linspace(-1, 1, 5, dtype=torch.float64)
>>> check_forward_mode(torch.sin, x, mode="full", taylor=False).verdict
'pass'
"""

from __future__ import annotations

import functools
from typing import Callable, Sequence

import torch
import torch.autograd.forward_ad as fwAD
from torch.func import jvp, vmap

from gradlab.check.api import gradcheck
from gradlab.check.results import CheckResult
from gradlab.limits import LIMITS, check_limit

__all__ = ["forward_mode_twin", "forward_mode_gradient", "check_forward_mode"]

#: Elements of the stacked JVP outputs (chunk × outputs) one vmapped call may hold.
_CHUNK_ELEMENTS = 2**20


def check_forward_mode(fn: Callable, inputs: torch.Tensor | Sequence[torch.Tensor], **options) -> CheckResult:
    """gradcheck's verdict on ``fn``'s forward-mode AD instead of its backward.

    ``options`` are :func:`gradlab.check.api.gradcheck`'s. In the result the
    ``autograd`` column holds forward mode's value (``vᵀJ e_i`` per element, or
    its directional contraction).

    >>> check_forward_mode(lambda a, b: a @ b, [torch.ones(2, 3, dtype=torch.float64),
    ...                    torch.ones(3, 2, dtype=torch.float64)], mode="full", taylor=False).passed
    True
    """
    return gradcheck(forward_mode_twin(fn), inputs, **options)


def forward_mode_twin(fn: Callable) -> Callable:
    """``fn`` itself, except that gradients through it are computed with forward-mode AD.

    The twin returns what ``fn`` returns (a tensor, or a tuple, list or dict of
    tensors); called without grad, or on inputs that require none, it is ``fn``.

    >>> x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.grad(forward_mode_twin(torch.exp)(x).sum(), x)[0].tolist() == x.exp().tolist()
    True
    """
    @functools.wraps(fn)
    def twin(*args):
        if not (torch.is_grad_enabled() and any(_needs_grad(a) for a in args)):
            return fn(*args)
        structure: list = []
        outputs = _JvpBackward.apply(fn, structure, *args)
        return _rebuild(structure[0], outputs)

    return twin


def forward_mode_gradient(fn: Callable, args: Sequence, which: Sequence[int],
                          cotangents: Sequence[torch.Tensor | None]) -> list[torch.Tensor]:
    """``vᵀJ`` for each argument ``args[i]``, ``i`` in ``which``, from forward-mode JVPs.

    ``cotangents`` are v, one per output tensor of ``fn`` (flattened in
    :func:`_flatten`'s order; None counts as zeros).

    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    >>> forward_mode_gradient(lambda t: t ** 3, [x], [0], [torch.ones(2, dtype=torch.float64)])[0].tolist()
    [3.0, 12.0]
    """
    args = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
    check_limit("forward-mode columns", sum(args[i].numel() for i in which), LIMITS.full_check_elements)
    return [_gradient_of(fn, args, i, cotangents) for i in which]


class _JvpBackward(torch.autograd.Function):
    """Forward: fn. Backward: vᵀJ assembled from forward-mode JVPs of fn."""

    @staticmethod
    def forward(ctx, fn, structure, *args):
        kind, outputs = _flatten(fn(*args))
        structure.append(kind)
        ctx.fn, ctx.args = fn, args
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *cotangents):
        which = [i for i, needs in enumerate(ctx.needs_input_grad[2:]) if needs]
        grads = forward_mode_gradient(ctx.fn, ctx.args, which, cotangents)
        out: list = [None] * (2 + len(ctx.args))
        for i, g in zip(which, grads):
            out[2 + i] = g
        return tuple(out)


def _needs_grad(a) -> bool:
    return isinstance(a, torch.Tensor) and a.requires_grad


def _flatten(out) -> tuple[object, list[torch.Tensor]]:
    """(structure, tensors) of fn's output: a tensor, a tuple/list, or a dict of tensors."""
    if isinstance(out, torch.Tensor):
        return None, [out]
    if isinstance(out, dict):
        return tuple(out), list(out.values())
    if isinstance(out, (tuple, list)):
        return type(out), list(out)
    raise TypeError(f"forward-mode check: fn must return a tensor, or a tuple, list or dict of "
                    f"tensors; got {type(out).__name__}.")


def _rebuild(kind, outputs: tuple):
    if kind is None:
        return outputs[0]
    if isinstance(kind, tuple):
        return dict(zip(kind, outputs))
    return kind(outputs)


def _gradient_of(fn, args, i: int, cotangents) -> torch.Tensor:
    """vᵀJ for argument i: one JVP per element of args[i], contracted with the cotangents."""
    x = args[i]

    def outputs_of(xi):
        return tuple(_flatten(fn(*args[:i], xi, *args[i + 1:]))[1])

    try:
        flat = _vmapped_products(outputs_of, x, cotangents)
    except Exception:  # noqa: BLE001 - vmap cannot run this fn: one dual pass per column
        flat = torch.stack([_contract(_dual_column(outputs_of, x, _unit(x, j)), cotangents)
                            for j in range(x.numel())])
    return flat.reshape(x.shape).to(x.dtype)


def _unit(x: torch.Tensor, j: int) -> torch.Tensor:
    e = torch.zeros(x.numel(), dtype=x.dtype)
    e[j] = 1
    return e.reshape(x.shape)


def _basis(x: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """Unit vectors e_start … e_(stop-1) in x's shape, stacked (only this chunk is held)."""
    rows = torch.zeros(stop - start, x.numel(), dtype=x.dtype)
    rows[torch.arange(stop - start), torch.arange(start, stop)] = 1
    return rows.reshape(stop - start, *x.shape)


def _vmapped_products(outputs_of, x: torch.Tensor, cotangents) -> torch.Tensor:
    """(vᵀJ e_j)_j in float64 through vmap over the unit vectors, a chunk of them per call."""
    out_numel = sum(o.numel() for o in outputs_of(x))
    chunk = max(1, _CHUNK_ELEMENTS // max(1, out_numel, x.numel()))
    one = vmap(lambda t: jvp(outputs_of, (x,), (t,))[1])
    weights = [None if v is None else v.to(torch.float64).reshape(-1) for v in cotangents]
    parts = []
    for start in range(0, x.numel(), chunk):
        stop = min(start + chunk, x.numel())
        total = torch.zeros(stop - start, dtype=torch.float64)
        for tangents, w in zip(one(_basis(x, start, stop)), weights):
            if w is not None:
                total = total + tangents.reshape(stop - start, -1).to(torch.float64) @ w
        parts.append(total)
    return torch.cat(parts)


def _dual_column(outputs_of, x: torch.Tensor, tangent: torch.Tensor) -> tuple:
    """The JVP along one tangent, with dual numbers (works for any autograd.Function with a jvp)."""
    with fwAD.dual_level():
        outs = outputs_of(fwAD.make_dual(x, tangent))
        return tuple(fwAD.unpack_dual(o).tangent if isinstance(o, torch.Tensor) else None for o in outs)


def _contract(column: tuple, cotangents) -> torch.Tensor:
    """Σ_k ⟨v_k, (J e_i)_k⟩ in float64 (outputs without a tangent or a cotangent add 0)."""
    total = torch.zeros((), dtype=torch.float64)
    for tangent, v in zip(column, cotangents):
        if tangent is not None and v is not None:
            total = total + (tangent.to(torch.float64) * v.to(torch.float64)).sum()
    return total
