"""The output weights of a check: the loss it differentiates is ``L = Σ_j v_j·y_j``.

``grad_outputs`` names v: ``"random"`` (the default: :func:`random_weights`, a seeded random
sign times a size from :data:`WEIGHT_SIZES` for each output value, so the backward under test
receives a grad_output that is not all ones), ``"ones"`` (the plain sum), or a tensor (or a
tuple, list or dict like fn's output). For reduction ``sum`` and ``mean``,
:func:`weighted_outputs` multiplies fn's outputs by v as fn returns them (one value per
evaluation, as cheap as a plain sum); for ``none`` :func:`grad_outputs_vector` gives the flat v
the check contracts with.

>>> v = random_weights(6, seed=0)
>>> torch.equal(v, random_weights(6, seed=0)), set(v.abs().tolist()) <= set(WEIGHT_SIZES)
(True, True)
"""

from __future__ import annotations

import threading
from typing import Callable

import torch

from gradlab.check.inputs.outputs import OutputLayout, output_parts
from gradlab.check.inputs.validation import GRAD_OUTPUTS, choose
from gradlab.errors import GradLabError

__all__ = ["WEIGHT_SIZES", "random_weights", "grad_outputs_vector", "weighted_outputs"]

#: The sizes of the random weights (``grad_outputs="random"``), each with a random sign:
#: between 1/2 and 2, so no output is weighted near 0 and none outweighs another by more
#: than 4; at least 1/4 away from 1, so a backward that ignores its grad_output is 25 % off
#: or more even on a one-value output; multiples of 1/8 of at most 3 significant bits, so
#: every weight is exact in every floating dtype (float8 included) and fn and its float64
#: twin are weighted alike.
WEIGHT_SIZES = (0.5, 0.625, 0.75, 1.25, 1.5, 1.75, 2.0)


def random_weights(numel: int, seed: int) -> torch.Tensor:
    """The seeded random ``grad_outputs`` (float64, flat): for each output value a random sign
    times a size drawn from :data:`WEIGHT_SIZES`. The same ``seed`` gives the same weights.

    >>> v = random_weights(6, seed=0)
    >>> torch.equal(v, random_weights(6, seed=0)), set(v.abs().tolist()) <= set(WEIGHT_SIZES)
    (True, True)
    """
    gen = torch.Generator().manual_seed(seed + 1)
    sizes = torch.tensor(WEIGHT_SIZES, dtype=torch.float64)
    size = sizes[torch.randint(len(WEIGHT_SIZES), (numel,), generator=gen)]
    return torch.where(torch.randint(2, (numel,), generator=gen) == 1, size, -size)


