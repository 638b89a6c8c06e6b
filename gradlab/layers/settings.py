"""The layer check of a model built from the vocabulary: one frozen settings object, one call.

What the CLI's ``layers`` subcommand and the Grad check page's model builder run:
:class:`LayerCheckSettings` (the stack, the input's shape, the dtype, the check's mode and
seed, which calls) and :func:`run_layer_check`, which builds the model
(:func:`gradlab.layers.vocabulary.build_model`), checks each module on its own
(:func:`gradlab.layers.check.check_layers`) and, beside it, the whole model's parameters at
once (:func:`gradlab.gradcheck`, the sum of its outputs): the whole-model check names a
parameter, the layer check names the layer.

>>> s = LayerCheckSettings("linear:4, wrong_swish, linear:1", (3, 2), "float64")
>>> report = run_layer_check(s)
>>> report.layers.failing_modules, report.whole.verdict
(('1',), 'fail')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

import torch
from torch import nn

from gradlab.check import MODES, REDUCTIONS, choose, require_valid_options
from gradlab.errors import GradLabError
from gradlab.layers.check import CALLS, check_layers
from gradlab.layers.result import LayersResult
from gradlab.layers.vocabulary import build_model, parse_stack, stack_parameters
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import DTYPE_NAMES, facts

if TYPE_CHECKING:  # only for the annotation
    from gradlab.check import CheckResult

__all__ = ["LayerCheckSettings", "LayerReport", "run_layer_check", "LOSSES", "with_loss", "SquaredError"]

#: The losses a vocabulary model can end in: none (its outputs) or the squared error to a target.
LOSSES = ("none", "mse")


@dataclass(frozen=True)
class LayerCheckSettings:
    """Everything a layer check of a vocabulary model depends on (hashable: a cache key)."""

    stack: str
    input_shape: tuple[int, ...]
    dtype: str = "float32"
    mode: str = "blocks"
    seed: int = 0
    calls: str = "first"
    loss: str = "none"  # "none": the model's outputs; "mse": a last layer, the squared error to a seeded target
    reduction: str = "sum"  # how every check reduces its outputs to the checked scalar (sum or mean)

    def validated(self) -> "LayerCheckSettings":
        """These settings, refused in one sentence if any value is out of range: the model's
        limits are checked from the stack and the shape alone (:func:`stack_parameters`), before
        a weight is drawn.

        >>> LayerCheckSettings("linear:4", (2, 3), seed=2**70).validated()
        Traceback (most recent call last):
        ...
        gradlab.errors.GradLabError: seed must be a whole number from 0 to 2**63 - 1; got 1180591620717411303424.
        """
        parse_stack(self.stack)
        choose("dtype", self.dtype, DTYPE_NAMES)
        choose("mode", self.mode, MODES)
        choose("calls", self.calls, CALLS)
        choose("loss", self.loss, LOSSES)
        choose("reduction", self.reduction, REDUCTIONS)
        require_valid_options({"seed": self.seed})  # as gradlab.gradcheck and `python -m gradlab check` refuse it
        if not self.input_shape or any(int(n) < 1 for n in self.input_shape):
            raise GradLabError(f"The input shape {self.input_shape} needs positive sizes, batch first.")
        within_limit("input elements", math.prod(int(n) for n in self.input_shape), LIMITS.tensor_elements)
        shape = tuple(int(n) for n in self.input_shape)
        stack_parameters(self.stack, shape)
        return replace(self, input_shape=shape)


@dataclass(frozen=True)
class LayerReport:
    """The layer-by-layer check and, beside it, the whole model's."""

    settings: LayerCheckSettings
    layers: LayersResult
    whole: CheckResult  # the whole model's parameters


def run_layer_check(settings: LayerCheckSettings, progress: Callable[[int, int], None] | None = None) -> LayerReport:
    """Build the model, check each module, and the whole model (see the module docstring)."""
    from gradlab.check import gradcheck

    s = settings.validated()
    x = _input(s)
    model = with_loss(build_model(s.stack, s.input_shape, s.dtype, seed=s.seed), s, x)
    layers = check_layers(model, x, mode=s.mode, seed=s.seed, calls=s.calls, reduction=s.reduction,
                          progress=progress)
    whole = gradcheck(model, x, wrt="parameters", mode=s.mode, seed=s.seed, reduction=s.reduction)
    return LayerReport(s, layers, whole)


class SquaredError(nn.Module):
    """The loss as a last layer: (y - target)² per element, the target drawn from the seed (the
    checks reduce it by the settings' reduction, as MSELoss(reduction=...) would)."""

    def __init__(self, target: torch.Tensor):
        super().__init__()
        self.register_buffer("target", target)

    def forward(self, y):
        return (y - self.target) ** 2


def with_loss(model: nn.Sequential, s: LayerCheckSettings, x: torch.Tensor) -> nn.Sequential:
    """``model`` with the settings' loss as its last module (itself for loss "none")."""
    if s.loss == "none":
        return model
    with torch.no_grad():
        shape = model(x).shape
    gen = torch.Generator().manual_seed(s.seed + 2)
    target = torch.randn(*shape, generator=gen, dtype=torch.float64).to(facts(s.dtype).torch_dtype)
    return nn.Sequential(*model, SquaredError(target))


def _input(s: LayerCheckSettings) -> torch.Tensor:
    gen = torch.Generator().manual_seed(s.seed + 1)
    return torch.randn(*s.input_shape, generator=gen, dtype=torch.float64).to(facts(s.dtype).torch_dtype)
