"""fn in float64 beside the check: a second witness for the finite differences, and the
measure of autograd's own rounding in the working dtype.

A check in float32, bfloat16 or float16 re-estimates the values it cannot decide with
float64 finite differences, where fn runs in float64 (:func:`float64_twin`): an
``nn.Module`` is copied and cast (``deepcopy(module).double()``), floating-point tensors
passed through to fn are cast with the checked inputs, and ``numeric_fn`` (a float64
twin written by the user) takes precedence. The same twin's autograd gradient at the
same point (the inputs cast up, exactly) measures how far autograd in the working dtype
is from its float64 value (:func:`autograd_in_float64`).

That distance is autograd's own rounding, and also any error of a backward that is wrong
only below float64 (a fast path that drops a term, a cast to float16 inside a float32
backward, a loss scale undone twice): the twin's backward takes the right path, so the
distance alone cannot tell the two apart. It is therefore allowed for only up to what
rounding can produce (:class:`AutogradRounding`), a bound measured the way Monte Carlo
arithmetic does (Parker, Pierce and Eggert 2000): fn's backward is run again
:data:`ROUNDING_RUNS` times with every operation's floating-point inputs and outputs
re-rounded at random (:class:`Rerounded`), which is the backward-error model of a stable
kernel (its result is the exact one of inputs each off by a relative u) plus its own
output's rounding, and the bound is :data:`ROUNDING_SAFETY` times the root-mean-square
spread of those runs. In the twin each value moves by u·U(-1, 1) of itself, u the checked
dtype's unit round-off; without a twin fn runs in its own dtype with each value moved one
ulp either way (rounding again, not a model of it: no finer dtype is there to perturb).
Values in a dtype less precise than the checked one are not moved: rounding there is not
the checked dtype's, so a float32 backward computing in float16 is no rounding of float32.

>>> lin = torch.nn.Linear(3, 1).to(torch.bfloat16)
>>> x = torch.ones(2, 3, dtype=torch.bfloat16)
>>> from gradlab.check.inputs.arguments import parse_arguments
>>> twin = float64_twin(lin, parse_arguments(lin, (x,), None), None, None)
>>> twin(x.double()).dtype
torch.float64
"""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Callable

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from gradlab.check.inputs.arguments import Arguments, module_arguments
from gradlab.check.inputs.outputs import OutputLayout
from gradlab.check.running.blocks import contract, covered
from gradlab.check.running.problem import NumericProblem, numeric_problem, resolve_step

__all__ = ["float64_twin", "autograd_in_float64", "float64_problem", "ROUNDING_RUNS", "ROUNDING_SAFETY",
           "Rerounded", "AutogradRounding", "autograd_rounding"]


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


#: Backward passes run again with their rounding perturbed (:class:`AutogradRounding`).
ROUNDING_RUNS = 4
#: Autograd's own rounding is allowed for up to this many times the root-mean-square spread of
#: those runs. Measured on the stock-module corpus (gradlab.testing.modules and
#: nn.LinearCrossEntropyLoss, over parameters and inputs, outputs weighted by ones and by random
#: weights: 5,508 gradient elements per dtype), |autograd - float64 autograd| / spread of the
#: twin's runs: median 0.44, 0.28, 0.25 in float32, bfloat16, float16; maximum 12.1, 5.3, 12.9
#: (float32's GELU, whose erf and exp are a few ulps off rather than one rounding; float16's fused
#: linear_cross_entropy), and 4.0 and 5.6 where the rounding is over a tenth of bfloat16's and
#: float16's tolerance. Of the runs in the dtype itself (no twin): median 0.16, 0.11, 0.10,
#: maximum 5.8, 3.7, 5.7. 20 is 1.5 times the largest ratio seen and 3.6 times the largest that
#: matters; every backward wrong only below float64 in tests/test_low_precision_bugs.py and
#: gradlab.testing.functions still fails at 30 (at 100 bfloat16's LayerNorm fast path passes).
ROUNDING_SAFETY = 20.0

#: aten operations whose results are exact (copies, selections, signs, constants, comparisons,
#: indices, integer parts): nothing rounds there, so nothing is perturbed (a relu, a max or a
#: comparison fed a moved input could flip: a label compared with == is no rounding).
_EXACT = frozenset((
    "eq ne lt le gt ge isnan isinf isfinite isneginf isposinf signbit logical_and logical_or logical_not "
    "logical_xor argmax argmin nonzero bucketize searchsorted any all equal floor ceil round trunc "
    "clone copy cat stack index_select gather index index_put _unsafe_index neg abs relu threshold_backward "
    "where masked_fill max min amax amin maximum minimum clamp clamp_min clamp_max sort topk sign zeros_like "
    "ones_like empty_like full_like zeros ones empty full fill new_zeros new_ones new_empty new_full "
    "scalar_tensor lift_fresh lift_fresh_copy repeat flip roll constant_pad_nd embedding detach "
    "select_backward slice_backward max_pool2d_with_indices max_pool2d_with_indices_backward contiguous "
    "im2col col2im pixel_shuffle pixel_unshuffle masked_select scatter tril triu eye arange expand_copy "
    "permute_copy view_copy detach_copy _unsafe_view rand randn rand_like randn_like bernoulli").split())


