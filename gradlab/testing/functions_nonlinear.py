"""The hand-written activations, normalisations, softmax and losses of :mod:`gradlab.testing.functions`.

Each is written as an engineer writes one: a forward, ``ctx.save_for_backward``, a
backward by hand (the linear maps are in :mod:`gradlab.testing.functions_linear`).

>>> x = torch.tensor([-1.0, 2.0], dtype=torch.float64, requires_grad=True)
>>> LeakyReLU.apply(x).sum().backward()
>>> x.grad.tolist()
[0.01, 1.0]
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch.autograd import Function

__all__ = ["GeluTanh", "Softplus", "SiLU", "Tanh", "Sigmoid", "LeakyReLU", "LayerNorm", "RMSNorm", "Softmax",
           "LogSoftmaxNLL", "MSE", "Huber", "NLL_TARGET", "GELU_C", "lead"]


def lead(t: torch.Tensor) -> tuple[int, ...]:
    """The leading dimensions of ``t`` (all but the last): what a parameter's gradient sums over."""
    return tuple(range(t.dim() - 1))


# --- elementwise -----------------------------------------------------------------------------------
GELU_C = math.sqrt(2 / math.pi)


class GeluTanh(Function):
    """Fused GELU, tanh approximation (as in GPT-2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * x * (1 + torch.tanh(GELU_C * (x + 0.044715 * x ** 3)))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        t = torch.tanh(GELU_C * (x + 0.044715 * x ** 3))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x))


class Softplus(Function):
    """log(1 + e^x), linear above ``threshold`` (as F.softplus)."""

    @staticmethod
    def forward(ctx, x, threshold=4.0):
        ctx.save_for_backward(x)
        ctx.threshold = threshold
        return torch.where(x > threshold, x, torch.log1p(torch.exp(x)))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.where(x > ctx.threshold, torch.ones_like(x), torch.sigmoid(x)), None


class SiLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return g * s * (1 + x * (1 - s))


class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        _, y = ctx.saved_tensors
        return g * (1 - y * y)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        _, y = ctx.saved_tensors
        return g * y * (1 - y)


class LeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, slope=0.01):
        ctx.save_for_backward(x)
        ctx.slope = slope
        return torch.where(x > 0, x, slope * x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return torch.where(x > 0, g, ctx.slope * g), None


# --- normalisation, softmax, losses -----------------------------------------------------------------
class LayerNorm(Function):
    """Over the last dimension, with weight and bias; any leading dimensions."""

    @staticmethod
    def forward(ctx, x, w, b, eps=1e-5):
        mu = x.mean(-1, keepdim=True)
        rstd = torch.rsqrt(((x - mu) ** 2).mean(-1, keepdim=True) + eps)
        xhat = (x - mu) * rstd
        ctx.save_for_backward(xhat, rstd, w)
        return xhat * w + b

    @staticmethod
    def backward(ctx, g):
        xhat, rstd, w = ctx.saved_tensors
        gy = g * w
        dx = rstd * (gy - gy.mean(-1, keepdim=True) - xhat * (gy * xhat).mean(-1, keepdim=True))
        return dx, (g * xhat).sum(lead(g)), g.sum(lead(g)), None


class RMSNorm(Function):
    @staticmethod
    def forward(ctx, x, w, eps=1e-6):
        rrms = torch.rsqrt((x * x).mean(-1, keepdim=True) + eps)
        xhat = x * rrms
        ctx.save_for_backward(xhat, rrms, w)
        return xhat * w

    @staticmethod
    def backward(ctx, g):
        xhat, rrms, w = ctx.saved_tensors
        gy = g * w
        return rrms * (gy - xhat * (gy * xhat).mean(-1, keepdim=True)), (g * xhat).sum(lead(g)), None


class Softmax(Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.softmax(x, -1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum(-1, keepdim=True))


NLL_TARGET = torch.tensor([1, 0, 4, 2, 3, 1])


class LogSoftmaxNLL(Function):
    """Fused log-softmax and mean negative log-likelihood of integer targets."""

    @staticmethod
    def forward(ctx, x, target):
        m = x.max(-1, keepdim=True).values
        logp = x - m - torch.log(torch.exp(x - m).sum(-1, keepdim=True))
        ctx.save_for_backward(torch.exp(logp), target)
        return -logp.gather(1, target[:, None]).mean()

    @staticmethod
    def backward(ctx, g):
        p, target = ctx.saved_tensors
        return g * (p - F.one_hot(target, p.shape[-1]).to(p.dtype)) / p.shape[0], None


class MSE(Function):
    """Mean squared error; both sides checked."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x - y)
        return ((x - y) ** 2).mean()

    @staticmethod
    def backward(ctx, g):
        (d,) = ctx.saved_tensors
        dx = g * 2 * d / d.numel()
        return dx, -dx


class Huber(Function):
    """Mean Huber loss of x - y (delta 1)."""

    @staticmethod
    def forward(ctx, x, y, delta=1.0):
        r = x - y
        ctx.save_for_backward(r)
        ctx.delta = delta
        return torch.where(r.abs() <= delta, 0.5 * r * r, delta * (r.abs() - 0.5 * delta)).mean()

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        dr = g * torch.where(r.abs() <= ctx.delta, r, ctx.delta * torch.sign(r)) / r.numel()
        return dr, -dr, None
