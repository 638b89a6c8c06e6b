"""A function's arguments as a check sees them: which are checked, as real tensors, and the rest.

``gradcheck(fn, *inputs, wrt=None)`` takes fn's arguments as the user would pass
them: tensors of any floating or complex dtype, non-differentiable tensors and
Python values. :func:`parse_arguments` picks the checked ones (those that
require grad, or those ``wrt`` names by position or parameter name; when no
argument requires grad and ``wrt`` is None, every floating-point or complex
tensor) and names them (fn's parameter names where its signature gives them,
else ``input k``). A complex argument is checked through its real view
(``torch.view_as_real``: one real tensor of shape ``(*shape, 2)``, rebuilt
with ``torch.complex`` before fn is called), so for a real loss L the checked
gradient is ``(dL/dre, dL/dim)``: the real and imaginary parts of torch's
``z.grad`` (its conjugate Wirtinger convention).

A single list or tuple of tensors, ``gradcheck(fn, [a, b])``, is read as
``torch.autograd.gradcheck`` reads it: the inputs ``a, b`` (fn(a, b)). A
function that takes a list itself is written ``lambda a, b: fn([a, b])``.

>>> x = torch.ones(2, requires_grad=True)
>>> a = parse_arguments(lambda x, n: x ** n, (x, 3), None)
>>> a.names, a.checked, a.call(lambda x, n: x ** n, [torch.full((2,), 2.0)]).tolist()
(('x',), (0,), [8.0, 8.0])
>>> z = torch.tensor([1 + 2j])
>>> b = parse_arguments(torch.abs, (z,), None)
>>> b.names, b.reals()[0].tolist()
(('input 0',), [[1.0, 2.0]])
"""

from __future__ import annotations

import inspect
import threading
import types
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from gradlab.check.inputs.caller_state import same_bits
from gradlab.check.inputs.tensor_kinds import refuse_unusable
from gradlab.compat import module_tensors_swapped
from gradlab.errors import GradLabError

__all__ = ["Arguments", "parse_arguments", "parameter_names", "module_arguments", "own_copy", "legacy_inputs"]


@dataclass(frozen=True, eq=False)
class Arguments:
    """fn's arguments (tensors detached), the positions checked, their names and kinds."""

    args: tuple
    checked: tuple[int, ...]
    names: tuple[str, ...]
    given: tuple = ()  # the caller's arguments, when ``args`` holds copies of their tensors
    every_name: tuple[str, ...] = ()  # every argument's name (the checked ones are ``names``)
    # numpy's floating-point error handling where the check was called (default: where this is
    # made): fn runs under it, while the check's own numpy work ignores those errors
    errstate: dict | None = None

    def __post_init__(self):  # the kinds, once: rebuild runs once per finite-difference batch
        object.__setattr__(self, "_complex", tuple(self.args[k].is_complex() for k in self.checked))
        if self.errstate is None:
            object.__setattr__(self, "errstate", np.geterr())
        object.__setattr__(self, "_versions", tuple(a._version if isinstance(a, torch.Tensor) else None
                                                    for a in self.args))

    def changed_in_place(self) -> str | None:
        """The name of the first argument passed through to fn (not checked) whose copy fn
        changed in place (any in-place op counts, even ``u.add_(0)``), or None."""
        checked = set(self.checked)
        for k, (copy, original) in enumerate(zip(self.args, self.given)):
            if k in checked or not isinstance(copy, torch.Tensor):
                continue
            if copy._version != self._versions[k] or not same_bits(copy, original.detach()):
                return self.every_name[k] if k < len(self.every_name) else f"input {k}"
        return None

    def tensors(self) -> list[torch.Tensor]:
        """The checked arguments as given (detached)."""
        return [self.args[k] for k in self.checked]

    def complex_parts(self) -> tuple[bool, ...]:
        return self._complex

    def reals(self) -> list[torch.Tensor]:
        """The checked arguments as real tensors: a complex one as its (*shape, 2) real view."""
        return [torch.view_as_real(t.resolve_conj()) if t.is_complex() else t for t in self.tensors()]

    def rebuild(self, reals: Sequence[torch.Tensor]) -> list:
        """fn's arguments with the checked ones replaced by ``reals`` (complex ones rebuilt)."""
        if len(reals) == len(self.args) and not any(self._complex):  # every argument checked, all real
            return list(reals)
        args = list(self.args)
        for k, real, was_complex in zip(self.checked, reals, self._complex):
            args[k] = torch.complex(real[..., 0], real[..., 1]) if was_complex else real
        return args

    def call(self, fn: Callable, reals: Sequence[torch.Tensor]):
        """fn at the arguments with the checked ones replaced by ``reals``, under the caller's
        numpy error handling (a warning fn's own numpy code raises is the caller's to see)."""
        with np.errstate(**self.errstate):
            try:
                return fn(*self.rebuild(reals))
            except RuntimeError as e:
                if "out of bounds for storage" not in str(e):
                    raise
                raise GradLabError(_BEYOND_STORAGE) from e


