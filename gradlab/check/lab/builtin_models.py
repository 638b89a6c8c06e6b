"""The Grad check page's and CLI's built-in models and losses, and the loss function of x they make.

A model maps an input tensor x to an output of the same shape; a loss compares it
elementwise with seeded ``randn`` targets. The function handed to the check returns the
*per-element* loss, and the check applies the reduction (sum, mean, none), so the three
reductions can be compared on one function.

- ``affine``: (x + 1) / 2, the float32 grad-check question;
- ``expression``: any elementwise function typed in the expression language;
- ``mlp``: a small tanh MLP over the last dimension, with seeded weights.

Data are drawn in float64 from the seed and rounded to the dtype, so float32 and float64
runs see the same numbers (up to rounding), and the float64 twin computes the same function
as the dtype's, only more precisely:

>>> from gradlab.check.lab.settings import CheckSettings
>>> m = build_model_loss(CheckSettings(shape=(4, 3), dtype="float32"))
>>> m.x.dtype, m.fn(m.x).shape
(torch.float32, torch.Size([4, 3]))
>>> bool(torch.allclose(m.fn64(m.x.double()), m.fn(m.x).double(), rtol=1e-6, atol=1e-7))
True

The settings are a :class:`gradlab.check.lab.settings.CheckSettings` (which checks the names
against :data:`MODELS` and :data:`LOSSES`); :func:`gradlab.check.lab.settings.run_check` checks
the function this module builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import torch

from gradlab.numerics.dtypes import facts
from gradlab.numerics.expressions import parse



class ModelSettings(Protocol):
    """What a model and loss are built from: the fields of a
    :class:`gradlab.check.lab.settings.CheckSettings` this module reads (a protocol, not an import:
    the settings import this module for MODELS and LOSSES, and the dependency runs one way)."""

    model: str
    loss: str
    shape: tuple[int, ...]
    dtype: str
    seed: int
    expression: str

__all__ = ["MODELS", "LOSSES", "MLP_HIDDEN", "ModelLoss", "build_model_loss"]

MODELS = ("affine", "expression", "mlp")
LOSSES = ("mse", "l1")
MLP_HIDDEN = 16  # width of the MLP's hidden layer: small, well inside LIMITS.network_width


@dataclass(frozen=True, eq=False)
class ModelLoss:
    """A built-in model's per-element loss as a function of x, the point x (in the
    settings' dtype), and the same loss function computed in float64."""

    fn: Callable[[torch.Tensor], torch.Tensor]
    x: torch.Tensor
    fn64: Callable[[torch.Tensor], torch.Tensor]


def build_model_loss(settings: ModelSettings) -> ModelLoss:
    """The settings' model and loss as a per-element loss of x, x in the settings' dtype,
    and the float64 twin of the loss (the same numbers, held in float64).

    >>> from gradlab.check.lab.settings import CheckSettings
    >>> m = build_model_loss(CheckSettings(model="mlp", shape=(2, 5), dtype="float64", loss="l1"))
    >>> bool((m.fn(m.x) >= 0).all()), m.fn(m.x).shape
    (True, torch.Size([2, 5]))
    """
    fn, x = _build(settings, facts(settings.dtype).torch_dtype)
    fn64, _ = _build(settings, torch.float64)
    return ModelLoss(fn, x, fn64)


def _model(settings: ModelSettings, draw):
    if settings.model == "affine":
        return lambda x: (x + 1) / 2
    if settings.model == "expression":
        return parse(settings.expression)
    features = settings.shape[-1]
    w1 = draw(MLP_HIDDEN, features, scale=features**-0.5)
    b1 = draw(MLP_HIDDEN)
    w2 = draw(features, MLP_HIDDEN, scale=MLP_HIDDEN**-0.5)
    b2 = draw(features)
    return lambda x: torch.tanh(x @ w1.T + b1) @ w2.T + b2


def _loss(name: str) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    # (y - t)**2 rather than F.mse_loss: also holomorphic, so the complex step works.
    return (lambda y, t: (y - t) ** 2) if name == "mse" else (lambda y, t: (y - t).abs())


def _build(settings: ModelSettings, compute: torch.dtype):
    """(loss function, x) with every number drawn in float64, rounded to the
    settings' dtype, then held in ``compute``: the float64 twin computes the
    same function as the dtype's, only more precisely."""
    dtype = facts(settings.dtype).torch_dtype
    gen = torch.Generator().manual_seed(settings.seed)

    def draw(*size: int, scale: float = 1.0) -> torch.Tensor:
        values = torch.randn(*size, generator=gen, dtype=torch.float64) * scale
        return values.to(dtype).to(compute)

    x = draw(*settings.shape)
    target = draw(*settings.shape)
    model, loss = _model(settings, draw), _loss(settings.loss)
    return (lambda x: loss(model(x), target)), x
