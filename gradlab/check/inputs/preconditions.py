"""The preconditions of a finite difference, required before any is taken: fn must be a function
of its inputs alone (the same output twice, its inputs left as they were), and the step must
make sense in the dtype.

A finite difference compares fn at nearby points; if fn gives two different outputs at
the *same* point (dropout in training mode, any random draw, state kept between calls)
or changes its inputs in place, every difference measures that instead of the
derivative. :func:`first_call` evaluates fn at the user's point on copies of its inputs
(refusing an fn that changes them) and :func:`confirm_repeatable` compares that output with a
second call's, stopping with one sentence naming the cause. :func:`require_usable_step` refuses
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
>>> require_usable_step(1e300, x, torch.float64)
Traceback (most recent call last):
...
gradlab.errors.GradLabError: The step eps = 1e+300 is 1e+300 times the largest input ...
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from gradlab.check.inputs.caller_state import state_blamed
from gradlab.check.inputs.outputs import output_parts
from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import facts

__all__ = ["confirm_repeatable", "first_call", "refuse_changed_arguments", "in_place_refusal", "require_usable_step",
           "LARGEST_STEP"]

#: A step larger than this many times the largest input (or 1) is no local estimate.
LARGEST_STEP = 1e3
# Two calls at the same point may differ by a few roundings (a threaded reduction
# summing in another order); more is a different function.
_REPEAT_ULPS = 16


def _flat(parts) -> torch.Tensor:
    """fn's output parts (:func:`~gradlab.check.inputs.outputs.output_parts`' tensors) as one float64 vector."""
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


def in_place_refusal(name: str | None = None, checked: bool = True) -> GradLabError:
    """The one sentence for an fn that changes an argument in place (any in-place op, even
    ``x.add_(0)``, on the input checked or on one passed through).

    >>> print(in_place_refusal("t"))
    fn changed its input in place (t, by an op such as t.add_(1), t.data.add_(1) or t[i] = ...): ...
    """
    var = name if name and name.isidentifier() else "x"
    which = (f"{name}, " if checked else f"{name}, which is passed through unchecked, ") if name else ""
    return GradLabError(
        f"fn changed its input in place ({which}by an op such as {var}.add_(1), {var}.data.add_(1) or "
        f"{var}[i] = ...): a gradient check calls fn many times with the same arguments, so fn must "
        f"leave them unchanged; work on a copy ({var} = {var}.clone()) or use the out-of-place op "
        f"({var} + 1 for {var}.add_(1)). Your tensors are unchanged: the check gives fn copies.")


def first_call(call: Callable, xs: list[torch.Tensor], names=None):
    """fn's output (without grad) on copies of ``xs``; GradLabError if fn changed them in place
    (their values, or any in-place op at all: it bumps a tensor's version counter)."""
    copies = [t.detach().clone() for t in xs]
    versions = [c._version for c in copies]
    with torch.no_grad():
        out = call(*copies)
    for k, (copy, original) in enumerate(zip(copies, xs)):
        if copy._version != versions[k] or (not torch.equal(copy, original)
                                            and not torch.equal(copy.nan_to_num(), original.nan_to_num())):
            raise in_place_refusal(names[k] if names is not None and k < len(names) else None)
    return out


def refuse_changed_arguments(args) -> None:
    """GradLabError if fn changed an argument passed through to it (not checked) in place
    (``args``: :class:`gradlab.check.inputs.arguments.Arguments`, whose tensors are copies)."""
    name = args.changed_in_place()
    if name is not None:
        raise in_place_refusal(name, checked=False)


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

    def output():
        with torch.no_grad():
            return _flat(t for _, t in output_parts(call(*[t.detach().clone() for t in xs])))

    second = output()
    if _differs(first, second, eps):
        largest = float((first - second).abs().nan_to_num(nan=math.inf).max()) if first.shape == second.shape \
            else math.inf
        blamed = state_blamed(output, lambda a, b: _differs(a, b, eps))
        if blamed:
            raise GradLabError(
                f"fn changes {_listed(blamed)} at every call, so its output at the same input differs "
                f"between calls (largest difference {largest:.3g}) and finite differences would measure "
                "that instead of the derivative: a module in training mode updates its state as it runs "
                "(spectral_norm's power iteration, a running statistic used in the output), or fn writes "
                "to a tensor it holds; call model.eval() before the check, or keep fn from writing it. "
                "The check put them back as they were.")
        raise GradLabError(
            "fn gives different outputs on two calls at the same input (largest difference "
            f"{largest:.3g}): it draws random numbers "
            "(dropout or another layer in training mode, torch.rand, an RNG) or keeps state between "
            "calls, so finite differences would measure that instead of the derivative; use "
            "model.eval() or training=False, or seed the generator inside fn.")


def _listed(names: list[str], most: int = 4) -> str:
    """``a``, ``a and b``, ``a, b and c``, ``a, b, c, d and 3 more``."""
    shown = names[:most] + ([f"{len(names) - most} more"] if len(names) > most else [])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def require_usable_step(eps: float | None, values: torch.Tensor, dtype: torch.dtype) -> None:
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