class Rerounded(TorchDispatchMode):
    """Every aten operation's floating-point inputs and outputs moved as rounding in ``dtype``
    moves them: values more precise than dtype (a float64 twin's) by u·U(-1, 1) of themselves,
    values in dtype one ulp either way (zeros and non-finite values stay), values less precise
    than dtype not at all. In-place operations, views and exact ones (:data:`_EXACT`) run as
    they are; a cast rounds only when it narrows.

    >>> x = torch.linspace(1, 2, 5, dtype=torch.float64)
    >>> with Rerounded(torch.float32, torch.Generator().manual_seed(0)):
    ...     y = x * 3
    >>> bool(((y / (x * 3) - 1).abs() <= 2 * 2.0 ** -24 + 1e-15).all()) and not torch.equal(y, x * 3)
    True
    """

    def __init__(self, dtype: torch.dtype, generator: torch.Generator):
        super().__init__()
        self.eps, self.generator = torch.finfo(dtype).eps, generator

    def moved(self, t):
        """``t`` re-rounded (any other value as it is)."""
        if not isinstance(t, torch.Tensor) or not (t.is_floating_point() or t.is_complex()) or not t.numel():
            return t
        eps = torch.finfo(t.dtype).eps
        if eps > self.eps:
            return t
        real = torch.view_as_real(t) if t.is_complex() else t
        if eps == self.eps:
            up = torch.rand(real.shape, generator=self.generator) < 0.5
            inf = torch.tensor(math.inf, dtype=real.dtype)
            moved = torch.nextafter(real, torch.where(up, inf, -inf))
            moved = torch.where(torch.isfinite(moved) & (real != 0), moved, real)
        else:
            xi = torch.rand(real.shape, generator=self.generator, dtype=torch.float64) * 2 - 1
            moved = (real.to(torch.float64) * (1 + self.eps / 2 * xi)).to(real.dtype)
        return torch.view_as_complex(moved) if t.is_complex() else moved

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name, schema = func._overloadpacket.__name__, func._schema
        if name in _EXACT or schema.is_mutable or any(r.alias_info is not None for r in schema.returns):
            return func(*args, **kwargs)
        if name == "_to_copy":
            out = func(*args, **kwargs)
            source = args[0] if args else None
            return self.moved(out) if _narrows(source, out) else out
        args, kwargs = tree_map(self.moved, (args, kwargs))
        return tree_map(self.moved, func(*args, **kwargs))


def _inexact(t) -> bool:
    return isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())


def _narrows(source, out) -> bool:
    """A cast from ``source`` to ``out`` rounds (a floating dtype to a less precise one)."""
    return _inexact(source) and _inexact(out) and torch.finfo(source.dtype).eps < torch.finfo(out.dtype).eps


def _gradient(fn: Callable, xs, reduction: str, v) -> torch.Tensor:
    """fn's flat gradient (float64) at ``xs`` with ``reduction`` and grad_outputs ``v``."""
    leaves = [t.detach().clone().requires_grad_(True) for t in xs]
    with torch.enable_grad():
        y = OutputLayout.of(out := fn(*leaves)).flatten(out)
        if reduction == "none":
            grads = torch.autograd.grad(y, leaves, grad_outputs=v.to(y.dtype), allow_unused=True)
        else:
            grads = torch.autograd.grad(y.sum() if reduction == "sum" else y.mean(), leaves, allow_unused=True)
    return torch.cat([(g if g is not None else torch.zeros_like(t)).reshape(-1).to(torch.float64)
                      for g, t in zip(grads, leaves)]).detach()


