"""Setting a check up: the inputs, the output weights, the autograd side, and the numeric problem.

The loss a check differentiates is ``L = Σ_j v_j·y_j`` over fn's output values y, with
weights v (``grad_outputs``, :mod:`~gradlab.check.inputs.output_weights`): by default seeded random ones (:func:`random_weights`), so the
backward under test receives a grad_output that is not all ones, and a backward that ignores,
drops or mis-scales it disagrees with the finite differences. For reduction ``sum`` and
``mean`` fn's outputs are weighted as it returns them (:func:`weighted_outputs`: the check
then takes the sum or the mean of ``v∘y``, one value per evaluation, as cheap as a plain sum);
for ``none`` every output value is differenced on its own and contracted with v.

The autograd side is one backward pass in the inputs' dtype (float64 out), and says when
the gradient is zero by construction (:class:`ZeroGradient`: nothing was tested);
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

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from gradlab.check.inputs.output_weights import WEIGHT_SIZES, grad_outputs_vector, random_weights, weighted_outputs
from gradlab.check.inputs.outputs import OutputLayout, leave_out, output_parts, without_parts
from gradlab.check.inputs.preconditions import in_place_refusal
from gradlab.check.inputs.validation import validated_step
from gradlab.check.running.batching import BatchedFn, FlatInputs, single_threaded_ops
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS, within_limit, size_limit
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import Scheme, default_step, get_scheme  # noqa: F401 - get_scheme: doctest

__all__ = ["NumericProblem", "AutogradSide", "ZeroGradient", "WEIGHT_SIZES", "random_weights", "weighted_outputs",
           "as_inputs", "validated_inputs", "least_precise", "reduce_outputs", "autograd_gradient", "autograd_side",
           "numeric_problem", "resolve_step"]



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
    # autograd's flat gradient (float64), when set: the points a stencil evaluates are moved
    # back to their nominal places with it (see gradlab.check.differences.stencil.nominal_correction)
    gradient: torch.Tensor | None = None

    @property
    def dtype(self) -> torch.dtype:
        return self.flat.values.dtype

    @functools.cached_property  # read by every evaluator's finish: two torch ops, once
    def loss(self) -> float:
        """L(x) in float64: the reduced value, or for "none" the weighted sum vᵀy."""
        if self.reduction != "none":
            return float(self.base_rows[0, 0])  # exact in float64 from any float dtype, one op
        return float(self.base_rows[0].to(torch.float64) @ self.weights)


def as_inputs(x) -> list[torch.Tensor]:
    """The detached input tensors (a tensor or a sequence of them), refused unless each is
    real floating point of a dtype GradLab knows (they may differ: see FlatInputs)."""
    xs = [x] if isinstance(x, torch.Tensor) else list(x)
    if not xs or not all(isinstance(t, torch.Tensor) for t in xs):
        raise GradLabError("The inputs must be a tensor or a sequence of tensors.")
    return validated_inputs(xs)


def validated_inputs(xs: list[torch.Tensor]) -> list[torch.Tensor]:
    """``xs`` detached, each real floating point of a known dtype, within the element limit."""
    for t in xs:
        if not t.is_floating_point():
            raise GradLabError(f"The checked inputs must be floating-point tensors; got {t.dtype}.")
        facts(t.dtype)  # a dtype GradLab knows
    within_limit("input elements", sum(t.numel() for t in xs), size_limit(LIMITS.tensor_elements))  # the server's
    return [t.detach() for t in xs]


def least_precise(xs: list[torch.Tensor]) -> torch.dtype:
    """The dtype with the largest machine epsilon among the inputs': it sets the step and
    the tolerances of a check of inputs of several dtypes."""
    return max((t.dtype for t in xs), key=lambda d: facts(d).eps)


def reduce_outputs(y: torch.Tensor, reduction: str) -> torch.Tensor:
    """(m, *out) -> (m, 1) for sum/mean in y's dtype, (m, out) for none."""
    flat = y.reshape(y.shape[0], -1)
    if reduction == "sum":
        return flat.sum(dim=1, keepdim=True)
    if reduction == "mean":
        return flat.mean(dim=1, keepdim=True)
    return flat


