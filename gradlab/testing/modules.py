"""A corpus of stock ``torch.nn`` modules, to hold a gradient checker to in every dtype.

Each :class:`ModuleCase` builds a small module (seeded, float64) and the inputs it
is called with. A checker checks it twice: over its parameters
(``gradcheck(module, *inputs, wrt="parameters")``) and over its floating-point
inputs (``gradcheck(module, *inputs)``), in float64, float32, bfloat16 and float16
(:func:`in_dtype` casts the module and its floating inputs; integer inputs such as
class labels or token ids stay as they are). Autograd's gradients of these layers
are right, so a check must never call one wrong, in any dtype.

Sizes are small on purpose: a full check of every case in four dtypes has to fit a
test tier on two cores. Every module is deterministic (dropout 0, or eval mode).

>>> cases = module_corpus()
>>> len(cases) >= 40
True
>>> m, inputs = module_case("GRUCell").build(torch.float32)
>>> m.weight_ih.dtype, tuple(m(*inputs).shape)
(torch.float32, (2, 4))
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

__all__ = ["ModuleCase", "module_corpus", "module_case", "in_dtype", "plant_error"]


@dataclass(frozen=True)
class ModuleCase:
    """One stock module and how to build it and its inputs (float64, seeded)."""

    name: str
    module: Callable[[], nn.Module]
    make: Callable[[torch.Generator], tuple]

    def build(self, dtype: torch.dtype = torch.float64, seed: int = 0) -> tuple[nn.Module, tuple]:
        """(module, inputs) in ``dtype``: the same float64 numbers, rounded to it."""
        torch.manual_seed(seed)  # nn's own initialisers draw from the global generator
        module = self.module().to(torch.float64)
        inputs = self.make(torch.Generator().manual_seed(seed + 1))
        return in_dtype(module, inputs, dtype)

    @property
    def has_parameters(self) -> bool:
        return any(True for _ in self.module().parameters())

    @property
    def has_float_inputs(self) -> bool:
        return any(isinstance(a, torch.Tensor) and a.is_floating_point()
                   for a in self.make(torch.Generator().manual_seed(0)))


def in_dtype(module: nn.Module, inputs: tuple, dtype: torch.dtype) -> tuple[nn.Module, tuple]:
    """A copy of ``module`` and its floating-point ``inputs`` in ``dtype`` (others untouched)."""
    cast = copy.deepcopy(module).to(dtype)
    return cast, tuple(a.detach().to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                       for a in inputs)


def _x(g: torch.Generator, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=torch.float64) * scale


def _labels(g: torch.Generator, n: int, classes: int) -> torch.Tensor:
    return torch.randint(0, classes, (n,), generator=g)


def _cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU(), nn.Conv2d(3, 2, 3), nn.Flatten(), nn.Linear(2, 3))


class _WeightedNLL(nn.Module):
    """NLLLoss with class weights, on log-probabilities it computes itself (a module with a parameter)."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([1.0, 0.7, 1.3]))
        self.loss = nn.NLLLoss(weight=torch.tensor([0.5, 1.0, 2.0]))

    def forward(self, x, y):
        return self.loss(torch.log_softmax(x * self.scale, -1), y)


