"""A function's outputs as one real vector, with a name for every part and element.

fn may return a tensor or a tuple, list or dict of them (nested or not). The
floating-point and complex parts are checked: each is flattened (a complex one
through ``torch.view_as_real``, so its real and imaginary parts are outputs of
their own, as torch.autograd.gradcheck treats them) and the parts are
concatenated in order. Integer and boolean parts (indices, masks) have no
gradient and are left out; so are Python values.

>>> layout = OutputLayout.of({"logits": torch.zeros(2, 3), "index": torch.tensor([1])})
>>> layout.names, layout.numel
(('out["logits"]',), 6)
>>> layout.label(4)
'out["logits"][1, 1]'
>>> OutputLayout.of((torch.zeros(2), torch.zeros(1, dtype=torch.complex128))).label(3)
'out[1][0].imag'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from gradlab.errors import GradLabError

__all__ = ["OutputLayout", "output_parts", "differentiable_only", "leave_out", "without_parts", "unravel"]



def output_parts(out, prefix: str = "out") -> list[tuple[str, torch.Tensor]]:
    """(name, tensor) for every floating-point or complex tensor in ``out``, in order."""
    if isinstance(out, torch.Tensor):
        if out.layout != torch.strided or out.is_meta:
            raise GradLabError(f"The function returned {prefix} as a sparse or meta tensor; a "
                               "check compares dense values: return it dense (.to_dense()).")
        return [(prefix, out)] if out.is_floating_point() or out.is_complex() else []
    if isinstance(out, dict):
        items = [(f"{prefix}[{k!r}]".replace("'", '"'), v) for k, v in out.items()]
    elif isinstance(out, (tuple, list)):
        items = [(f"{prefix}[{k}]", v) for k, v in enumerate(out)]
    else:
        return []
    return [part for name, value in items for part in output_parts(value, name)]


def differentiable_only(call: Callable, xs: Sequence[torch.Tensor]) -> Callable:
    """``call`` with the floating-point and complex output parts that do not require grad at
    ``xs`` (detached, computed under no_grad, or a constant) left out, as
    ``torch.autograd.gradcheck`` skips them: autograd says nothing about them, so a finite
    difference of them has nothing to be compared with. The parts' names stay fn's own.
    ``call`` itself when every part is differentiable, when none is (the check then says
    so) or when fn fails at ``xs`` (the check then says that in its own words).

    >>> f = differentiable_only(lambda t: (t * 2, t.detach() + 1, t.argmax()), [torch.ones(2)])
    >>> OutputLayout.of(f(torch.ones(2))).names, f.left_out
    (('out[0]',), frozenset({'out[1]'}))
    """
    leaves = [t.detach().clone().requires_grad_(True) for t in xs]
    try:
        with torch.enable_grad():
            parts = output_parts(call(*leaves))
    except Exception:  # noqa: BLE001 - reported by the check's own evaluation, in one sentence
        return call
    constant = frozenset(name for name, t in parts if not t.requires_grad)
    return call if not constant or len(constant) == len(parts) else leave_out(call, constant)


def leave_out(fn: Callable | None, names) -> Callable | None:
    """fn with its output parts called ``names`` left out (``names`` may be a function made
    by :func:`differentiable_only`, whose left-out parts are meant); None stays None."""
    names = getattr(names, "left_out", frozenset()) if callable(names) else names
    if fn is None or not names:
        return fn

    def without(*args):
        return _without(fn(*args), names, "out")

    without.left_out = frozenset(names)
    without.rows = getattr(fn, "rows", None)  # fn's cheap way over many rows, if it has one
    return without


def without_parts(out, names) -> object:
    """fn's output ``out`` with the parts called ``names`` left out, as :func:`leave_out` leaves them.

    >>> OutputLayout.of(without_parts((torch.ones(2), torch.zeros(3)), {"out[1]"})).names
    ('out[0]',)
    """
    return _without(out, frozenset(names), "out")


def _without(out, names: set, prefix: str):
    """fn's output with the parts called ``names`` replaced by a placeholder (same structure)."""
    if isinstance(out, torch.Tensor):
        # a tensor (vmap returns only tensors) that is not floating point: left out like an index;
        # a new one per call (an autograd.Function wrapping fn may mark what it returns)
        return torch.zeros((), dtype=torch.bool) if prefix in names else out
    if isinstance(out, dict):
        return {k: _without(v, names, f"{prefix}[{k!r}]".replace("'", '"')) for k, v in out.items()}
    if isinstance(out, (tuple, list)):
        items = [_without(v, names, f"{prefix}[{k}]") for k, v in enumerate(out)]
        return tuple(items) if isinstance(out, tuple) else items
    return out