def autograd_gradient(fn, xs: list[torch.Tensor], reduction: str, grad_outputs, seed: int):
    """Autograd's gradient (flat, float64), the output (its checked parts as one real vector,
    see :class:`~gradlab.check.inputs.outputs.OutputLayout`), and the grad_outputs used ("none" only)."""
    leaves = [t.clone().requires_grad_(True) for t in xs]
    with torch.enable_grad():
        y, target, seed_grad, v = _loss(fn(*leaves), reduction, grad_outputs, seed)
        grads = torch.autograd.grad(target, leaves, grad_outputs=seed_grad, allow_unused=True)
    return _flat_gradient(grads, leaves), y.detach(), v


#: A gradient is zero by construction when its largest element is at most this share of the
#: largest element of the gradient of the same outputs weighted by random signs (capped at
#: 1e-4 for float16 and below): the rounding left of a sum of outputs that is constant.
ZERO_SHARE = 1024


@dataclass(frozen=True)
class ZeroGradient:
    """Autograd's gradient is zero at every element by construction, so a pass tested nothing.

    ``kind`` "cancelled": the weighted outputs add up to a constant (ones on a LayerNorm or a
    softmax: their gradient is rounding, next to ``probe`` for outputs weighted by random
    signs); "flat": the gradient is exactly 0 for any weights (fn does not change here).
    """

    kind: str  # cancelled | flat
    largest: float  # max |autograd's gradient|
    probe: float  # max |gradient| with the same outputs weighted by random signs
    weights: str  # the check's weights, in words

    def worded(self, summary):
        """``summary`` (a pass) as the inconclusive check it is, in words saying why."""
        if self.kind == "flat":
            what = "fn does not change with the checked inputs here"
            details = ("Autograd's gradient is exactly 0 at every element, whatever the weights of the outputs, "
                       "and the finite differences agree: fn is flat at this input (a step function such as "
                       "round or floor, a comparison, a detached path), so no derivative was checked.")
            fixes = ("Check at inputs where fn changes, or over the inputs its output depends on.",)
        else:
            what = "the gradient is zero at every element"
            details = (f"Autograd's gradient is rounding at every element (largest |dL/dx_i| = {self.largest:.3g}, "
                       f"against {self.probe:.3g} for the same outputs weighted by random signs): with "
                       f"{self.weights} the weighted outputs add up to a constant, as a normalisation's do "
                       "(LayerNorm, softmax), so the check compared 0 with 0 and would pass a backward that "
                       "ignored or mis-scaled its grad_output just as well.")
            fixes = ("Use grad_outputs='random' (the default): every output weighted by its own seeded "
                     "random value.", "Or check other inputs, or other weights of the outputs.")
        headline = f"Nothing was tested: {what}."
        diagnosis = dataclasses.replace(summary.diagnosis, kind="vacuous", level="warning", headline=headline,
                                        details=details, fixes=fixes)
        return dataclasses.replace(
            summary, verdict="inconclusive", vacuous=True, diagnosis=diagnosis,
            headline=f"Gradient check inconclusive: {what} (nothing was tested).",
            message=f"Gradient check inconclusive: {what}, so nothing was tested. {details}", hint=fixes[0])


@dataclass(frozen=True, eq=False)
class AutogradSide:
    """What a check takes from autograd, from one forward pass of fn at the user's input."""

    call: Callable  # fn with the output parts that need no gradient left out (differentiable_only)
    gradient: torch.Tensor  # flat, float64
    again: torch.Tensor  # the same backward run a second time on the same graph (its nondeterminism)
    output: torch.Tensor  # the checked output parts as one real vector
    parts: list[torch.Tensor]  # every output part of that forward pass, detached (repeatability compares them)
    weights: torch.Tensor | None  # grad_outputs ("none" only)
    zero: ZeroGradient | None = None  # the gradient is zero by construction: a pass tests nothing

    def verdict(self, verdict: str) -> str:
        """The check's verdict from its values' ``verdict``: inconclusive, not pass, when the
        gradient is zero by construction (a fail or a kink stands)."""
        return "inconclusive" if self.zero is not None and verdict == "pass" else verdict

    def worded(self, summary):
        """The check's summary from its values' ``summary``: see :meth:`verdict`."""
        return self.zero.worded(summary) if self.zero is not None and summary.verdict == "pass" else summary