def _cases() -> list[ModuleCase]:
    c = ModuleCase
    return [
        c("Linear", lambda: nn.Linear(4, 3), lambda g: (_x(g, 2, 4),)),
        c("Bilinear", lambda: nn.Bilinear(3, 4, 2), lambda g: (_x(g, 2, 3), _x(g, 2, 4))),
        c("Conv1d", lambda: nn.Conv1d(2, 3, 3, padding=1), lambda g: (_x(g, 1, 2, 6),)),
        c("Conv2d", lambda: nn.Conv2d(2, 2, 3), lambda g: (_x(g, 1, 2, 4, 4),)),
        c("Conv3d", lambda: nn.Conv3d(1, 2, 2), lambda g: (_x(g, 1, 1, 3, 3, 3),)),
        c("ConvTranspose1d", lambda: nn.ConvTranspose1d(2, 2, 3), lambda g: (_x(g, 1, 2, 4),)),
        c("ConvTranspose2d", lambda: nn.ConvTranspose2d(2, 2, 2, stride=2), lambda g: (_x(g, 1, 2, 2, 3),)),
        c("BatchNorm1d", lambda: nn.BatchNorm1d(3), lambda g: (_x(g, 5, 3),)),
        c("BatchNorm2d", lambda: nn.BatchNorm2d(2), lambda g: (_x(g, 3, 2, 2, 2),)),
        c("LayerNorm", lambda: nn.LayerNorm(8), lambda g: (_x(g, 4, 8),)),
        c("GroupNorm", lambda: nn.GroupNorm(2, 4), lambda g: (_x(g, 2, 4, 3),)),
        c("RMSNorm", lambda: nn.RMSNorm(6), lambda g: (_x(g, 3, 6),)),
        c("InstanceNorm1d", lambda: nn.InstanceNorm1d(3, affine=True), lambda g: (_x(g, 2, 3, 5),)),
        c("LocalResponseNorm", lambda: nn.LocalResponseNorm(2), lambda g: (_x(g, 1, 4, 3),)),
        c("Embedding", lambda: nn.Embedding(6, 3), lambda g: (torch.tensor([[1, 5, 0], [2, 1, 4]]),)),
        c("EmbeddingBag", lambda: nn.EmbeddingBag(6, 3, mode="mean"),
          lambda g: (torch.tensor([[1, 5, 0], [2, 1, 4]]),)),
        c("MultiheadAttention", lambda: nn.MultiheadAttention(4, 2, batch_first=True),
          lambda g: (_x(g, 1, 3, 4), _x(g, 1, 3, 4), _x(g, 1, 3, 4))),
        c("TransformerEncoderLayer",
          lambda: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True),
          lambda g: (_x(g, 1, 3, 4),)),
        c("TransformerDecoderLayer",
          lambda: nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True),
          lambda g: (_x(g, 1, 3, 4), _x(g, 1, 2, 4))),
        c("TransformerEncoder",
          lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                                                   batch_first=True), 2, enable_nested_tensor=False),
          lambda g: (_x(g, 1, 3, 4),)),
        c("RNN", lambda: nn.RNN(3, 4), lambda g: (_x(g, 3, 1, 3),)),
        c("GRU", lambda: nn.GRU(3, 4), lambda g: (_x(g, 3, 1, 3),)),
        c("LSTM", lambda: nn.LSTM(3, 3), lambda g: (_x(g, 3, 1, 3),)),
        c("RNNCell", lambda: nn.RNNCell(3, 4), lambda g: (_x(g, 2, 3),)),
        c("GRUCell", lambda: nn.GRUCell(3, 4), lambda g: (_x(g, 2, 3),)),
        c("LSTMCell", lambda: nn.LSTMCell(3, 4), lambda g: (_x(g, 2, 3),)),
        c("PReLU", lambda: nn.PReLU(3), lambda g: (_x(g, 2, 3, 2),)),
        c("MaxPool2d", lambda: nn.MaxPool2d(2), lambda g: (_x(g, 1, 2, 4, 4),)),
        c("AvgPool2d", lambda: nn.AvgPool2d(2), lambda g: (_x(g, 1, 2, 4, 4),)),
        c("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d(2), lambda g: (_x(g, 1, 2, 5, 5),)),
        c("LPPool1d", lambda: nn.LPPool1d(2, 2), lambda g: (_x(g, 1, 2, 6),)),
        c("Upsample", lambda: nn.Upsample(scale_factor=2, mode="bilinear"), lambda g: (_x(g, 1, 1, 2, 3),)),
        c("PixelShuffle", lambda: nn.Sequential(nn.Conv2d(1, 4, 1), nn.PixelShuffle(2)),
          lambda g: (_x(g, 1, 1, 2, 2),)),
        c("CrossEntropyLoss", lambda: nn.CrossEntropyLoss(weight=torch.tensor([0.5, 1.0, 2.0])),
          lambda g: (_x(g, 4, 3), _labels(g, 4, 3))),
        c("NLLLoss", _WeightedNLL, lambda g: (_x(g, 4, 3), _labels(g, 4, 3))),
        c("BCEWithLogitsLoss", lambda: nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 0.5])),
          lambda g: (_x(g, 3, 2), torch.rand(3, 2, generator=g, dtype=torch.float64))),
        c("MSELoss", lambda: nn.MSELoss(), lambda g: (_x(g, 3, 4), _x(g, 3, 4))),
        c("HuberLoss", lambda: nn.HuberLoss(delta=0.5), lambda g: (_x(g, 3, 4), _x(g, 3, 4))),
        c("KLDivLoss", lambda: nn.KLDivLoss(reduction="batchmean"),
          lambda g: (torch.log_softmax(_x(g, 3, 4), -1), torch.softmax(_x(g, 3, 4), -1))),
        c("CosineEmbeddingLoss", lambda: nn.CosineEmbeddingLoss(),
          lambda g: (_x(g, 3, 4), _x(g, 3, 4), torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64))),
        c("Softmax", lambda: nn.Softmax(-1), lambda g: (_x(g, 3, 5),)),
        c("LogSoftmax", lambda: nn.LogSoftmax(-1), lambda g: (_x(g, 3, 5),)),
        c("GELU", lambda: nn.GELU(), lambda g: (_x(g, 3, 4),)),
        c("SiLU", lambda: nn.SiLU(), lambda g: (_x(g, 3, 4),)),
        c("Mish", lambda: nn.Mish(), lambda g: (_x(g, 3, 4),)),
        c("Softplus", lambda: nn.Softplus(), lambda g: (_x(g, 3, 4),)),
        c("GLU", lambda: nn.GLU(), lambda g: (_x(g, 3, 4),)),
        c("MLP", lambda: nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2)), lambda g: (_x(g, 3, 4),)),
        c("CNN", _cnn, lambda g: (_x(g, 2, 2, 5, 5),)),
        c("CosineSimilarity", lambda: nn.CosineSimilarity(), lambda g: (_x(g, 3, 4), _x(g, 3, 4))),
        c("PairwiseDistance", lambda: nn.PairwiseDistance(), lambda g: (_x(g, 3, 4), _x(g, 3, 4))),
    ]


