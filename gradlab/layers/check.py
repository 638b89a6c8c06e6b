"""``check_layers``: each module of a model checked on its own, at the inputs it received.

A wrong backward in one layer shows up in the gradient of every parameter before it (the
chain rule carries it), so a whole-model check names a parameter, not the layer. Here one
forward pass records what each module was called with (:mod:`gradlab.layers.record`);
then every leaf module, every module with parameters of its own or returning a custom
``autograd.Function``'s output, and every module with children whose own forward does
differentiable work between them (a custom Function applied inline, a residual add, a
mask fill: its **own code**), is checked in isolation at those arguments with
:func:`gradlab.gradcheck`: over its parameters and over its floating-point inputs, in the
model's dtype, with the verdict rules of a gradient check. Only the module whose backward
is wrong fails; the answer names it, and a parent whose children pass while it fails is
wrong in its own code. Modules are checked innermost first, and a module holding a failing
one is not checked whole (its check would run that backward and fail through it): its rows
say so. A pure container (Sequential, a loop over a ModuleList) is not checked itself: a check of
it would re-run every child for nothing of its own.

>>> class Double(torch.autograd.Function):  # forward 2x, backward claims 3x
...     @staticmethod
...     def forward(ctx, x):
...         return 2 * x
...     @staticmethod
...     def backward(ctx, g):
...         return 3 * g
>>> class Wrong(torch.nn.Module):
...     def forward(self, x):
...         return Double.apply(x)
>>> torch.manual_seed(0) and None
>>> model = torch.nn.Sequential(torch.nn.Linear(3, 4), Wrong(), torch.nn.Tanh()).double()
>>> r = check_layers(model, torch.randn(2, 3, dtype=torch.float64))
>>> r.verdict, r.failing_modules
('fail', ('1',))
"""

from __future__ import annotations

import time
from typing import Any, Callable

import torch
from torch import nn

from gradlab.check import GRAD_OUTPUTS, choose, require_valid_options, single_threaded_ops
from gradlab.errors import GradLabError
from gradlab.layers.record import Call, kept_buffers, record_calls
from gradlab.layers.result import LayerRow, LayersResult, owner, within
from gradlab.limits import LIMITS, within_limit, size_limit

__all__ = ["check_layers", "CALLS"]

#: Which calls of a module called several times in one forward pass are checked.
CALLS = ("first", "all")

Progress = Callable[[int, int], None]


def check_layers(model: nn.Module, *inputs: Any, calls: str = "first", progress: Progress | None = None,
                 forward_kwargs: dict[str, Any] | None = None, **options) -> LayersResult:
    """Check every leaf module of ``model`` (and every module with parameters of its own, a
    custom autograd.Function, or own code between its children) on its own, at the arguments
    it received in ``model(*inputs, **forward_kwargs)``.

    ``calls``: ``"first"`` checks a module called several times (a shared layer, a loop) at
    its first call, ``"all"`` at each. ``options`` are :func:`gradlab.gradcheck`'s (``mode``,
    ``rtol``, ``atol``, ``eps``, ``seed`` ...). ``progress(done, total)`` is called after each
    module. The model, its buffers and ``.grad`` are left as they were.
    """
    with single_threaded_ops():  # as every check: small ops, and no OpenMP pool a forked child would inherit
        return _check_layers(model, inputs, calls, progress, forward_kwargs, options)


def _check_layers(model, inputs, calls, progress, forward_kwargs, options) -> LayersResult:
    if calls not in CALLS:
        raise GradLabError(f"calls must be one of {', '.join(CALLS)}; got {calls!r}.")
    for name in ("wrt", "raise_on_fail", "progress"):
        if name in options:
            raise GradLabError(f"check_layers chooses {name} per module itself; leave it out.")
    _validate(options)
    recorded = record_calls(model, inputs, dict(forward_kwargs or {}))
    chosen = [c for c in recorded if calls == "all" or c.index == 0]
    times_called = _times_called(recorded)
    within_limit("module checks", len(chosen), LIMITS.layer_checks)
    rows: dict[int, list[LayerRow]] = {}
    failed: list[str] = []  # the modules with a failing check so far
    with kept_buffers(model):
        # innermost first (a module's path is longer than its holder's), so that a module
        # holding a failing one is not checked whole: its check would run that wrong backward
        # again, fail through it and, failing, locate its element among all its parameters (a
        # 2-block GPT with one wrong attention: 13.4 s of CPU with its model checked, 2.8 s without)
        for k, i in enumerate(sorted(range(len(chosen)), key=lambda i: -_depth(chosen[i].path))):
            call = chosen[i]
            inside = next((m for m in failed if _holds(call.path, m)), None)
            times = times_called[id(call.module)]
            rows[i] = (_check_call(call, times, options) if inside is None else
                       [LayerRow.held_back(call, times, over, inside) for over in _sides(call)])
            failed.extend(dict.fromkeys(r.module for r in rows[i] if r.verdict == "fail"))
            if progress is not None:
                progress(k + 1, len(chosen))
    return LayersResult(tuple(row for i in range(len(chosen)) for row in rows[i]), calls, type(model).__name__)