def autograd_side(call, xs: list[torch.Tensor], reduction: str, grad_outputs, seed: int) -> AutogradSide:
    """One forward pass of ``call`` at ``xs`` with grad, and its backward twice on that graph
    (``retain_graph``, as torch's gradcheck checks a backward's reentrance). What
    :func:`~gradlab.check.inputs.outputs.differentiable_only` and two :func:`autograd_gradient` calls
    give, with one forward pass instead of three: the output parts that do not require grad are
    left out of the loss and of the returned ``call``.

    When the weights are not random (ones, or a tensor given), or the gradient is exactly 0, a
    third backward weights the same outputs by random signs: a gradient that is rounding next to
    that one is zero by construction (:class:`ZeroGradient`).

    >>> side = autograd_side(lambda t: (t ** 2, t.detach()), [torch.tensor([1.0, 2.0])], "sum", "ones", 0)
    >>> side.gradient.tolist(), side.again.tolist(), side.call.left_out, side.zero
    ([2.0, 4.0], [2.0, 4.0], frozenset({'out[1]'}), None)
    >>> x = torch.randn(3, 5, dtype=torch.float64)
    >>> autograd_side(lambda t: torch.softmax(t, -1), [x], "sum", "ones", 0).zero.kind
    'cancelled'
    """
    leaves = [t.clone().requires_grad_(True) for t in xs]
    with torch.enable_grad():
        try:
            out = call(*leaves)
        except RuntimeError as err:  # an in-place op on an input that only runs with grad: one sentence
            if "leaf Variable that requires grad is being used in an in-place operation" in str(err):
                raise in_place_refusal() from err
            raise
        parts = output_parts(out)
        every = [t.detach() for _, t in parts]
        constant = frozenset(name for name, t in parts if not t.requires_grad)
        if constant and len(constant) < len(parts):
            call, out = leave_out(call, constant), without_parts(out, constant)
        y, target, seed_grad, v = _loss(out, reduction, grad_outputs, seed)
        first = torch.autograd.grad(target, leaves, grad_outputs=seed_grad, allow_unused=True, retain_graph=True)
        gradient = _flat_gradient(first, leaves)
        largest = float(gradient.abs().max()) if gradient.numel() else math.nan
        probe = _suspect(largest, xs, y, grad_outputs)
        again = torch.autograd.grad(target, leaves, grad_outputs=seed_grad, allow_unused=True, retain_graph=probe)
        zero = _zero_gradient(y, leaves, reduction, v, grad_outputs, seed, largest, least_precise(xs)) \
            if probe else None
    return AutogradSide(call, gradient, _flat_gradient(again, leaves), y.detach(), every, v, zero)


def _zero_share(dtype: torch.dtype) -> float:
    """The largest share of the probe's gradient a gradient zero by construction reaches (ZERO_SHARE)."""
    return min(ZERO_SHARE * facts(dtype).unit_roundoff, 1e-4)


def _suspect(largest: float, xs: list[torch.Tensor], y: torch.Tensor, grad_outputs) -> bool:
    """Whether autograd's gradient (its largest element ``largest``) may be zero by construction,
    worth the probe's backward: exactly 0, or, for weights that are not random, so small that
    a step the size of the inputs would move the loss by a rounding's share of its outputs'
    size (``max|g|·max|x| <= share·max|y|``: a LayerNorm's ones-weighted gradient, 1e-16 next
    to 1; an elementwise fn's is of the size of its outputs)."""
    if largest == 0:
        return True
    if (isinstance(grad_outputs, str) and grad_outputs == "random") or not largest == largest:
        return False
    size = max((float(t.abs().max()) for t in xs if t.numel()), default=0.0)
    return largest * size <= _zero_share(least_precise(xs)) * float(y.detach().abs().max())