#: fn read storage beyond its input's own elements (as_strided with a storage offset past them).
_BEYOND_STORAGE = ("fn reads memory beyond its input's own elements (as_strided with a storage offset or strides "
                   "reaching past them): GradLab checks the input's elements on a copy of them, which holds "
                   "nothing beyond, and a gradient with respect to memory the input does not hold cannot be "
                   "checked. Pass the tensor that holds that memory (the base of the view) as the input.")


def parameter_names(fn: Callable, count: int) -> list[str]:
    """Names of fn's first ``count`` positional parameters, ``input k`` where it has none.

    >>> parameter_names(lambda a, b=1, *rest, c: a, 4)
    ['a', 'b', 'input 2', 'input 3']
    """
    names = _plain_positional(fn)
    if names is None:
        try:  # a module's names are its forward's (its __call__ takes *args)
            params = list(inspect.signature(fn.forward if isinstance(fn, torch.nn.Module) else fn).parameters.values())
        except (TypeError, ValueError):  # builtins such as torch.sin have no signature
            params = []
        names = []
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            names.append(p.name)
    return [names[k] if k < len(names) else f"input {k}" for k in range(count)]


#: What makes inspect.signature read a plain function other than by its code object.
_SIGNATURE_OVERRIDES = ("__wrapped__", "__signature__", "_partialmethod")


def _plain_positional(fn) -> list[str] | None:
    """A plain Python function's positional parameter names read from its code object, and none
    for a builtin without a text signature (torch.sin: inspect.signature raises for it), as
    inspect.signature gives them at a tenth of its cost (inspect.signature costs a small check's
    set-up ~20 us, ~40 us raising for a builtin); None for anything else (decorated, partial, a module)."""
    if type(fn) is types.BuiltinFunctionType and getattr(fn, "__text_signature__", None) is None \
            and not any(hasattr(fn, name) for name in _SIGNATURE_OVERRIDES):
        return []
    if type(fn) is not types.FunctionType or any(name in fn.__dict__ for name in _SIGNATURE_OVERRIDES):
        return None
    code = fn.__code__
    return list(code.co_varnames[:code.co_argcount])  # positional-only, then positional-or-keyword


def _differentiable(value) -> bool:
    return isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex())


def legacy_inputs(inputs: tuple) -> tuple:
    """``(fn, [a, b])`` -> ``(a, b)``: torch.autograd.gradcheck's way of passing several inputs."""
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)) and inputs[0] \
            and all(isinstance(t, torch.Tensor) for t in inputs[0]):
        return tuple(inputs[0])
    return inputs


def _positions(wrt, names: list[str], count: int) -> tuple[int, ...]:
    items = [wrt] if isinstance(wrt, (int, str)) else list(wrt)
    found = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise GradLabError(f"wrt takes argument positions or parameter names; got {item!r}.")
        if isinstance(item, str):
            if item not in names:
                raise GradLabError(f"wrt names {item!r}, which is not one of fn's arguments "
                                   f"({', '.join(names)}).")
            item = names.index(item)
        if not -count <= item < count:
            raise GradLabError(f"wrt position {item} is beyond fn's {count} arguments.")
        found.append(item % count)
    return tuple(sorted(set(found)))


