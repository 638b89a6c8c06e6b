"""The caller's state a check must leave as it found it: the modules and tensors fn holds.

A check calls fn hundreds of times, and fn may change state as it runs: a BatchNorm in
training mode updates its running statistics at every call, ``torch.nn.utils.spectral_norm``
advances its power iteration (``weight_u``, ``weight_v``; the parametrization's ``_u``,
``_v``), a function may write to a tensor it captured. fn's arguments are copied before the
check (:func:`gradlab.check.inputs.arguments.parse_arguments`); the rest is what :class:`kept_state`
keeps: every parameter and buffer of each module fn is or holds (fn itself, a bound method's
module, a ``functools.partial``'s arguments, the modules and tensors a function's closure or
the globals it names hold, one container deep, and the modules among fn's arguments), the
tensor attributes a forward pre-hook sets (old-style spectral_norm's ``weight``), and those
tensors themselves. They are copied when the check starts and put
back when it ends, bit for bit, whether it passes, fails or raises; only what changed is
written back (a tensor whose bits differ, a slot that holds another tensor), so a graph the
caller built on a parameter stays valid.

When fn gives two outputs at the same input, :func:`state_blamed` tells whether that state is
the cause: put back before each of two more calls, fn then agrees with itself.

>>> bn = torch.nn.BatchNorm1d(2)
>>> with kept_state(bn, ()):
...     _ = bn(torch.tensor([[1.0, 2.0], [3.0, 5.0]]))
...     changed_names()
['running_mean', 'running_var', 'num_batches_tracked']
>>> bn.running_mean.tolist(), int(bn.num_batches_tracked)
([0.0, 0.0], 0)
"""

from __future__ import annotations

import contextvars
import functools
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

__all__ = ["kept_state", "changed_names", "state_blamed", "same_bits"]

#: The states of the checks running in this context (a check inside a check: both).
_ACTIVE: contextvars.ContextVar[tuple["kept_state", ...]] = contextvars.ContextVar("gradlab_kept_state",
                                                                                   default=())


@dataclass(eq=False)
class _Slot:
    """One tensor the check keeps: where it lives (a module's ``_parameters``, ``_buffers`` or
    ``__dict__``, or nowhere for a tensor held directly) and a copy of its values."""

    name: str
    tensor: torch.Tensor
    saved: torch.Tensor
    home: dict | None = None
    key: str = ""
    attribute: bool = False  # a plain tensor attribute of a module (home is its __dict__)

    def changed(self) -> bool:
        """Its bits changed, or its parameter or buffer slot holds another tensor (a plain tensor
        attribute set anew at every call, as old-style spectral_norm's ``weight``, is derived
        state: put back by :meth:`restore`, not named)."""
        moved = self.home is not None and not self.attribute and self.home.get(self.key) is not self.tensor
        return moved or not same_bits(self.tensor, self.saved)

    def restore(self) -> None:
        if self.home is not None and self.home.get(self.key) is not self.tensor:
            self.home[self.key] = self.tensor
        if not same_bits(self.tensor, self.saved):
            with torch.no_grad():
                self.tensor.copy_(self.saved)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether ``a`` and ``b`` hold the same bits (a NaN equals itself, -0.0 differs from 0.0).

    >>> same_bits(torch.tensor([float("nan"), 0.0]), torch.tensor([float("nan"), 0.0]))
    True
    >>> same_bits(torch.tensor([0.0]), torch.tensor([-0.0]))
    False
    """
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.layout != torch.strided or b.layout != torch.strided:
        return bool(torch.equal(a, b))
    if a.is_complex():
        a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
    bits = _BITS.get(a.element_size()) if a.dtype.is_floating_point else None
    if bits is not None:  # a view of the same size of element takes any strides: no copy
        a, b = a.detach().view(bits), b.detach().view(bits)
    return bool(torch.equal(a, b))


#: The integer dtype whose view of a float of that many bytes compares its bits.
_BITS = {2: torch.int16, 4: torch.int32, 8: torch.int64}


class kept_state:
    """A block after which the tensors ``fn`` holds (see the module docstring) and the modules
    among ``inputs`` are as they were before it; nests (a check inside a check)."""

    def __init__(self, fn: Callable, inputs: tuple = (), names: Callable[[], list[str]] | None = None,
                 also: tuple = ()):
        """``names()``: the arguments' names (called only when a module is among them); ``also``:
        more functions whose state is kept (a ``numeric_fn``)."""
        self._fns, self._inputs, self._names = (fn, *also), inputs, names
        self.slots: list[_Slot] = []

    def __enter__(self) -> "kept_state":
        held: dict[int, torch.Tensor] = {}  # id -> the copy (a tensor in two slots is copied once)
        for name, tensor, home, key, attribute in _held(self._fns, self._inputs, self._names):
            if tensor.is_meta:  # no values to keep
                continue
            saved = held.get(id(tensor))
            if saved is None:
                try:
                    saved = held[id(tensor)] = tensor.detach().clone()
                except Exception:  # noqa: BLE001 - a tensor that cannot be copied cannot be kept
                    continue
            self.slots.append(_Slot(name, tensor, saved, home, key, attribute))
        self._token = _ACTIVE.set(_ACTIVE.get() + (self,))
        return self

    def __exit__(self, *exc) -> bool:
        _ACTIVE.reset(self._token)
        self.restore()
        return False

    def restore(self) -> None:
        for slot in self.slots:
            slot.restore()

    def changed(self) -> list[str]:
        seen, names = set(), []
        for slot in self.slots:
            if slot.name not in seen and slot.changed():
                seen.add(slot.name)
                names.append(slot.name)
        return names


def changed_names() -> list[str]:
    """The names of the kept tensors that the running checks' fn changed so far."""
    return [name for state in _ACTIVE.get() for name in state.changed()]


