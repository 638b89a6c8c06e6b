"""The hand-written Functions of :mod:`gradlab.testing.functions` built on linear maps: matmul,
a linear layer, cumsum, a linear solve, conv1d via unfold, a summed embedding bag and scaled
dot-product attention (optionally causal, masked with ``masked_fill(-inf)``).

Each is written as an engineer writes one (forward, ``ctx.save_for_backward``, a backward
by hand); :mod:`gradlab.testing.functions` names them as cases with their references.

>>> q = k = v = torch.ones(1, 3, 4, dtype=torch.float64, requires_grad=True)
>>> out = Attention.apply(q, k, v, True)
>>> torch.allclose(out, attention_reference(q, k, v, True))
True
"""

from __future__ import annotations

import math

import torch
from torch.autograd import Function

__all__ = ["Matmul", "Linear", "Cumsum", "LinearSolve", "Conv1dUnfold", "EmbeddingBagSum", "Attention",
           "attention_reference", "BAG_INDEX", "BAG_OFFSETS"]


class Matmul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.T, a.T @ g


class Linear(Function):
    """x @ W.T + b, any leading dimensions of x."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w.T + b

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        g2, x2 = g.reshape(-1, g.shape[-1]), x.reshape(-1, x.shape[-1])
        return g @ w, g2.T @ x2, g2.sum(0)


class Cumsum(Function):
    @staticmethod
    def forward(ctx, x):
        return x.cumsum(-1)

    @staticmethod
    def backward(ctx, g):
        return g.flip(-1).cumsum(-1).flip(-1)


def _wide(t):
    """float64 stays; a lower precision is solved in float32 (torch has no bfloat16 solve)."""
    return t if t.dtype == torch.float64 else t.float()


class LinearSolve(Function):
    """x = A^-1 b."""

    @staticmethod
    def forward(ctx, a, b):
        x = torch.linalg.solve(_wide(a), _wide(b))
        ctx.save_for_backward(a, x)
        return x.to(b.dtype)

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        gb = torch.linalg.solve(_wide(a).T, _wide(g))
        return (-gb @ x.T).to(a.dtype), gb.to(g.dtype)


class Conv1dUnfold(Function):
    """conv1d (no padding, stride 1) as an unfold and a contraction; the fold by a loop."""

    @staticmethod
    def forward(ctx, x, w):
        cols = x.unfold(2, w.shape[-1], 1)  # (B, C, L_out, K)
        ctx.save_for_backward(cols, w)
        ctx.length = x.shape[-1]
        return torch.einsum("bclk,ock->bol", cols, w)

    @staticmethod
    def backward(ctx, g):
        cols, w = ctx.saved_tensors
        dcols = torch.einsum("bol,ock->bclk", g, w)
        dx = g.new_zeros(cols.shape[0], cols.shape[1], ctx.length)
        for k in range(w.shape[-1]):
            dx[:, :, k:k + cols.shape[2]] += dcols[..., k]
        return dx, torch.einsum("bol,bclk->ock", g, cols)


BAG_INDEX = torch.tensor([0, 2, 2, 5, 7, 1, 3, 9, 4, 8, 6, 6])
BAG_OFFSETS = torch.tensor([0, 3, 5, 9])


class EmbeddingBagSum(Function):
    @staticmethod
    def forward(ctx, weight, index, offsets):
        counts = torch.diff(offsets, append=torch.tensor([len(index)]))
        bag = torch.repeat_interleave(torch.arange(len(offsets)), counts)
        ctx.save_for_backward(index, offsets)
        ctx.rows = weight.shape[0]
        return weight.new_zeros(len(offsets), weight.shape[1]).index_add_(0, bag, weight[index])

    @staticmethod
    def backward(ctx, g):
        index, offsets = ctx.saved_tensors
        dw = g.new_zeros(ctx.rows, g.shape[1])
        ends = torch.cat([offsets[1:], torch.tensor([len(index)])])
        for b in range(len(offsets)):
            rows = index[offsets[b]:ends[b]]
            dw.index_add_(0, rows, g[b].expand(len(rows), -1))
        return dw, None, None


def _causal_mask(t: int, s: int) -> torch.Tensor:
    return torch.ones(t, s, dtype=torch.bool).triu(1)


class Attention(Function):
    """softmax(q k^T / sqrt(d), masked_fill(-inf) above the diagonal when causal) v."""

    @staticmethod
    def forward(ctx, q, k, v, causal=False):
        scale = 1 / math.sqrt(q.shape[-1])
        scores = q @ k.transpose(-1, -2) * scale
        if causal:
            scores = scores.masked_fill(_causal_mask(q.shape[-2], k.shape[-2]), float("-inf"))
        p = torch.softmax(scores, -1)
        ctx.save_for_backward(q, k, v, p, scores)
        ctx.scale = scale
        return p @ v

    @staticmethod
    def backward(ctx, g):
        q, k, v, p, _ = ctx.saved_tensors
        dp = g @ v.transpose(-1, -2)
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        return ds @ k * ctx.scale, ds.transpose(-1, -2) @ q * ctx.scale, p.transpose(-1, -2) @ g, None


def attention_reference(q, k, v, causal=False):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(_causal_mask(q.shape[-2], k.shape[-2]), float("-inf"))
    return torch.softmax(scores, -1) @ v
