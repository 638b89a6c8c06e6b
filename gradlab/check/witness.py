"""fn in float64 beside the check: a second witness for the finite differences, and the
measure of autograd's own rounding in the working dtype.

A check in float32, bfloat16 or float16 re-estimates the values it cannot decide with
float64 finite differences, where fn runs in float64 (:func:`float64_twin`): an
``nn.Module`` is copied and cast (``deepcopy(module).double()``), floating-point tensors
passed through to fn are cast with the checked inputs, and ``numeric_fn`` (a float64
twin written by the user) takes precedence. The same twin's autograd gradient at the
same point (the inputs cast up, exactly) measures how far autograd in the working dtype
is from its float64 value: that is autograd's own rounding, which no fixed number of
ulps describes for a deep model (:func:`autograd_in_float64`).

>>> lin = torch.nn.Linear(3, 1).to(torch.bfloat16)
>>> x = torch.ones(2, 3, dtype=torch.bfloat16)
>>> from gradlab.check.arguments import parse_arguments
>>> twin = float64_twin(lin, parse_arguments(lin, (x,), None), None, None)
>>> twin(x.double()).dtype
torch.float64
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Callable

import torch

from gradlab.check.arguments import Arguments, module_arguments
from gradlab.check.outputs import OutputLayout
from gradlab.check.problem import NumericProblem, numeric_problem, resolve_step

__all__ = ["float64_twin", "autograd_in_float64", "float64_problem"]


def _float64(value):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().to(torch.float64)
    if isinstance(value, torch.Tensor) and value.is_complex():
        return value.detach().to(torch.complex128)
    return value


def float64_twin(fn: Callable, args: Arguments, wrt, numeric_fn: Callable | None) -> Callable | None:
    """fn of the checked (real, float64) tensors computing fn in float64, or None when it
    cannot be built (the caller still tries it: fn need not run in float64)."""
    if numeric_fn is not None:
        return lambda *reals: args.call(numeric_fn, reals)
    try:
        if isinstance(fn, torch.nn.Module):
            module = copy.deepcopy(fn).to(torch.float64)
            if wrt == "parameters":
                inputs = tuple(_float64(a) for a in args.args[len(args.checked):])
                call, args64 = module_arguments(module, inputs)
                return lambda *reals: args64.call(call, reals)
            fn = module
    except Exception:  # noqa: BLE001 - a module that cannot be copied has no twin
        return None
    checked = set(args.checked)
    passed = tuple(a if k in checked else _float64(a) for k, a in enumerate(args.args))
    args64 = Arguments(passed, args.checked, args.names, errstate=args.errstate)
    return lambda *reals: args64.call(fn, reals)


#: The twin's outputs must agree with fn's within this share of their largest size (plus the
#: dtype's own rounding), or it is taken to compute another function and is not used.
SAME_FUNCTION = 0.05


def autograd_in_float64(twin: Callable, xs: list[torch.Tensor], reduction: str,
                        v: torch.Tensor | None, y: torch.Tensor | None = None) -> torch.Tensor | None:
    """The twin's autograd gradient at ``xs`` cast to float64 (flat, float64), with the same
    reduction and grad_outputs ``v``; None when the twin does not run in float64, or when its
    outputs do not match fn's outputs ``y`` (a twin of another function would measure
    nothing about autograd's rounding)."""
    leaves = [t.detach().to(torch.float64).requires_grad_(True) for t in xs]
    try:
        with torch.enable_grad():
            y64 = OutputLayout.of(out := twin(*leaves)).flatten(out)
            if y64.dtype != torch.float64 or not y64.requires_grad:
                return None
            if y is not None and not _same_function(y, y64.detach()):
                return None
            y = y64
            if reduction == "none":
                target = (y * v.to(torch.float64)).sum()
            else:
                target = y.sum() if reduction == "sum" else y.mean()
            grads = torch.autograd.grad(target, leaves, allow_unused=True)
    except Exception:  # noqa: BLE001 - fn need not run in float64
        return None
    return torch.cat([(g if g is not None else torch.zeros_like(t)).reshape(-1)
                      for g, t in zip(grads, leaves)]).detach()


def float64_problem(fn, xs, reduction, v, s, p: NumericProblem, args: Arguments, g: torch.Tensor):
    """A lazy float64 twin of the numeric problem ``p``, or None when fn does not run in float64
    (built once: its set-up evaluates fn, and the verdicts ask for it at several stages)."""
    built: list[NumericProblem | None] = []

    def make() -> NumericProblem | None:
        if not built:
            built.append(_build())
        return built[0]

    def _build() -> NumericProblem | None:
        if p.dtype == torch.float64:
            return None
        try:
            h = resolve_step(None, s, torch.float64, p.flat.finite_values.to(torch.float64))
            p64 = numeric_problem(fn, xs, reduction, v, s, h, torch.float64, names=args.names,
                                  complex_parts=args.complex_parts(), few_rows=p.batched.few_rows)
        except Exception:  # noqa: BLE001 - fn need not run in float64; then there is no twin
            return None
        return dataclasses.replace(p64, gradient=g) if p64.base_rows.dtype == torch.float64 else None

    return make


def _same_function(y: torch.Tensor, y64: torch.Tensor) -> bool:
    if y.shape != y64.shape:
        return False
    scale = float(y64.abs().nan_to_num(nan=0.0, posinf=0.0, neginf=0.0).max()) if y64.numel() else 0.0
    gap = (y.to(torch.float64) - y64).abs().nan_to_num(nan=0.0)
    return bool((gap <= SAME_FUNCTION * scale + 64 * torch.finfo(y.dtype).eps * y64.abs()).all())