def module_corpus() -> tuple[ModuleCase, ...]:
    """Every case."""
    return tuple(_cases())


def module_case(name: str) -> ModuleCase:
    """The case called ``name``."""
    for case in module_corpus():
        if case.name == name:
            return case
    raise KeyError(f"No module case {name!r}.")


def _total(out) -> torch.Tensor:
    """The sum of every floating-point tensor in a module's output (tuples nest: LSTM's (y, (h, c)))."""
    if isinstance(out, torch.Tensor):
        return out.sum() if out.is_floating_point() else out.new_zeros((), dtype=torch.float64)
    return sum((_total(o) for o in out), torch.zeros((), dtype=torch.float64))


class _AddToGradient(torch.autograd.Function):
    """Identity forward; backward adds ``delta`` at flat position ``k`` of the gradient."""

    @staticmethod
    def forward(ctx, w, k, delta):
        ctx.k, ctx.delta = k, delta
        return w.view_as(w)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        grad.view(-1)[ctx.k] += ctx.delta
        return grad, None, None


class _Planted(nn.Module):
    def __init__(self, k: int, delta: float):
        super().__init__()
        self.k, self.delta = k, delta

    def forward(self, w):
        return _AddToGradient.apply(w, self.k, self.delta)


def plant_error(module: nn.Module, inputs: tuple, name: str, relative: float, seed: int = 0):
    """``module`` with one element of parameter ``name``'s gradient off by ``relative`` of
    its size (at least 10 atol of the dtype), the forward unchanged: an identity
    parametrization whose backward adds the error (so it follows the module into a
    float64 copy). Returns the module and that element's name as a check names it.

    >>> m, label = plant_error(nn.Linear(3, 2).double(), (torch.ones(1, 3, dtype=torch.float64),), "weight", 0.5)
    >>> label.startswith("parametrizations.weight.original[")
    True
    """
    from torch.nn.utils import parametrize

    from gradlab.numerics.dtypes import resolve_tolerances

    weight = dict(module.named_parameters())[name]
    g = torch.autograd.grad(_total(module(*inputs)), weight, allow_unused=True)[0]
    g = torch.zeros_like(weight) if g is None else g
    g = g.reshape(-1)
    k = int(torch.randint(g.numel(), (1,), generator=torch.Generator().manual_seed(seed)))
    _, atol = resolve_tolerances(weight.dtype)
    delta = max(relative * abs(float(g[k])), 10 * atol)
    owner_path, _, attribute = name.rpartition(".")
    owner = module.get_submodule(owner_path) if owner_path else module
    parametrize.register_parametrization(owner, attribute, _Planted(k, delta), unsafe=True)
    index = np.unravel_index(k, tuple(weight.shape))
    prefix = f"{owner_path}." if owner_path else ""
    return module, f"{prefix}parametrizations.{attribute}.original[{', '.join(str(int(i)) for i in index)}]"