def grad_outputs_vector(spec, out, layout: OutputLayout, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """The flat (layout.numel,) weights v: a tensor (or a tuple/list/dict like the output), or a name."""
    if not isinstance(spec, str):
        shapes = [tuple(t.shape) for _, t in output_parts(spec)] if not isinstance(spec, torch.Tensor) \
            else [tuple(spec.shape)]
        if shapes != [tuple(t.shape) for _, t in output_parts(out)]:
            raise GradLabError(f"grad_outputs has shape(s) {shapes} but the output has "
                               f"{list(layout.shapes)}; they must match.")
        return layout.flatten(spec).detach().to(dtype)
    choose("grad_outputs", spec, GRAD_OUTPUTS)
    if spec == "ones":
        return torch.ones(layout.numel, dtype=dtype)
    return random_weights(layout.numel, seed).to(dtype)


class _OutputWeights:
    """grad_outputs for reduction sum or mean: fn's output parts multiplied by their weights
    as fn returns them. The weights are made from the first output seen (their layout: every
    floating-point and complex part), then shared by every function this weighs (fn, its
    float64 twin, numeric_fn) and every thread."""

    def __init__(self, spec, seed: int):
        self._spec, self._seed = spec, seed
        self._parts: list[torch.Tensor] | None = None  # float64, each shaped like its part (complex: (..., 2))
        self._cast: dict[tuple[int, torch.dtype], torch.Tensor] = {}
        self._lock = threading.Lock()

    def _weights(self, out) -> list[torch.Tensor]:
        with self._lock:
            if self._parts is None:
                layout = OutputLayout.of(out)
                flat = grad_outputs_vector(self._spec, out, layout, torch.float64, self._seed)
                pieces = torch.split(flat, layout.sizes) if len(layout.sizes) > 1 else [flat]
                self._parts = [w.reshape(*shape, 2) if is_complex else w.reshape(shape)
                               for w, shape, is_complex in zip(pieces, layout.shapes, layout.complex_parts)]
            return self._parts

    def _weight(self, k: int, dtype: torch.dtype) -> torch.Tensor:
        key = (k, dtype)
        w = self._cast.get(key)
        if w is None:  # exact in every dtype (WEIGHT_SIZES); a user's tensor is rounded as fn's output is
            w = self._cast.setdefault(key, self._parts[k].to(dtype))
        return w

    def weigh(self, out):
        """fn's output ``out`` with each floating-point or complex part times its weights."""
        parts = self._weights(out)
        counter = iter(range(len(parts)))

        def times(t: torch.Tensor) -> torch.Tensor:
            k = next(counter, None)
            if k is None:
                raise GradLabError("The function returned differently structured outputs on another "
                                   "call: more floating-point parts than at the first.")
            if t.is_complex() and parts[k].dim() == t.dim() + 1:  # complex at x: its real and imaginary parts
                real = torch.view_as_real(t.resolve_conj())
                return torch.view_as_complex((real * self._weight(k, real.dtype)).contiguous())
            return t * self._weight(k, t.real.dtype if t.is_complex() else t.dtype)

        return _map_parts(out, times)

    def __call__(self, fn: Callable | None) -> Callable | None:
        if fn is None:
            return None

        def weighted(*args):
            return self.weigh(fn(*args))

        weighted.rows = getattr(fn, "rows", None)  # fn's cheap way over many rows, if it has one
        return weighted


def _map_parts(out, f: Callable):
    """``out`` (a tensor, or a tuple, list or dict of them, nested) with every floating-point
    or complex tensor replaced by ``f(tensor)``, in :func:`~gradlab.check.inputs.outputs.output_parts`'s order."""
    if isinstance(out, torch.Tensor):
        return f(out) if out.is_floating_point() or out.is_complex() else out
    if isinstance(out, dict):
        return {k: _map_parts(v, f) for k, v in out.items()}
    if isinstance(out, (tuple, list)):
        items = [_map_parts(v, f) for v in out]
        return tuple(items) if isinstance(out, tuple) else items
    return out


def weighted_outputs(call: Callable, numeric_fn: Callable | None, twin, reduction: str, grad_outputs, seed: int):
    """(call, numeric_fn, twin) whose outputs are weighted by ``grad_outputs`` for reduction
    sum or mean, so the check's loss is ``Σ_j v_j·y_j`` (or its mean); unchanged for
    grad_outputs "ones" and for reduction "none" (which contracts with v itself). ``twin``
    builds fn in float64 (or is None): the function it builds is weighted alike.

    >>> call, _, _ = weighted_outputs(lambda t: t * 3, None, None, "sum", "random", 0)
    >>> (call(torch.ones(4, dtype=torch.float64)) / 3).tolist() == random_weights(4, 0).tolist()
    True
    """
    if reduction == "none" or (isinstance(grad_outputs, str) and choose("grad_outputs", grad_outputs,
                                                                          GRAD_OUTPUTS) == "ones"):
        return call, numeric_fn, twin
    weigh = _OutputWeights(grad_outputs, seed)
    return weigh(call), weigh(numeric_fn), (lambda: weigh(twin())) if callable(twin) else twin
