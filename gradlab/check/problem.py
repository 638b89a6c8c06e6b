"""Setting a check up: the inputs, the autograd side, and the numeric problem.

The autograd side is one backward pass in the inputs' dtype (float64 out);
the numeric side (:class:`NumericProblem`) holds everything the finite
differences need, in the numeric dtype: the flattened inputs, fn batched over
perturbed copies, the reduction, the ``grad_outputs`` weights, the scheme and
the step, and the reduced value(s) at x.

>>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
>>> g, y, v = autograd_gradient(lambda t: t ** 2, [x], "sum", "ones", 0)
>>> g.tolist(), v is None
([2.0, 4.0], True)
>>> p = numeric_problem(lambda t: t ** 2, [x], "sum", v, get_scheme("central"), 1e-3, torch.float64)
>>> p.base_rows.tolist(), p.loss
([[5.0]], 5.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gradlab.check.batching import BatchedFn, FlatInputs, single_threaded_ops
from gradlab.check.validation import GRAD_OUTPUTS, check_step, choose
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS, check_limit
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import Scheme, default_step, get_scheme  # noqa: F401 - get_scheme: doctest

__all__ = ["NumericProblem", "as_inputs", "reduce_outputs", "autograd_gradient", "numeric_problem",
           "resolve_step"]


@dataclass(frozen=True, eq=False)
class NumericProblem:
    """Everything the numeric side needs, in the numeric dtype."""

    flat: FlatInputs
    batched: BatchedFn
    reduction: str
    weights: torch.Tensor | None  # float64 grad_outputs, flattened ("none" only)
    scheme: Scheme
    step: float
    base_rows: torch.Tensor  # (1, out) reduced value(s) at x, numeric dtype
    output_sizes: torch.Tensor | None  # (out,) float64 |v_j y_j(x)| ("none" only)

    @property
    def dtype(self) -> torch.dtype:
        return self.flat.values.dtype

    @property
    def loss(self) -> float:
        """L(x) in float64: the reduced value, or for "none" the weighted sum vᵀy."""
        base = self.base_rows.to(torch.float64)
        return float(base[0] @ self.weights) if self.reduction == "none" else float(base[0, 0])


def as_inputs(x) -> list[torch.Tensor]:
    """The detached input tensors, refused unless real floating point of one known dtype."""
    xs = [x] if isinstance(x, torch.Tensor) else list(x)
    if not xs or not all(isinstance(t, torch.Tensor) for t in xs):
        raise GradLabError("The inputs must be a tensor or a sequence of tensors.")
    dtypes = {t.dtype for t in xs}
    if len(dtypes) != 1 or not next(iter(dtypes)).is_floating_point:
        raise GradLabError("All inputs must be real floating-point tensors of one dtype; got "
                           f"{sorted(str(d) for d in dtypes)}.")
    facts(next(iter(dtypes)))  # a dtype GradLab knows
    check_limit("input elements", sum(t.numel() for t in xs), LIMITS.tensor_elements)
    return [t.detach() for t in xs]


def reduce_outputs(y: torch.Tensor, reduction: str) -> torch.Tensor:
    """(m, *out) -> (m, 1) for sum/mean in y's dtype, (m, out) for none."""
    flat = y.reshape(y.shape[0], -1)
    if reduction == "sum":
        return flat.sum(dim=1, keepdim=True)
    if reduction == "mean":
        return flat.mean(dim=1, keepdim=True)
    return flat


def _grad_outputs(spec, out_shape: torch.Size, dtype: torch.dtype, seed: int) -> torch.Tensor:
    if isinstance(spec, torch.Tensor):
        if spec.shape != out_shape:
            raise GradLabError(f"grad_outputs has shape {tuple(spec.shape)} but the output has "
                               f"shape {tuple(out_shape)}; they must match.")
        return spec.detach().to(dtype)
    choose("grad_outputs", spec, GRAD_OUTPUTS)
    if spec == "ones":
        return torch.ones(out_shape, dtype=dtype)
    gen = torch.Generator().manual_seed(seed + 1)
    return torch.randn(out_shape, generator=gen, dtype=torch.float64).to(dtype)


def autograd_gradient(fn, xs: list[torch.Tensor], reduction: str, grad_outputs, seed: int):
    """Autograd's gradient (flat, float64), the output, and the grad_outputs used ("none" only)."""
    leaves = [t.clone().requires_grad_(True) for t in xs]
    with torch.enable_grad():
        y = fn(*leaves)
        if not isinstance(y, torch.Tensor) or not y.is_floating_point():
            raise GradLabError("The function must return a real floating-point tensor.")
        if not y.requires_grad:
            raise GradLabError("The function's output does not depend on its inputs through "
                               "autograd (was something detached or computed under no_grad?).")
        v = None
        if reduction == "none":
            v = _grad_outputs(grad_outputs, y.shape, y.dtype, seed)
            target, seed_grad = y, v
        else:
            target = y.sum() if reduction == "sum" else y.mean()
            seed_grad = None
        grads = torch.autograd.grad(target, leaves, grad_outputs=seed_grad, allow_unused=True)
    flat = torch.cat([(g if g is not None else torch.zeros_like(t)).reshape(-1)
                      for g, t in zip(grads, leaves)])
    return flat.detach().to(torch.float64), y.detach(), v


def numeric_problem(fn, xs, reduction, v, scheme: Scheme, step: float, numeric_dtype: torch.dtype,
                    like: NumericProblem | None = None) -> NumericProblem:
    """The numeric side of a check; ``like`` shares its inputs and batched fn (and the
    strategy it probed), so problems differing only in reduction run fn alike."""
    flat = FlatInputs.of([t.to(numeric_dtype) for t in xs]) if like is None else like.flat
    batched = BatchedFn(fn, flat) if like is None else like.batched
    with single_threaded_ops():  # the strategy probe: small ops (see evaluation.run_chunks)
        base = reduce_outputs(batched(flat.values[None, :]), reduction)
    weights = None if v is None else v.to(numeric_dtype).to(torch.float64).reshape(-1)
    sizes = None if weights is None else (weights * base[0].to(torch.float64)).abs()
    return NumericProblem(flat, batched, reduction, weights, scheme, step, base, sizes)


def resolve_step(eps, scheme: Scheme, dtype: torch.dtype, values: torch.Tensor) -> float:
    """``eps``, or the scheme's default step for the dtype at the inputs' rms size."""
    if check_step(eps) is not None:
        return float(eps)
    typical = float(values.to(torch.float64).pow(2).mean().sqrt()) if values.numel() else 1.0
    return default_step(scheme, dtype, typical)