@dataclass(frozen=True)
class OutputLayout:
    """Names, shapes and kinds of fn's checked output parts, at the user's input."""

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    complex_parts: tuple[bool, ...]

    @classmethod
    def of(cls, out) -> "OutputLayout":
        parts = output_parts(out)
        if not parts:
            raise GradLabError("The function must return a floating-point or complex tensor, or a "
                               f"tuple, list or dict holding some; it returned {type(out).__name__}.")
        return cls(tuple(n for n, _ in parts), tuple(tuple(t.shape) for _, t in parts),
                   tuple(t.is_complex() for _, t in parts))

    @property
    def sizes(self) -> list[int]:
        """Real values of each part (a complex element counts twice)."""
        return [int(torch.Size(s).numel()) * (2 if c else 1) for s, c in zip(self.shapes, self.complex_parts)]

    @property
    def numel(self) -> int:
        return sum(self.sizes)

    def flatten(self, out) -> torch.Tensor:
        """One output of fn -> its checked parts as one real 1-D tensor."""
        if self.complex_parts == (False,) and isinstance(out, torch.Tensor) and self.names == ("out",):
            return out.reshape(-1)  # the usual case, in one op (a looped check calls this once a row)
        return _join([_real(t, c).reshape(-1) for (_, t), c in zip(self._parts(out), self.complex_parts)], 0)

    def flatten_batched(self, out, rows: int) -> torch.Tensor:
        """fn's output on ``rows`` stacked inputs (each part with a leading batch dimension)
        -> (rows, numel)."""
        return _join([_real(t, c).reshape(rows, -1) for (_, t), c in zip(self._parts(out), self.complex_parts)], 1)

    def _parts(self, out):
        if isinstance(out, torch.Tensor) and self.names == ("out",):  # the usual case, quickly
            return [("out", out)]
        parts = output_parts(out)
        if tuple(n for n, _ in parts) != self.names:
            raise GradLabError("The function returned differently structured outputs on a perturbed "
                               f"input: {[n for n, _ in parts]} instead of {list(self.names)}.")
        return parts

    def label(self, flat_index: int) -> str:
        """The name of output value ``flat_index`` of :meth:`flatten`'s vector."""
        start = 0
        for name, shape, is_complex, size in zip(self.names, self.shapes, self.complex_parts, self.sizes):
            if flat_index < start + size:
                i = flat_index - start
                part = ""
                if is_complex:
                    i, part = divmod(i, 2)
                    part = ".imag" if part else ".real"
                index = unravel(i, shape)
                return f"{name}[{', '.join(map(str, index))}]{part}" if shape else f"{name}{part}"
            start += size
        raise IndexError(f"output index {flat_index} is beyond the {self.numel} output values")


def _join(parts: list[torch.Tensor], dim: int) -> torch.Tensor:
    """torch.cat, without its copy for the usual single output (a view, as fn returned it)."""
    return parts[0] if len(parts) == 1 else torch.cat(parts, dim=dim)


def _real(t: torch.Tensor, is_complex: bool) -> torch.Tensor:
    """A part complex at the user's input as its real view; a real part made complex by the
    complex-step scheme's imaginary perturbations stays complex (the scheme reads its .imag)."""
    return torch.view_as_real(t.resolve_conj()) if is_complex else t


def unravel(i: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index of element ``i`` of a row-major tensor of ``shape``.

    >>> unravel(5, (2, 3)), unravel(0, ())
    ((1, 2), ())
    """
    return tuple(int(k) for k in np.unravel_index(i, shape))
