"""fn's own behaviour, checked before any difference is taken: it must be a function of its
inputs, and the step must make sense in the dtype.

A finite difference compares fn at nearby points; if fn gives two different outputs at
the *same* point (dropout in training mode, any random draw, state kept between calls)
or changes its inputs in place, every difference measures that instead of the
derivative. :func:`first_call` evaluates fn at the user's point on copies of its inputs
(refusing an fn that changes them) and :func:`confirm_repeatable` compares that output with a
second call's, stopping with one sentence naming the cause. :func:`check_user_step` refuses
a step the dtype cannot take: one that overflows or dwarfs the inputs, or one that does not
move them.

>>> x = torch.ones(64, dtype=torch.float64)  # two dropout masks of 64 agree with chance 2^-64 (of 4: 1/16)
>>> first_call(torch.sin, [x]).shape  # fn's output, for the check to reuse
torch.Size([64])
>>> dropout = lambda t: torch.nn.functional.dropout(t, 0.5, training=True)  # noqa: E731
>>> confirm_repeatable(dropout, [x], first_call(dropout, [x]))
Traceback (most recent call last):
...
gradlab.errors.GradLabError: fn gives different outputs on two calls at the same input ...
>>> check_user_step(1e300, x, torch.float64)
Traceback (most recent call last):
...
gradlab.errors.GradLabError: The step eps = 1e+300 is 1e+300 times the largest input ...
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from gradlab.check.outputs import output_parts
from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import facts

__all__ = ["confirm_repeatable", "first_call", "check_user_step", "LARGEST_STEP"]

#: A step larger than this many times the largest input (or 1) is no local estimate.
LARGEST_STEP = 1e3
# Two calls at the same point may differ by a few roundings (a threaded reduction
# summing in another order); more is a different function.
_REPEAT_ULPS = 16


def _flat(parts) -> torch.Tensor:
    """fn's output parts (:func:`~gradlab.check.outputs.output_parts`' tensors) as one float64 vector."""
    parts = [t.detach().reshape(-1) for t in parts]
    parts = [torch.view_as_real(p).reshape(-1) if p.is_complex() else p for p in parts]
    if len(parts) == 1:  # one part: no concatenation (a copy); only compared, never written
        return parts[0].to(torch.float64)
    return torch.cat([p.to(torch.float64) for p in parts]) if parts else torch.zeros(0, dtype=torch.float64)


def _differs(a: torch.Tensor, b: torch.Tensor, eps: float) -> bool:
    if a.shape != b.shape:
        return True
    if torch.equal(a, b):  # the usual case, in one op (NaNs are never equal: they take the long way)
        return False
    same = (a == b) | (a.isnan() & b.isnan())
    finite = a[~same].abs()[torch.isfinite(a[~same])]
    scale = float(a[torch.isfinite(a)].abs().max()) if bool(torch.isfinite(a).any()) else 0.0
    return bool((~same).any()) and (finite.numel() < int((~same).sum())
                                    or bool(((a - b)[~same].abs() > _REPEAT_ULPS * eps * scale).any()))


def first_call(call: Callable, xs: list[torch.Tensor]):
    """fn's output (without grad) on copies of ``xs``; GradLabError if fn changed them in place."""
    copies = [t.detach().clone() for t in xs]
    with torch.no_grad():
        out = call(*copies)
    for copy, original in zip(copies, xs):
        if not torch.equal(copy, original) and not torch.equal(copy.nan_to_num(), original.nan_to_num()):
            raise GradLabError(
                "fn changed its input in place (an op such as x.add_(1), x.data.add_(1) or x[i] = ... "
                "on an input it was given): a gradient check needs fn to leave its inputs unchanged, "
                "so work on a copy (x = x.clone()) or use the out-of-place op.")
    return out


def confirm_repeatable(call: Callable, xs: list[torch.Tensor], out, again: list[torch.Tensor] | None = None) -> None:
    """Raise GradLabError unless fn's output ``out`` (:func:`first_call`'s) is what fn gives at
    ``xs`` again, within a few roundings.

    ``again``: the output parts of another call of fn at ``xs`` (the check's forward pass with
    grad), compared first; fn is called once more only if they differ, since a forward pass
    with grad may take another kernel (a fused attention path) and round differently.
    """
    eps = max(facts(t.dtype).eps for t in xs)
    first = _flat(t for _, t in output_parts(out))
    if again is not None and not _differs(first, _flat(again), eps):
        return
    with torch.no_grad():
        second = _flat(t for _, t in output_parts(call(*[t.detach().clone() for t in xs])))
    if _differs(first, second, eps):
        raise GradLabError(
            "fn gives different outputs on two calls at the same input (largest difference "
            f"{float((first - second).abs().nan_to_num(nan=math.inf).max()):.3g}): it draws random numbers "
            "(dropout or another layer in training mode, torch.rand, an RNG) or keeps state between "
            "calls, so finite differences would measure that instead of the derivative; use "
            "model.eval() or training=False, or seed the generator inside fn.")


def check_user_step(eps: float | None, values: torch.Tensor, dtype: torch.dtype) -> None:
    """Refuse a step given by the user that the dtype cannot take at these inputs."""
    if eps is None or not values.numel():
        return
    x = values.to(dtype)
    largest = float(x.to(torch.float64).abs().max())
    name = facts(dtype).name
    if eps > LARGEST_STEP * max(1.0, largest) or not math.isfinite(float(torch.tensor(eps, dtype=dtype))):
        raise GradLabError(
            f"The step eps = {eps:.3g} is {eps / max(1.0, largest):.3g} times the largest input "
            f"(|x| <= {largest:.3g}): a difference over it measures fn far from x, not its derivative "
            f"(in {name} it may not even be a number). Leave eps unset for the dtype's default step.")
    moved = (x + torch.tensor(eps, dtype=dtype)) != x
    if not bool(moved.all()):
        k = int((~moved).nonzero()[0, 0])
        value = float(x[k])
        spacing = float(torch.nextafter(x[k].abs(), torch.tensor(math.inf, dtype=dtype)) - x[k].abs())
        raise GradLabError(
            f"The step eps = {eps:.3g} does not move the input element {value:.6g} (flat index {k}) in "
            f"{name}: the spacing of {name} numbers there is {spacing:.3g}, so x + eps == x and the "
            f"difference is 0. Pick eps >= {spacing:.2g}, or leave it unset for the dtype's default.")
