"""Forward-mode AD (Jacobian-vector products) checked against finite differences.

:func:`forward_mode_twin` turns ``fn`` into a function that computes exactly what
``fn`` computes, but whose *backward* is assembled from forward-mode AD: column
``i`` of the Jacobian is the JVP along the unit vector ``e_i`` (``torch.func.jvp``
under ``vmap``, or one ``torch.autograd.forward_ad`` dual pass per column when a
function cannot be vmapped, e.g. an ``autograd.Function`` without
``setup_context``), and the vector–Jacobian product the check asks for is
``Σ_i (vᵀ J e_i) e_i``. Running :func:`gradlab.check.running.engine.check_gradient` on the twin
therefore compares forward mode, not reverse mode, with the finite differences
of ``fn``, through every mode, reduction, tolerance and verdict the check has,
and returns the same :class:`~gradlab.check.verdicts.results.CheckResult`. The finite
differences never see the twin's backward: the check evaluates them without
grad, where the twin is ``fn`` itself.

Cost: one JVP per checked column (vectorised in chunks when vmap works). A
sampled check asks only for its sampled elements' columns (the twin's backward
leaves the others 0, and the check never reads them): its cost does not grow
with the input. Full and directional checks need every column, so they are
limited by ``LIMITS.full_check_elements`` like a full check.

>>> x = torch.linspace(-1, 1, 5, dtype=torch.float64)
>>> check_forward_mode(torch.sin, x, mode="full", taylor=False).verdict
'pass'
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Callable, Sequence

import torch
import torch.autograd.forward_ad as fwAD
from torch.func import jvp, vmap

from gradlab.check.inputs.flat_inputs import FlatInputs
from gradlab.check.inputs.skipped import Skipped
from gradlab.check.running.engine import check_gradient, perturbations
from gradlab.check.verdicts.results import CheckResult
from gradlab.limits import LIMITS, within_limit

__all__ = ["forward_mode_twin", "forward_mode_gradient", "check_forward_mode"]

#: Elements of the stacked JVP outputs (chunk × outputs) one vmapped call may hold.
_CHUNK_ELEMENTS = 2**20


def check_forward_mode(fn: Callable, inputs: torch.Tensor | Sequence, *, wrt=None,
                       names: Sequence[str] | None = None, **options) -> CheckResult:
    """The first-order check's verdict on ``fn``'s forward-mode AD instead of its backward.

    ``inputs`` and ``wrt`` are read as :func:`gradlab.check.running.engine.check_gradient` reads them
    (pass-through arguments; complex inputs through their real views, so a JVP along a
    real or an imaginary direction; ``names`` overrides the checked inputs' names); fn's
    output parts that do not require grad are left out, as torch leaves them. ``options``
    are check_gradient's. In the result the ``autograd`` column holds forward mode's value
    (``vᵀJ e_i`` per element, or its directional contraction).

    >>> check_forward_mode(lambda a, b: a @ b, [torch.ones(2, 3, dtype=torch.float64),
    ...                    torch.ones(3, 2, dtype=torch.float64)], mode="full", taylor=False).passed
    True
    >>> check_forward_mode(torch.view_as_complex, torch.ones(2, 2, dtype=torch.float64),
    ...                    mode="full", taylor=False).verdict
    'pass'
    """
    from gradlab.check.further.second_order import checked_call, named

    call, xs, arg_names = checked_call(fn, inputs, wrt, names)
    columns = None
    defaults = inspect.signature(check_gradient).parameters
    skipped = Skipped.of(FlatInputs.of(xs))  # elements holding ±inf or NaN: the check reads no column of theirs
    if options.get("mode", defaults["mode"].default) == "sampled":  # the check's own draw: the same elements
        draw = perturbations if skipped is None else skipped.over_kept(perturbations)
        columns = draw("sampled", sum(t.numel() for t in xs), options.get("samples", defaults["samples"].default),
                       options.get("seed", defaults["seed"].default))[0]
    elif skipped is not None:
        columns = skipped.kept
    twin = forward_mode_twin(call, columns)
    named(twin, arg_names)  # the table names the elements as fn does
    _forward_ad_loaded()
    return check_gradient(twin, xs, **options)


@functools.cache
def _forward_ad_loaded() -> None:
    """Torch loads its forward-AD decompositions at the first ``make_dual`` of a process, and
    that calls ``torch.jit.script``, which warns (DeprecationWarning, torch 2.13) from torch's
    own code: a caller running with warnings as errors got it out of the check as an exception.
    Done once here, public API only, with that warning ignored (the filter is process-wide for
    the instant it takes, as ``warnings.catch_warnings`` is)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*", category=DeprecationWarning)
        with fwAD.dual_level():
            fwAD.make_dual(torch.zeros(1), torch.zeros(1))


def forward_mode_twin(fn: Callable, columns: torch.Tensor | None = None) -> Callable:
    """``fn`` itself, except that gradients through it are computed with forward-mode AD.

    The twin returns what ``fn`` returns (a tensor, or a tuple, list or dict of
    tensors); called without grad, or on inputs that require none, it is ``fn``.
    ``columns`` (flat indices over the inputs that require grad, in order) limits the
    backward to those elements' JVPs; the rest of the gradient is 0.

    >>> x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.grad(forward_mode_twin(torch.exp)(x).sum(), x)[0].tolist() == x.exp().tolist()
    True
    """
    @functools.wraps(fn)
    def twin(*args):
        if not (torch.is_grad_enabled() and any(_needs_grad(a) for a in args)):
            return fn(*args)
        structure: list = []
        outputs = _JvpBackward.apply(fn, structure, columns, *args)
        return _rebuild(structure[0], outputs)

    return twin


def forward_mode_gradient(fn: Callable, args: Sequence, which: Sequence[int],
                          cotangents: Sequence[torch.Tensor | None],
                          columns: torch.Tensor | None = None) -> list[torch.Tensor]:
    """``vᵀJ`` for each argument ``args[i]``, ``i`` in ``which``, from forward-mode JVPs.

    ``cotangents`` are v, one per output tensor of ``fn`` (flattened in
    :func:`_flatten`'s order; None counts as zeros). ``columns``: flat indices over the
    ``which`` arguments in order; only those entries are computed, the others are 0.

    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    >>> forward_mode_gradient(lambda t: t ** 3, [x], [0], [torch.ones(2, dtype=torch.float64)])[0].tolist()
    [3.0, 12.0]
    """
    args = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
    wanted = _local_columns(args, which, columns)
    within_limit("forward-mode columns", sum(len(w) for w in wanted), LIMITS.full_check_elements)
    return [_gradient_of(fn, args, i, cotangents, w) for i, w in zip(which, wanted)]


def _local_columns(args, which, columns) -> list[torch.Tensor]:
    """Per argument in ``which``: its flat element indices to compute (all, if columns is None)."""
    wanted, offset = [], 0
    for i in which:
        n = args[i].numel()
        if columns is None:
            wanted.append(torch.arange(n))
        else:
            mine = columns[(columns >= offset) & (columns < offset + n)] - offset
            wanted.append(torch.unique(mine))
        offset += n
    return wanted


class _JvpBackward(torch.autograd.Function):
    """Forward: fn. Backward: vᵀJ assembled from forward-mode JVPs of fn."""

    @staticmethod
    def forward(ctx, fn, structure, columns, *args):
        kind, outputs = _flatten(fn(*args))
        structure.append(kind)
        ctx.fn, ctx.args, ctx.columns = fn, args, columns
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *cotangents):
        which = [i for i, needs in enumerate(ctx.needs_input_grad[3:]) if needs]
        grads = forward_mode_gradient(ctx.fn, ctx.args, which, cotangents, ctx.columns)
        out: list = [None] * (3 + len(ctx.args))
        for i, g in zip(which, grads):
            out[3 + i] = g
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