def _difference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a - b, 0 where both are the same non-finite value, inf where only one is not finite."""
    same = (a == b) | (a.isnan() & b.isnan())
    return torch.where(same, torch.zeros_like(a), a - b).nan_to_num(nan=math.inf)


class AutogradRounding:
    """Autograd's own rounding in the checked dtype, allowed for per checked value (an element,
    or a direction's ∇L·v): with a float64 twin, the distance of autograd ``g`` from the twin's
    ``g64`` up to ROUNDING_SAFETY times the spread of ``rerun()`` (one backward pass with
    perturbed rounding, :class:`Rerounded`) over ROUNDING_RUNS runs; without a twin the bound
    alone. Measured when first asked for: most checks agree within the tolerance and never ask.
    When the runs cannot be made, the distance itself with a twin (NaN without: the caller's
    model)."""

    def __init__(self, rerun: Callable[[], torch.Tensor], g: torch.Tensor, g64: torch.Tensor | None,
                 index: torch.Tensor | None = None, directions: torch.Tensor | None = None):
        self._rerun, self.g, self.g64 = rerun, g, g64
        self.index, self.directions = index, directions
        self._spread: tuple | None = None  # (per element, per direction or None), or () when not measurable

    @property
    def twin(self) -> bool:
        return self.g64 is not None

    @property
    def measured(self) -> str:
        """"yes" (the runs were made), "no" (they could not be) or "unneeded" (never asked for)."""
        return "unneeded" if self._spread is None else "yes" if self._spread else "no"

    def _measure(self) -> tuple:
        if self._spread is None:
            reference = self.g64 if self.twin else self.g
            try:
                runs = [_difference(self._rerun(), reference) for _ in range(ROUNDING_RUNS)]
            except Exception:  # noqa: BLE001 - fn under a dispatch mode (vmap, compile, numpy): not measurable
                self._spread = ()
                return self._spread
            deltas = torch.stack(runs)
            checked = self._checked()  # a skipped non-finite input's element may be inf: never read
            along = None
            if self.directions is not None:  # 0 where no direction reads (inf there would make 0·inf NaN)
                inside = torch.zeros_like(deltas).index_copy_(1, checked, deltas[:, checked])
                along = contract(self.directions, inside).pow(2).mean(0).sqrt()
            self._spread = (deltas.pow(2).mean(0).sqrt(), along)
        return self._spread

    def _checked(self) -> torch.Tensor:
        """The flat elements the check's values are made of."""
        if self.directions is None:
            return self.index
        return covered(self.directions)

    def _allowed(self, distance: torch.Tensor | None, spread: torch.Tensor | None) -> np.ndarray:
        if spread is None:
            return distance.numpy() if distance is not None else np.full(len(self.g), np.nan)
        bound = ROUNDING_SAFETY * spread
        return (bound if distance is None else torch.minimum(distance, bound)).numpy()

    def element_spread(self) -> torch.Tensor | None:
        """Each element's measured spread (the root-mean-square of the re-rounded runs' distances),
        or None when the runs could not be made."""
        spread = self._measure()
        return spread[0] if spread else None

    def elements(self) -> np.ndarray:
        """The allowance per element of the gradient."""
        spread = self._measure()
        distance = None if not self.twin else _difference(self.g, self.g64).abs()
        return self._allowed(distance, spread[0] if spread else None)

    def __getitem__(self, rows) -> torch.Tensor:
        return torch.from_numpy(self.elements())[rows]

    def rows(self) -> np.ndarray:
        """The allowance per checked value: the elements ``index`` or the ``directions``."""
        if self.directions is None:
            return self.elements()[self.index.numpy()]
        spread = self._measure()
        distance = None if not self.twin else contract(self.directions, _difference(self.g, self.g64)).abs()
        return self._allowed(distance, spread[1] if spread else None)

    def largest(self) -> tuple[float, float, int]:
        """(largest distance from float64 autograd, largest bound, elements beyond their bound), measured."""
        spread, checked = self._measure(), self._checked()
        distance = (_difference(self.g, self.g64).abs() if self.twin else torch.zeros_like(self.g))[checked]
        if not spread or not checked.numel():
            return float(distance.max()) if checked.numel() else 0.0, math.nan, 0
        bound = ROUNDING_SAFETY * spread[0][checked]
        return float(distance.max()), float(bound.max()), int((distance > bound).sum())


def autograd_rounding(call: Callable, twin: Callable | None, xs, reduction: str, v, g: torch.Tensor,
                      g64: torch.Tensor | None, dtype: torch.dtype, index=None, directions=None) -> AutogradRounding:
    """Autograd's rounding of a check in ``dtype`` (below float64): measured in the ``twin`` when
    ``g64`` (its autograd) is known, else by ``call`` itself in dtype."""
    seeded = torch.Generator().manual_seed(0)
    if g64 is not None:
        wide = [t.detach().to(torch.float64) for t in xs]
        v64 = None if v is None else v.to(torch.float64)

        def rerun():
            with Rerounded(dtype, seeded):
                return _gradient(twin, wide, reduction, v64)
    else:
        def rerun():
            with Rerounded(dtype, seeded):
                return _gradient(call, xs, reduction, v)
    return AutogradRounding(rerun, g, g64, index, directions)
