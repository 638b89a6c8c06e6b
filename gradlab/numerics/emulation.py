"""8-bit floats emulated: arithmetic in float32, every value rounded to the 8-bit format.

torch has the float8 dtypes (``float8_e4m3fn``, ``float8_e5m2``) for storage and
casts, but no arithmetic on them. GradLab emulates a computation "in" such a
format the way fp8 training kernels behave: each operation runs in float32
(the dtype row's ``compute`` dtype) and its result is rounded to the 8-bit
format, by torch's own cast. Inside :func:`emulated`, every torch operation
whose result is a float32 tensor has it rounded so; a gradient through such a
computation is rounded at the same points on the way back
(:class:`RoundedTo`), so autograd "in fp8" is emulated too.

>>> x = to_dtype(0.3, "float8_e4m3fn")  # 0.3 on e4m3's grid (spacing 2**-5 there)
>>> float(x)
0.3125
>>> with emulated("float8_e4m3fn"):
...     y = x * 3  # 0.9375 in float32, rounded to e4m3: 0.9375 is on its grid
...     z = x + 0.01  # 0.3225 rounds back to 0.3125: the step is lost
>>> float(y), float(z)
(0.9375, 0.3125)
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from gradlab.numerics.dtypes import facts

__all__ = ["compute_dtype", "to_dtype", "emulated", "RoundedTo", "round_to_bfloat16"]

# Conversions and views must not round: they are how values enter and leave the format.
_PASS_THROUGH = {"to", "type", "float", "double", "numpy", "item", "tolist", "view", "detach", "clone",
                 "requires_grad_", "__get__", "__set__", "size", "dim", "numel", "shape", "dtype"}


def compute_dtype(dtype) -> torch.dtype:
    """The dtype torch computes in for ``dtype``: itself, or float32 for an emulated one.

    >>> compute_dtype("float8_e5m2"), compute_dtype("float64")
    (torch.float32, torch.float64)
    """
    info = facts(dtype)
    return info.compute if info.emulated else info.torch_dtype


def to_dtype(values, dtype) -> torch.Tensor:
    """``values`` as ``dtype`` holds them, in its compute dtype (rounded by torch's cast)."""
    info = facts(dtype)
    t = torch.as_tensor(np.asarray(values, dtype=np.float64))
    if not info.emulated:
        return t.to(info.torch_dtype)
    return t.to(info.torch_dtype).to(info.compute)


_BF16_BITS = 8  # significant bits of a normal bfloat16
_BF16_MIN_SPACING = -133  # exponent of the subnormal spacing, 2**-133
_BF16_OVERFLOW = 2.0 ** 128  # the first value that rounds past the largest finite one


def round_to_bfloat16(value: float) -> float:
    """``value`` rounded to the nearest bfloat16 (ties to even), as a Python float: torch's cast
    without a tensor, for loops that add one scalar at a time (a torch scalar op costs ~5 us).

    A Python float's +, -, * of two bfloat16 values is correctly rounded to 53 bits, and
    53 >= 2*8 + 2, so rounding that again to 8 bits is the correctly rounded bfloat16 result.

    >>> round_to_bfloat16(1 + 2 ** -8), round_to_bfloat16(1 + 3 * 2 ** -8)  # ties to even
    (1.0, 1.015625)
    >>> round_to_bfloat16(3.4e38)
    inf
    """
    if value == 0.0 or not math.isfinite(value):
        return value
    exponent = math.frexp(value)[1]
    spacing = max(exponent - _BF16_BITS, _BF16_MIN_SPACING)
    rounded = math.ldexp(round(math.ldexp(value, -spacing)), spacing)  # round(): ties to even
    return math.copysign(math.inf, value) if abs(rounded) >= _BF16_OVERFLOW else rounded


class RoundedTo(torch.autograd.Function):
    """Round to an emulated format on the way forward, and the gradient on the way back."""

    @staticmethod
    def forward(ctx, t: torch.Tensor, storage: torch.dtype) -> torch.Tensor:
        ctx.storage = storage
        return t.to(storage).to(t.dtype)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return grad.to(ctx.storage).to(grad.dtype), None


class _Rounding(TorchFunctionMode):
    def __init__(self, storage: torch.dtype, compute: torch.dtype):
        super().__init__()
        self.storage, self.compute = storage, compute

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") in _PASS_THROUGH:
            return out
        if isinstance(out, torch.Tensor) and out.dtype == self.compute:
            return RoundedTo.apply(out, self.storage)  # the mode is off inside its own handler
        return out


@contextmanager
def emulated(dtype) -> Iterator[None]:
    """Inside the block, float32 results are rounded to ``dtype`` (no-op for a native dtype)."""
    info = facts(dtype)
    if not info.emulated:
        yield
        return
    with _Rounding(info.torch_dtype, info.compute):
        yield