def _depth(path: str) -> int:
    return path.count(".") + 1 if path else 0


def _holds(path: str, inside: str) -> bool:
    """Whether the module at ``path`` holds the module ``inside`` (a parametrization of its own
    weight is part of it, not held by it)."""
    return inside != path and within(inside, path) and owner(inside) != owner(path)


def _sides(call: Call) -> list[str]:
    """What a check of ``call`` would be over: its parameters and its inputs, or neither."""
    sides = [over for over, wanted in (("parameters", any(_floating(p) for p in call.module.parameters())),
                                       ("inputs", any(_floating(a) for a in call.args))) if wanted]
    return sides or ["-"]


def _validate(options: dict) -> None:
    """Refuse, once and in gradlab.gradcheck's own sentence, an option every module's check
    would refuse: each check's refusal is caught as that module's reason to skip, so a bad
    seed read as "inconclusive: 4 skipped".

    >>> _validate({"seed": 2**70})
    Traceback (most recent call last):
    ...
    gradlab.errors.GradLabError: seed must be a whole number from 0 to 2**63 - 1; got 1180591620717411303424.
    """
    require_valid_options(options)
    if "grad_outputs" in options:
        _require_named_grad_outputs(options["grad_outputs"])


def _require_named_grad_outputs(spec) -> None:
    """check_layers weighs each module's own outputs: a name, never one tensor (it fits one
    module's output shape, not every module's)."""
    if not isinstance(spec, str):
        raise GradLabError(f"check_layers weighs each module's outputs itself, so grad_outputs is one of "
                           f"{', '.join(GRAD_OUTPUTS)}; got a {type(spec).__name__} (a tensor fits one output's "
                           "shape, not every module's: check that module with gradlab.gradcheck).")
    choose("grad_outputs", spec, GRAD_OUTPUTS)


def _times_called(recorded: list[Call]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for c in recorded:
        counts[id(c.module)] = counts.get(id(c.module), 0) + 1
    return counts


def _check_call(call: Call, times: int, options: dict) -> list[LayerRow]:
    """The rows of one module call: over its parameters, over its inputs (or why not)."""
    from gradlab.check import gradcheck

    target = call.module if not call.kwargs else _WithKeywords(call.module, call.kwargs)
    rows = []
    has_parameters = any(p.is_floating_point() or p.is_complex() for p in call.module.parameters())
    has_inputs = any(_floating(a) for a in call.args)
    for over, wanted in (("parameters", has_parameters), ("inputs", has_inputs)):
        if not wanted:
            continue
        if over == "parameters" and (reason := _too_many_parameters(call.module)):
            rows.append(LayerRow.skipped(call, times, over, reason, 0.0))
            continue
        began = time.perf_counter()
        try:
            result = gradcheck(target, *call.args, wrt="parameters" if over == "parameters" else None,
                               **options)
        except GradLabError as err:
            rows.append(LayerRow.skipped(call, times, over, str(err), time.perf_counter() - began))
            continue
        rows.append(LayerRow.of(call, times, over, result, time.perf_counter() - began))
    if not rows:
        rows.append(LayerRow.skipped(call, times, "-", "no floating-point parameters or inputs: "
                                                        "nothing has a gradient to check", 0.0))
    return rows


def _too_many_parameters(module: nn.Module) -> str:
    """Why ``module``'s parameters are too many to check (a gradient check's element limit,
    which it words as input elements), or "" when they are not.

    >>> _too_many_parameters(nn.Linear(2, 3))
    ''
    """
    count = sum(p.numel() * (2 if p.is_complex() else 1) for p in module.parameters()
                if p.is_floating_point() or p.is_complex())
    if count <= size_limit(LIMITS.tensor_elements):  # the server's and the CLI's limit only
        return ""
    return (f"its {count:,} parameters are more than the {LIMITS.tensor_elements:,} GradLab checks at once "
            "(LIMITS.tensor_elements), so that one request cannot slow the server for everyone")


def _floating(value) -> bool:
    return isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex())


class _WithKeywords(nn.Module):
    """``module`` called with the keyword arguments it received in the recorded pass (a
    gradient check passes positional ones only); its parameters keep their names."""

    def __init__(self, module: nn.Module, kwargs: dict[str, Any]):
        super().__init__()
        self.inner = module
        self._kwargs = kwargs

    def forward(self, *args):
        return self.inner(*args, **self._kwargs)
