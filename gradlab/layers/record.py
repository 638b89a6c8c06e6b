"""Which modules of a model to check, and the inputs each one actually received.

:func:`record_calls` runs the model's forward once with pre-forward hooks on every
submodule: a hook copies the arguments a module is called with (before its forward
runs, so an in-place op cannot change them), and a forward hook sees what it returned.
The modules checked are the **leaves** (modules without children: Linear, LayerNorm,
an activation), every module with parameters of its own (MultiheadAttention's input
projection lives in it, beside its ``out_proj`` child: it is checked whole), any
module whose own forward, not a child's, returns the output of a custom
``torch.autograd.Function`` (a hand-written backward lives there), and every module with
children whose **own code** does differentiable work between its children's calls: a
custom Function applied inline (an attention between its ``qkv`` and ``proj`` Linears), a
residual add, a mask fill, a softmax. Its children may all pass while it fails itself.

Own code is read from the autograd graph, not the source: every autograd node a forward
pass creates carries a sequence number, which grows by one per node on the thread
(``torch._C._autograd._get_sequence_nr``). The hooks note the counter when each module's
call begins and ends, so a call owns the numbers in its span minus its nested calls' spans;
after a call, the graph behind its outputs is walked back through that span and the nodes
it owns are its own code. Nodes that only move data (view, reshape, transpose, split,
select, cat, a dtype cast: :data:`MOVES_ONLY`) do not count: a module whose forward only
calls its children and rearranges their outputs (Sequential, a ModuleList loop, a flatten
between a conv and a Linear) is a container, not checked itself, since a check of it
re-runs every child. Tensors a call computes but that do not reach its outputs do not
count either: they cannot change its gradient.

The model's buffers (BatchNorm's running statistics) are put back after the pass, and
no backward runs, so the caller's model, tensors and ``.grad`` are as they were.

>>> model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
>>> calls = record_calls(model, (torch.ones(2, 3),), {})
>>> [(c.path, c.kind, c.index) for c in calls]
[('0', 'Linear', 0), ('1', 'Tanh', 0), ('2', 'Linear', 0)]
>>> tuple(calls[1].args[0].shape)
(2, 4)
>>> class Residual(torch.nn.Module):  # x + f(x): the add is the module's own code
...     def __init__(self):
...         super().__init__()
...         self.f = torch.nn.Linear(4, 4)
...     def forward(self, x):
...         return x + self.f(x)
>>> [(c.path, c.own_code) for c in record_calls(Residual(), (torch.ones(2, 4),), {})]
[('', True), ('f', False)]
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from gradlab.errors import GradLabError

__all__ = ["Call", "record_calls", "kept_buffers", "MOVES_ONLY"]

#: Autograd nodes (their names without the trailing version digit) of ops that only move,
#: copy or cast data: a module with no other nodes of its own is a container.
MOVES_ONLY = frozenset({
    "View", "UnsafeView", "ReshapeAlias", "Alias", "Transpose", "T", "Permute", "Split", "SplitWithSizes",
    "UnsafeSplit", "UnsafeSplitWithSizes", "Unbind", "Select", "Slice", "Narrow", "Unsqueeze", "Squeeze",
    "Expand", "Clone", "Cat", "Stack", "Index", "Repeat", "ConstantPadNd", "ToCopy", "Unfold", "Diagonal",
    "Flip", "Roll", "AsStrided",
})


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
    own_code: bool = False  # it has children, and its own forward does differentiable work between them
    functions: tuple[str, ...] = ()  # the custom autograd.Functions its own forward applies (not its children's)


def record_calls(model: nn.Module, inputs: tuple, kwargs: dict[str, Any]) -> list[Call]:
    """Every call of every checked module during ``model(*inputs, **kwargs)``, in the order
    the forward pass made them (see the module docstring)."""
    if not isinstance(model, nn.Module):
        raise GradLabError(f"check_layers needs a torch.nn.Module; got {type(model).__name__}.")
    seen: list[dict] = []
    children_outputs: dict[int, set[int]] = {}  # id(parent) -> ids of its children's output tensors
    parents = {id(child): parent for parent in model.modules() for child in parent.children()}
    active: list[dict] = []  # the calls under way, innermost last
    handles = []

    def before(module, args, kw):
        entry = {"module": module, "args": _copied(args), "kwargs": _copied(kw), "start": _sequence_number(),
                 "nested": []}
        seen.append(entry)
        active.append(entry)
        children_outputs[id(module)] = set()

    def after(module, args, kw, output):
        tensors = [t for t in _tensors(output)]
        parent = parents.get(id(module))
        if parent is not None:
            children_outputs.setdefault(id(parent), set()).update(id(t) for t in tensors)
        own = [t for t in tensors if id(t) not in children_outputs.get(id(module), set())]
        entry = next((e for e in reversed(active) if e["module"] is module), None)
        if entry is None:  # a hook of ours that never saw the call begin
            return
        while active and active[-1] is not entry:  # calls that raised inside this one (and were caught)
            active.pop()
        active.pop()
        entry["custom"] = any(_from_custom_function(t) for t in own)
        span = (entry["start"], _sequence_number())
        if active:
            active[-1]["nested"].append(span)
        entry["work"], entry["functions"] = _own_nodes(tensors, span, entry["nested"])

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
        leaf = _leaf(module)
        own = next(module.parameters(recurse=False), None) is not None
        custom = entry.get("custom", False)
        own_code = not leaf and entry.get("work", False)
        index = counts.get(id(module), 0)
        counts[id(module)] = index + 1
        if leaf or own or custom or own_code:
            calls.append(Call(named.get(id(module), "?"), module, type(module).__name__, index, entry["args"],
                              entry["kwargs"], custom, own_code, entry.get("functions", ())))
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


def _leaf(module: nn.Module) -> bool:
    """Whether ``module`` has no children but its weights' parametrizations
    (``torch.nn.utils.parametrize``: part of the layer, checked with it)."""
    return all(name == "parametrizations" for name, _ in module.named_children())


def _sequence_number() -> int:
    """The sequence number the next autograd node created on this thread will carry."""
    peek = getattr(torch._C._autograd, "_get_sequence_nr", None)
    if peek is not None:
        return int(peek())
    with torch.enable_grad():  # a probe node takes a number itself: the next is one more
        return torch.zeros((), requires_grad=True).view(()).grad_fn._sequence_nr() + 1


def _own_nodes(outputs: list[torch.Tensor], span: tuple[int, int],
               nested: list[tuple[int, int]]) -> tuple[bool, tuple[str, ...]]:
    """Whether the graph behind ``outputs`` holds nodes the call created in ``span`` outside
    the ``nested`` calls' spans that do more than move data, and the custom
    autograd.Functions among them (see the module docstring)."""
    start, end = span
    starts = [a for a, _ in nested]  # in the order the calls began: sorted, and not overlapping
    work, functions = False, {}
    pending = [t.grad_fn for t in outputs if t.grad_fn is not None]
    visited: set[int] = set()
    while pending:
        node = pending.pop()
        if node is None or id(node) in visited:
            continue
        visited.add(id(node))
        number = node._sequence_nr()
        if not start <= number < end:  # made before the call (its inputs' history), or a leaf's AccumulateGrad
            continue
        k = bisect.bisect_right(starts, number) - 1
        if k < 0 or number >= nested[k][1]:  # not inside a nested call: the call's own node
            if isinstance(node, torch.autograd.function.BackwardCFunction):
                work = True
                forward = getattr(type(node), "_forward_cls", None)
                functions[forward.__name__ if forward is not None else node.name().removesuffix("Backward")] = None
            elif node.name().rstrip("0123456789").removesuffix("Backward") not in MOVES_ONLY:
                work = True
        pending.extend(next_node for next_node, _ in node.next_functions)
    return work, tuple(functions)
