"""Which modules of a model to check, and the inputs each one actually received.

:func:`record_calls` runs the model's forward once with pre-forward hooks on every
submodule: a hook copies the arguments a module is called with (before its forward
runs, so an in-place op cannot change them), and a forward hook sees what it returned.
The modules checked are the **leaves** (modules without children: Linear, LayerNorm,
an activation), every module with parameters of its own (MultiheadAttention's input
projection lives in it, beside its ``out_proj`` child: it is checked whole), and any
module whose own forward, not a child's, returns the output of a custom
``torch.autograd.Function`` (a hand-written backward lives there).

The model's buffers (BatchNorm's running statistics) are put back after the pass, and
no backward runs, so the caller's model, tensors and ``.grad`` are as they were.

>>> model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
>>> calls = record_calls(model, (torch.ones(2, 3),), {})
>>> [(c.path, c.kind, c.index) for c in calls]
[('0', 'Linear', 0), ('1', 'Tanh', 0), ('2', 'Linear', 0)]
>>> tuple(calls[1].args[0].shape)
(2, 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from gradlab.errors import GradLabError

__all__ = ["Call", "record_calls", "kept_buffers"]


@dataclass(frozen=True, eq=False)
class Call:
    """One call of a checked module during the recorded forward pass."""

    path: str  # the module's name in model.named_modules() ("" for the model itself)
    module: nn.Module
    kind: str  # its class name
    index: int  # which call of this module it was (0: the first)
    args: tuple  # the positional arguments it received, tensors detached and copied
    kwargs: dict[str, Any]  # and the keyword arguments
    custom_function: bool  # its own forward returned a custom autograd.Function's output


def record_calls(model: nn.Module, inputs: tuple, kwargs: dict[str, Any]) -> list[Call]:
    """Every call of every checked module during ``model(*inputs, **kwargs)``, in the order
    the forward pass made them (see the module docstring)."""
    if not isinstance(model, nn.Module):
        raise GradLabError(f"check_layers needs a torch.nn.Module; got {type(model).__name__}.")
    seen: list[dict] = []
    children_outputs: dict[int, set[int]] = {}  # id(parent) -> ids of its children's output tensors
    parents = {id(child): parent for parent in model.modules() for child in parent.children()}
    handles = []

    def before(module, args, kw):
        seen.append({"module": module, "args": _copied(args), "kwargs": _copied(kw)})
        children_outputs[id(module)] = set()

    def after(module, args, kw, output):
        tensors = [t for t in _tensors(output)]
        parent = parents.get(id(module))
        if parent is not None:
            children_outputs.setdefault(id(parent), set()).update(id(t) for t in tensors)
        own = [t for t in tensors if id(t) not in children_outputs.get(id(module), set())]
        for entry in reversed(seen):
            if entry["module"] is module and "custom" not in entry:
                entry["custom"] = any(_from_custom_function(t) for t in own)
                break

    named = dict((id(m), n) for n, m in model.named_modules())
    for module in model.modules():
        handles.append(module.register_forward_pre_hook(before, with_kwargs=True))
        handles.append(module.register_forward_hook(after, with_kwargs=True))
    try:
        with kept_buffers(model), torch.enable_grad():
            # inputs that require grad, so every module's output has a grad_fn to read
            model(*_requiring_grad(inputs), **kwargs)
    except GradLabError:
        raise
    except Exception as err:  # noqa: BLE001 - the user's model: named in one sentence, cause kept
        raise GradLabError(f"The model could not run on the inputs given ({type(err).__name__}: {err}); "
                           "check_layers runs model(*inputs) once to see what each module receives.") from err
    finally:
        for h in handles:
            h.remove()
    counts: dict[int, int] = {}
    calls = []
    for entry in seen:
        module = entry["module"]
        leaf = next(module.children(), None) is None
        own = next(module.parameters(recurse=False), None) is not None
        custom = entry.get("custom", False)
        index = counts.get(id(module), 0)
        counts[id(module)] = index + 1
        if leaf or own or custom:
            calls.append(Call(named.get(id(module), "?"), module, type(module).__name__, index, entry["args"],
                              entry["kwargs"], custom))
    return calls


class kept_buffers:
    """A block after which ``model``'s buffers hold their values from before it (a
    BatchNorm in training mode updates its running statistics at every call)."""

    def __init__(self, model: nn.Module):
        self._model = model

    def __enter__(self):
        self._saved = [(b, b.detach().clone()) for b in self._model.buffers()]
        return self

    def __exit__(self, *exc):
        with torch.no_grad():
            for buffer, value in self._saved:
                buffer.copy_(value)
        return False


def _copied(value):
    """``value`` with every tensor in it detached and copied (nested tuples, lists, dicts)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return value


def _requiring_grad(inputs: tuple) -> tuple:
    """Copies of the floating-point input tensors that require grad (the caller's are untouched)."""
    return tuple(t.detach().clone().requires_grad_(True)
                 if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()) else t
                 for t in inputs)


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _from_custom_function(t: torch.Tensor) -> bool:
    """Whether ``t`` was returned by a custom ``torch.autograd.Function`` (its grad_fn is the
    Function's backward node)."""
    return isinstance(t.grad_fn, torch.autograd.function.BackwardCFunction)
