"""Models built from the hand-written Functions, to plant one buggy Function in for ``check_layers``.

:class:`CausalGPT` is a causal-masked GPT-like stack (token and position embeddings, 2
blocks of LayerNorm, multi-head self-attention and an MLP with a fused GELU, a final
LayerNorm and a head; d = 32, 4 heads). Its attention module calls the attention
Function inline, between its child linears ``qkv`` and ``proj``, as nanoGPT-style code
does. :class:`SmallCNN` is two conv1d-via-unfold layers with LeakyReLU and SiLU, a mean over
the length and a linear head. Every layer is a :class:`FunctionModule`: its ``function``
is a correct Function of :mod:`gradlab.testing.functions`, and ``plant=PATH`` swaps the
module at PATH (one of :data:`GPT_PLACES` or :data:`CNN_PLACES`) to its buggy twin
(``buggy``, from :mod:`gradlab.testing.functions_buggy`), forward unchanged.

>>> model = CausalGPT(plant="blocks.0.ln1")
>>> tokens = gpt_tokens()
>>> tuple(model(tokens).shape)
(2, 8, 16)
>>> model.get_submodule("blocks.0.ln1").function.__name__, model.planted
('LayerNormWrongDim', 'blocks.0.ln1')
>>> torch.equal(model(tokens), CausalGPT()(tokens))  # the same seeded weights, the same forward
True
"""

from __future__ import annotations

import torch
from torch import nn

from gradlab.testing import functions_nonlinear as f
from gradlab.testing import functions_buggy as fb
from gradlab.testing import functions_linear as fl

__all__ = ["FunctionModule", "CausalGPT", "SmallCNN", "GPT_PLACES", "CNN_PLACES", "gpt_tokens", "cnn_input"]


class FunctionModule(nn.Module):
    """A layer whose forward is one hand-written Function; ``buggy`` is the twin a plant swaps in."""

    function: type = None
    buggy: type = None


class FnLinear(FunctionModule):
    function, buggy = fl.Linear, fb.LinearNoBiasGrad

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in) / d_in ** 0.5)
        self.bias = nn.Parameter(torch.randn(d_out) * 0.1)

    def forward(self, x):
        return self.function.apply(x, self.weight, self.bias)


class FnLayerNorm(FunctionModule):
    function, buggy = f.LayerNorm, fb.LayerNormWrongDim

    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))
        self.bias = nn.Parameter(0.1 * torch.randn(d))

    def forward(self, x):
        return self.function.apply(x, self.weight, self.bias)


class FnActivation(FunctionModule):
    def forward(self, x):
        return self.function.apply(x)


class FnGELU(FnActivation):
    function, buggy = f.GeluTanh, fb.GeluOutputForInput


class FnLeakyReLU(FnActivation):
    function, buggy = f.LeakyReLU, fb.LeakyReLUNegatives


class FnSiLU(FnActivation):
    function, buggy = f.SiLU, fb.SiLUNegatives


class FnConv1d(FunctionModule):
    function, buggy = fl.Conv1dUnfold, fb.Conv1dSkipsFirstTap

    def __init__(self, c_in: int, c_out: int, k: int = 3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c_out, c_in, k) / (c_in * k) ** 0.5)

    def forward(self, x):
        return self.function.apply(x, self.weight)


class CausalSelfAttention(FunctionModule):
    """qkv, the causal attention Function inline on the heads, proj (the Function's output is
    not this module's output: ``proj``'s is)."""

    function, buggy = fl.Attention, fb.CausalAttentionWrongDim

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = FnLinear(d, 3 * d), FnLinear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in self.qkv(x).split(d, -1))
        y = self.function.apply(q, k, v, True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class MLP(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.fc1, self.act, self.fc2 = FnLinear(d, 4 * d), FnGELU(), FnLinear(4 * d, d)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.ln1, self.attn, self.ln2, self.mlp = FnLayerNorm(d), CausalSelfAttention(d, heads), FnLayerNorm(d), MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def _planted(model: nn.Module, plant: str | None) -> str | None:
    if plant is not None:
        module = model.get_submodule(plant)
        if not isinstance(module, FunctionModule):
            raise ValueError(f"{plant!r} is not a layer with a hand-written Function.")
        module.function = module.buggy
    return plant


#: Where a bug can be planted in CausalGPT (its attention Function is inline in blocks.N.attn).
GPT_PLACES = ("blocks.0.attn", "blocks.1.attn", "blocks.0.ln1", "blocks.1.ln2", "blocks.0.mlp.fc1",
              "blocks.1.mlp.act", "ln_f", "head")


class CausalGPT(nn.Module):
    """A causal-masked GPT-like stack of hand-written Functions (seeded, float64)."""

    def __init__(self, vocab: int = 16, length: int = 8, d: int = 32, heads: int = 4, layers: int = 2,
                 plant: str | None = None, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(length, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f, self.head = FnLayerNorm(d), FnLinear(d, vocab)
        self.double()
        self.planted = _planted(self, plant)

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[-1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def gpt_tokens(batch: int = 2, length: int = 8, vocab: int = 16, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


#: Where a bug can be planted in SmallCNN.
CNN_PLACES = ("conv1", "act1", "conv2", "act2", "head")


class SmallCNN(nn.Module):
    """conv1d (unfold) -> LeakyReLU -> conv1d -> SiLU -> mean over length -> linear (seeded, float64)."""

    def __init__(self, channels: int = 3, width: int = 8, classes: int = 4, plant: str | None = None, seed: int = 0):
        super().__init__()
        torch.manual_seed(seed)
        self.conv1, self.act1 = FnConv1d(channels, width), FnLeakyReLU()
        self.conv2, self.act2 = FnConv1d(width, width), FnSiLU()
        self.head = FnLinear(width, classes)
        self.double()
        self.planted = _planted(self, plant)

    def forward(self, x):
        return self.head(self.act2(self.conv2(self.act1(self.conv1(x)))).mean(-1))


def cnn_input(batch: int = 2, channels: int = 3, length: int = 16, seed: int = 0) -> torch.Tensor:
    return torch.randn(batch, channels, length, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