def parse_arguments(fn: Callable, inputs: tuple, wrt, names: Sequence[str] | None = None) -> Arguments:
    """The :class:`Arguments` of ``fn(*inputs)`` checked with respect to ``wrt``.

    ``names`` overrides the argument names (default: fn's parameter names).
    """
    inputs = legacy_inputs(tuple(inputs))
    if not inputs:
        raise GradLabError("Pass the inputs to check after the function: gradcheck(fn, x, ...).")
    names = list(names) if names is not None else parameter_names(fn, len(inputs))
    if wrt is not None:
        checked = _positions(wrt, names, len(inputs))
        refused = [names[k] for k in checked if not _differentiable(inputs[k])]
        if refused:
            raise GradLabError(f"wrt names {', '.join(refused)}, which is not a floating-point or "
                               "complex tensor: only those have gradients to check.")
    else:
        checked = tuple(k for k, a in enumerate(inputs) if _differentiable(a) and a.requires_grad)
        if not checked:  # nothing marked: every floating-point or complex tensor, as jax.check_grads
            checked = tuple(k for k, a in enumerate(inputs) if _differentiable(a))
    if not checked:
        raise GradLabError("No input to check: pass at least one floating-point or complex tensor "
                           "(tensors that require grad are the ones checked; wrt= names others).")
    refuse_unusable([inputs[k] for k in checked], [names[k] for k in checked])  # sparse, meta, 8-bit
    # fn gets copies: what it does to them in place never reaches the caller's tensors
    args = tuple(own_copy(a) if isinstance(a, torch.Tensor) else a for a in inputs)
    return Arguments(args, checked, tuple(names[k] for k in checked), inputs, tuple(names))


def own_copy(t: torch.Tensor) -> torch.Tensor:
    """A detached copy of ``t`` laid out as ``t`` is (its strides: fn may round otherwise on
    another layout), also for a view with gaps (``x[:, ::2]``) or an expanded one, which
    ``clone`` would make contiguous.

    >>> x = torch.arange(12.0).reshape(3, 4)[:, ::2]
    >>> c = own_copy(x)
    >>> c.stride() == x.stride(), torch.equal(c, x), c.data_ptr() != x.data_ptr()
    (True, True, True)
    """
    t = t.detach()
    copy = t.clone()
    if copy.stride() == t.stride() or t.is_conj() or t.is_neg() or t.layout != torch.strided or not t.numel():
        return copy
    span = 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    base = torch.as_strided(t, (span,), (1,)).clone()  # the stretch of storage t reads, gaps and all
    return base.as_strided(t.shape, t.stride())


def module_arguments(model: torch.nn.Module, inputs: tuple) -> tuple[Callable, Arguments]:
    """``gradcheck(model, *inputs, wrt="parameters")``: a function of the parameters (then the
    inputs) through ``torch.func.functional_call``, and its arguments with the parameters checked
    and named as ``model.named_parameters()`` names them (``layers.0.weight``).

    >>> fn, a = module_arguments(torch.nn.Linear(2, 1), (torch.ones(2),))
    >>> a.names, tuple(fn(*a.args).shape)
    (('weight', 'bias'), (1,))
    """
    named = [(n, p) for n, p in model.named_parameters() if p.is_floating_point() or p.is_complex()]
    if not named:
        raise GradLabError("wrt='parameters' needs a module with floating-point parameters; this one has none.")
    names = [n for n, _ in named]
    count = len(names)
    # functional_call's tying looks for tensors under two names at every call (a third of its
    # cost on a small module): asked for only when the module has such a tensor
    every = [t for _, t in model.named_parameters(remove_duplicate=False)] + \
        [t for _, t in model.named_buffers(remove_duplicate=False)]
    tied = len({id(t) for t in every}) < len(every)

    lock = threading.Lock()  # functional_call swaps the module's parameters in place for the call:
    # two worker threads calling it at once would each see the other's values
    local = threading.local()

    def call(*args):
        held = getattr(local, "held", None)
        if held is not None:  # inside rows(): this call's parameters go into the swapped-in tensors
            for tensor, value in zip(held, args[:count]):
                tensor.copy_(value)
            return model(*args[count:])
        with lock:
            return torch.func.functional_call(model, dict(zip(names, args[:count])), tuple(args[count:]),
                                              tie_weights=tied)

    @contextmanager
    def rows():
        """Calls (without grad) in this block on this thread: the module's parameters swapped once
        for tensors each call writes its values into (gradlab.compat.module_tensors_swapped)."""
        held = [p.detach().clone() for _, p in named]
        swap = module_tensors_swapped(model, dict(zip(names, held)), tie_weights=tied)
        if swap is None:
            yield
            return
        with lock, swap:
            local.held = held
            try:
                yield
            finally:
                local.held = None

    call.rows = rows

    inputs = legacy_inputs(tuple(inputs))
    all_names = names + [f"input {k}" for k in range(len(inputs))]
    return call, parse_arguments(call, tuple(p for _, p in named) + inputs, list(range(count)), all_names)