def _gradient_of(fn, args, i: int, cotangents, wanted: torch.Tensor) -> torch.Tensor:
    """vᵀJ for argument i: one JVP per wanted element of args[i], contracted with the
    cotangents (0 at the elements not wanted)."""
    x = args[i]

    def outputs_of(xi):
        return tuple(_flatten(fn(*args[:i], xi, *args[i + 1:]))[1])

    flat = torch.zeros(x.numel(), dtype=torch.float64)
    if wanted.numel():
        try:
            flat[wanted] = _vmapped_products(outputs_of, x, cotangents, wanted)
        except Exception:  # noqa: BLE001 - vmap cannot run this fn: one dual pass per column
            flat[wanted] = torch.stack([_contract(_dual_column(outputs_of, x, _unit(x, int(j))), cotangents)
                                        for j in wanted])
    return flat.reshape(x.shape).to(x.dtype)


def _unit(x: torch.Tensor, j: int) -> torch.Tensor:
    e = torch.zeros(x.numel(), dtype=x.dtype)
    e[j] = 1
    return e.reshape(x.shape)


def _basis(x: torch.Tensor, columns: torch.Tensor) -> torch.Tensor:
    """Unit vectors e_j for j in ``columns``, in x's shape, stacked (only this chunk is held)."""
    rows = torch.zeros(len(columns), x.numel(), dtype=x.dtype)
    rows[torch.arange(len(columns)), columns] = 1
    return rows.reshape(len(columns), *x.shape)


def _vmapped_products(outputs_of, x: torch.Tensor, cotangents, wanted: torch.Tensor) -> torch.Tensor:
    """(vᵀJ e_j) for j in ``wanted``, in float64, through vmap over the unit vectors, a chunk
    of them per call."""
    out_numel = sum(o.numel() for o in outputs_of(x))
    chunk = max(1, _CHUNK_ELEMENTS // max(1, out_numel, x.numel()))
    one = vmap(lambda t: jvp(outputs_of, (x,), (t,))[1])
    weights = [None if v is None else _real64(v).reshape(-1) for v in cotangents]
    parts = []
    for columns in torch.split(wanted, chunk):
        total = torch.zeros(len(columns), dtype=torch.float64)
        for tangents, w in zip(one(_basis(x, columns)), weights):
            if w is not None and _carries(tangents):
                total = total + _real64(tangents).reshape(len(columns), -1) @ w
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
        if _carries(tangent) and v is not None:
            total = total + (_real64(tangent) * _real64(v)).sum()
    return total


def _carries(tangent) -> bool:
    """A tangent that holds a derivative (an integer or bool output's tangent does not)."""
    return isinstance(tangent, torch.Tensor) and (tangent.is_floating_point() or tangent.is_complex())


def _real64(t: torch.Tensor) -> torch.Tensor:
    """t as float64 real numbers: a complex tensor as its (re, im) pairs. For a real loss L,
    torch's cotangent of a complex output y is v = ∂L/∂Re y + i·∂L/∂Im y, so the loss's change
    along a tangent t is Re(conj(v)·t) = Re v·Re t + Im v·Im t: the real dot product of the
    pairs (casting to real would drop Im v·Im t)."""
    return torch.view_as_real(t.resolve_conj()).to(torch.float64) if t.is_complex() else t.to(torch.float64)