def _zero_gradient(y, leaves, reduction: str, v, grad_outputs, seed: int, largest: float,
                   dtype: torch.dtype) -> ZeroGradient | None:
    """A :class:`ZeroGradient` when autograd's gradient (its largest element ``largest``) is zero
    by construction: 0, or rounding next to the gradient of the same outputs ``y`` (the checked
    ones, flat, on the graph) weighted by random signs; else None."""
    gen = torch.Generator().manual_seed(seed + 2)
    signs = torch.randint(2, (y.numel(),), generator=gen).to(torch.float64) * 2 - 1
    scale = v.to(torch.float64) if reduction == "none" else torch.full((y.numel(),), 1.0 / y.numel()
                                                                      if reduction == "mean" else 1.0)
    grads = torch.autograd.grad(y, leaves, grad_outputs=(signs * scale).to(y.dtype), allow_unused=True)
    probe = float(_flat_gradient(grads, leaves).abs().max())
    if largest == 0 and probe == 0:
        kind = "flat"
    elif largest <= _zero_share(dtype) * probe:
        kind = "cancelled"
    else:
        return None
    weights = ("grad_outputs 'ones'" if isinstance(grad_outputs, str) and grad_outputs == "ones" else
               "these grad_outputs" if isinstance(grad_outputs, str) else "the grad_outputs given")
    return ZeroGradient(kind, largest, probe, weights)


def _loss(out, reduction: str, grad_outputs, seed: int):
    """(y, the tensor to differentiate, its grad_outputs, v) for fn's output ``out``."""
    layout = OutputLayout.of(out)
    y = layout.flatten(out)
    if not y.requires_grad:
        raise GradLabError("The function's output does not depend on its inputs through "
                           "autograd (was something detached or computed under no_grad?).")
    if reduction == "none":
        v = grad_outputs_vector(grad_outputs, out, layout, y.dtype, seed)
        return y, y, v, v
    return y, (y.sum() if reduction == "sum" else y.mean()), None, None


def _flat_gradient(grads, leaves) -> torch.Tensor:
    flat = [(g if g is not None else torch.zeros_like(t)).reshape(-1).to(torch.float64) for g, t in zip(grads, leaves)]
    return (flat[0] if len(flat) == 1 else torch.cat(flat)).detach()  # one leaf: no copy


def numeric_problem(fn, xs, reduction, v, scheme: Scheme, step: float, numeric_dtype: torch.dtype | None,
                    like: NumericProblem | None = None, names=None, complex_parts=None,
                    few_rows: bool = False, flat: FlatInputs | None = None, at_x=None,
                    gradient: torch.Tensor | None = None) -> NumericProblem:
    """The numeric side of a check; ``like`` shares its inputs and batched fn (and the
    strategy it chose), so problems differing only in reduction run fn alike.
    ``numeric_dtype`` None keeps each input's own dtype; ``names`` and ``complex_parts``
    label the elements (see FlatInputs); ``few_rows``: the check evaluates only a few
    perturbed points (BatchedFn's); ``flat``: xs as FlatInputs already (with these names);
    ``at_x``: fn's output at xs from an earlier call (BatchedFn's); ``gradient``: NumericProblem's."""
    if like is None and flat is None:
        cast = xs if numeric_dtype is None else [t.to(numeric_dtype) for t in xs]
        flat = FlatInputs.of(cast, names, complex_parts)
    elif like is not None:
        flat = like.flat
    batched = BatchedFn(fn, flat, few_rows, at_x) if like is None else like.batched
    with single_threaded_ops():  # fn at x (and the strategy's choice): small ops (see evaluation.run_chunks)
        base = reduce_outputs(batched.at_input(flat.values.dtype), reduction)
    weights = None if v is None else v.to(base.dtype).to(torch.float64).reshape(-1)
    sizes = None if weights is None else (weights * base[0].to(torch.float64)).abs()
    return NumericProblem(flat, batched, reduction, weights, scheme, step, base, sizes, gradient)


def resolve_step(eps, scheme: Scheme, dtype: torch.dtype, values: torch.Tensor) -> float:
    """``eps``, or the scheme's default step for the dtype at the inputs' rms size."""
    if validated_step(eps) is not None:
        return float(eps)
    n = values.numel()  # the rms, in one op: torch.linalg.vector_norm accumulates in float64
    if not n:
        typical = 1.0
    elif values.dtype == torch.float64 and values.dim() == 1:  # numpy: a third of the torch op's cost
        flat = values.numpy()
        # a pairwise sum, not the dot: OpenBLAS's dot splits past 10,000 elements over threads
        # that then spin, doubling a check's CPU time on 2 cores (torch's own are held to one)
        typical = math.sqrt(float(np.square(flat).sum()) / n)
    else:
        typical = float(torch.linalg.vector_norm(values, dtype=torch.float64)) / math.sqrt(n)
    return default_step(scheme, dtype, typical)