def state_blamed(output: Callable[[], Any], differs: Callable[[Any, Any], bool]) -> list[str]:
    """The kept tensors fn changed, when they explain why fn's output differs between two
    calls at the same input: with them put back before each of two more calls (``output()``),
    the outputs agree (``differs`` says they do not). [] when fn changed none, or when fn's
    outputs differ even so (then it draws random numbers)."""
    states = _ACTIVE.get()
    names = changed_names()
    if not names:
        return []
    for state in states:
        state.restore()
    first = output()
    for state in states:
        state.restore()
    second = output()
    return names if not differs(first, second) else []


def _held(fns: tuple, inputs: tuple, names: Callable[[], list[str]] | None) -> Iterator[tuple]:
    """(name, tensor, home, key, attribute) of every tensor the check keeps (see the module
    docstring and :class:`_Slot`)."""
    modules: set[int] = set()
    for fn in fns:
        if fn is not None:
            yield from _of(fn, "", modules, depth=2)
    named: list[str] = []
    for k, value in enumerate(inputs):
        if not isinstance(value, (torch.Tensor, int, float, complex, str, type(None))):
            # the tensors among the arguments are copied; a module or a container is kept
            named = named or (list(names()) if names is not None else [])
            yield from _of(value, named[k] if k < len(named) else f"input {k}", modules, depth=1)


def _of(value, name: str, modules: set[int], depth: int) -> Iterator[tuple]:
    if isinstance(value, torch.Tensor):
        yield name, value, None, "", False
    elif isinstance(value, torch.nn.Module):
        yield from _module(value, name, modules)
    elif depth <= 0:
        return
    elif isinstance(value, (list, tuple)):
        for k, item in enumerate(value):
            yield from _of(item, f"{name}[{k}]", modules, depth - 1)
    elif isinstance(value, dict):
        for k, item in value.items():
            yield from _of(item, f"{name}[{k!r}]", modules, depth - 1)
    elif isinstance(value, functools.partial):
        yield from _of(value.func, name, modules, depth)
        yield from _of(list(value.args) + list(value.keywords.values()), name, modules, depth - 1)
    elif isinstance(value, types.MethodType):
        yield from _of(value.__self__, name, modules, depth - 1)
    elif isinstance(value, types.FunctionType):
        for found, item in _named_by(value):
            yield from _of(item, found, modules, depth - 1)
    elif not isinstance(value, (type, types.ModuleType, types.BuiltinFunctionType, str, bytes)) \
            and callable(value) and isinstance(getattr(value, "__dict__", None), dict):
        for key, item in list(vars(value).items()):  # a callable object: its attributes
            yield from _of(item, f"{name}.{key}" if name else key, modules, depth - 1)


def _named_by(fn: types.FunctionType) -> Iterator[tuple[str, Any]]:
    """The values a function's closure cells and the globals its code names hold."""
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            yield name, cell.cell_contents
        except ValueError:  # an empty cell
            continue
    scope = fn.__globals__
    for name in code.co_names:
        if name in scope:
            yield name, scope[name]


def _module(module: torch.nn.Module, name: str, modules: set[int]) -> Iterator[tuple]:
    """Every parameter and buffer of ``module`` and its submodules, and the tensor attributes of
    those with a forward pre-hook (old-style ``spectral_norm`` and ``weight_norm`` set ``weight``
    there at every call: after a check it would hold the last perturbed point's)."""
    for path, sub in module.named_modules(remove_duplicate=False):
        if id(sub) in modules:
            continue
        modules.add(id(sub))
        prefix = ".".join(p for p in (name, path) if p)
        prefix = prefix + "." if prefix else ""
        homes = (sub._parameters, sub._buffers, sub.__dict__) if sub._forward_pre_hooks else \
            (sub._parameters, sub._buffers)
        for home in homes:
            for key, tensor in list(home.items()):
                if isinstance(tensor, torch.Tensor):
                    yield prefix + key, tensor, home, key, home is sub.__dict__
