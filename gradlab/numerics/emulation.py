"""8-bit floats emulated: arithmetic in float32, every value rounded to the 8-bit format.

torch has the float8 dtypes (``float8_e4m3fn``, ``float8_e5m2``) for storage and
casts, but no arithmetic on them. GradLab emulates a computation "in" such a
format the way fp8 training kernels behave: each operation runs in float32
(the dtype row's ``compute`` dtype) and its result is rounded to the 8-bit
format, by torch's own cast. Inside :func:`emulated`, every torch operation
whose result is a float32 tensor has it rounded so; a gradient through such a
computation is rounded at the same points on the way back
(:class:`RoundedTo`), so autograd "in fp8" is emulated too.

The rounding step (:func:`rounded`) is IEEE 754's for every user of it: a value
whose round-to-nearest-even with an unbounded exponent lies beyond the largest
finite number overflows. torch's cast to ``float8_e4m3fn`` saturates instead
(1096.6, and even inf, become 448: the format has no inf); here such a value
becomes NaN, e4m3fn's only non-finite value, so an overflow propagates as
float16's inf does. Near 448 e4m3fn's numbers are 32 apart: 464 is the tie
between 448 and 480 and goes to the even 448, anything above it overflows.

>>> x = to_dtype(0.3, "float8_e4m3fn")  # 0.3 on e4m3's grid (spacing 2**-5 there)
>>> float(x)
0.3125
>>> with emulated("float8_e4m3fn"):
...     y = x * 3  # 0.9375 in float32, rounded to e4m3: 0.9375 is on its grid
...     z = x + 0.01  # 0.3225 rounds back to 0.3125: the step is lost
>>> float(y), float(z)
(0.9375, 0.3125)
>>> with emulated("float8_e4m3fn"):
...     big = to_dtype([7.0, 14.5, 14.625], "float8_e4m3fn") * 32  # 224, 464 (a tie), 468
...     past = torch.exp(to_dtype(7.0, "float8_e4m3fn"))  # e**7 = 1096.6
>>> big.tolist(), float(past)
([224.0, 448.0, nan], nan)
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from gradlab.compat import torch_functions_unmodified
from gradlab.numerics.dtypes import DtypeFacts, facts

__all__ = ["compute_dtype", "to_dtype", "round_to_dtype", "rounded", "emulated", "RoundedTo", "round_to_bfloat16"]

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


def round_to_dtype(value: float, dtype: str | torch.dtype) -> float:
    """The float64 value of ``value`` after rounding it to ``dtype`` (an overflow of e4m3fn, which
    has no inf, is NaN: :func:`to_dtype`).

    >>> round_to_dtype(0.1, "float16"), round_to_dtype(1e6, "float16"), round_to_dtype(1e6, "e4m3")
    (0.0999755859375, inf, nan)
    """
    return float(to_dtype(float(value), facts(dtype).name).to(torch.float64))


def to_dtype(values, dtype) -> torch.Tensor:
    """``values`` as ``dtype`` holds them, in its compute dtype: correctly rounded, ties to even.

    torch casts float64 to a narrower format through float32, rounding twice: 1 + 2**-11 + 2**-40
    becomes float16's 1.0, not the nearer 1 + 2**-10. Rounding to float32 *to odd* first (keeping
    a sticky last bit) makes the second rounding the correct one, as 24 >= p + 2 bits for p <= 11.

    >>> float(to_dtype(1 + 2 ** -11 + 2 ** -40, "float16")) == 1 + 2 ** -10
    True
    >>> to_dtype([464.0, 468.0, float("inf")], "float8_e4m3fn").tolist()  # see the module docstring
    [448.0, nan, nan]
    """
    info = facts(dtype)
    with torch_functions_unmodified():  # inside emulated(), these steps must not be rounded
        t = torch.as_tensor(np.asarray(values, dtype=np.float64))
        narrower = torch.finfo(info.torch_dtype).bits < 32
        held = rounded(_to_float32_odd(t) if narrower else t, info)
        return held if info.emulated else held.to(info.torch_dtype)


def _to_float32_odd(t: torch.Tensor) -> torch.Tensor:
    """float64 ``t`` rounded to float32 to odd: exact values kept, any other one to whichever of
    its two float32 neighbours has an odd last bit (so a later rounding cannot meet a false tie)."""
    near = t.to(torch.float32)
    inexact = near.to(torch.float64) != t
    if not bool((inexact & ~t.isnan()).any()):
        return near
    other = torch.nextafter(near, torch.where(near.to(torch.float64) > t, -torch.inf, torch.inf).to(torch.float32))
    even = (near.view(torch.int32) & 1) == 0
    return torch.where(inexact & even & ~t.isnan(), other, near)


def _overflow_limit(info) -> tuple[float, bool]:
    """Halfway from the largest finite number to the next one an unbounded exponent would give,
    and whether that tie overflows: round-to-nearest-even goes up exactly when the largest number's
    significand is odd (float16's 65504 is; e4m3fn's 448 = 0b1110 * 2**5 is not: 464 rounds to 448)."""
    spacing = math.ldexp(1.0, math.frexp(info.max)[1] - 1 - info.mantissa_bits)
    return info.max + spacing / 2, int(info.max / spacing) % 2 == 1


def rounded(t: torch.Tensor, dtype) -> torch.Tensor:
    """``t`` (float32 or float64) rounded to ``dtype``'s grid by torch's cast, returned in ``t``'s
    dtype; for a format without inf (e4m3fn), an overflow is NaN instead of torch's saturated max.

    >>> rounded(torch.tensor([0.3, 500.0]), "float8_e4m3fn").tolist()
    [0.3125, nan]
    """
    info = dtype if isinstance(dtype, DtypeFacts) else facts(dtype)
    with torch_functions_unmodified():  # inside emulated(), these steps must not be rounded
        held = t.to(info.torch_dtype).to(t.dtype)
        if info.has_inf:
            return held
        limit, tie_overflows = _overflow_limit(info)
        size = t.abs()
        past = (size > limit) | ((size == limit) & tie_overflows)  # inf included; NaN stays NaN
        return torch.where(past, torch.nan, held) if bool(past.any()) else held


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
    """Round to an emulated format (:func:`rounded`) on the way forward, and the gradient on the way back."""

    @staticmethod
    def forward(ctx, t: torch.Tensor, info: DtypeFacts) -> torch.Tensor:
        ctx.info = info
        return rounded(t, info)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return rounded(grad, ctx.info), None


class _Rounding(TorchFunctionMode):
    def __init__(self, info: DtypeFacts):
        super().__init__()
        self.info, self.compute = info, info.compute

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") in _PASS_THROUGH:
            return out
        if isinstance(out, torch.Tensor) and out.dtype == self.compute:
            return RoundedTo.apply(out, self.info)  # the mode is off inside its own handler
        return out


@contextmanager
def emulated(dtype) -> Iterator[None]:
    """Inside the block, float32 results are rounded to ``dtype`` (no-op for a native dtype)."""
    info = facts(dtype)
    if not info.emulated:
        yield
        return
    with _Rounding(info):
        yield
