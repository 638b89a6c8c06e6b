"""Units in the last place: spacing, distance and bit patterns of floats in any GradLab dtype.

Two floats of one dtype are ``n`` ulps apart when ``n - 1`` representable
numbers lie strictly between them. We count them exactly by viewing the bit
pattern as a signed integer of the same width and mapping negative floats so
that integer order equals float order (sign-magnitude -> two's complement).

>>> ulp(1.0, "float32") == facts("float32").eps
True
>>> ulp_distance(1.0, 1.0 + facts("float32").eps, "float32")
1
>>> float_hex(1.0, "float32"), float_hex(-2.0, "bfloat16")
('0x3f800000', '0xc000')
"""

from __future__ import annotations

import numpy as np
import torch

from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import DTYPE_TABLE, facts

__all__ = [
    "bit_patterns",
    "bit_width",
    "hex_of",
    "ordered_keys",
    "ulp",
    "ulp_distance",
    "ulp_distances",
    "float_hex",
    "float_bits",
    "from_bits",
    "hex_strings",
]

#: The signed integer dtype of each bit width: ``Tensor.view`` reads a float's bits through the
#: integer as wide as it (bfloat16 is 16 bits wide like float16, so both view as int16).
_SIGNED_INT = {8: torch.int8, 16: torch.int16, 32: torch.int32, 64: torch.int64}


def _int_view(dtype: torch.dtype) -> torch.dtype:
    """The integer dtype that views ``dtype``'s bits, for any row of the dtype table.

    >>> _int_view(torch.bfloat16), _int_view(torch.float8_e5m2)
    (torch.int16, torch.int8)
    """
    if not any(row.torch_dtype == dtype for row in DTYPE_TABLE.values()):
        names = ", ".join(DTYPE_TABLE)
        raise GradLabError(f"Ulp arithmetic needs a tensor of one of GradLab's dtypes ({names}); got {dtype}.")
    return _SIGNED_INT[torch.finfo(dtype).bits]


def bit_width(dtype: str | torch.dtype) -> int:
    """Number of bits in one value of ``dtype``.

    >>> bit_width("bfloat16"), bit_width("float64")
    (16, 64)
    """
    return torch.finfo(facts(dtype).torch_dtype).bits


def _as_tensor(values, dtype: str | torch.dtype) -> torch.Tensor:
    """Values rounded to the dtype (a tensor already of that dtype is used as it is)."""
    target = facts(dtype).torch_dtype
    if isinstance(values, torch.Tensor):
        return values.detach().to(target)
    return torch.as_tensor(np.asarray(values, dtype=np.float64)).to(target)


def _raw_bits(t: torch.Tensor) -> torch.Tensor:
    """The bit pattern of each value as a signed int64 (sign-extended from the dtype's width)."""
    return t.contiguous().view(_int_view(t.dtype)).to(torch.int64)


def ordered_keys(t: torch.Tensor) -> torch.Tensor:
    """Integers whose order and differences are those of the floats in ``t`` (int64).

    A negative float has its sign bit set, so its signed view is ``INT_MIN + m``
    with ``m`` the magnitude bits; ``INT_MIN - view = -m`` puts it below zero in
    the right order, and -0.0 lands on 0 like +0.0.

    >>> ordered_keys(torch.tensor([-1.0, -0.0, 0.0, 1.0])).tolist()
    [-1065353216, 0, 0, 1065353216]
    """
    raw = _raw_bits(t)  # refuses a dtype outside the table, in one sentence
    int_min = -(2 ** (torch.finfo(t.dtype).bits - 1))
    return torch.where(raw < 0, int_min - raw, raw)


def ulp(value, dtype: str | torch.dtype):
    """Spacing of ``dtype``'s floats at the real number ``value`` (float or numpy array).

    For |value| in the binade [2**e, 2**(e+1)) this is ``eps * 2**e``; below the
    smallest normal number the spacing stays that of the subnormals. Values past
    the largest finite number get the top binade's spacing.

    >>> ulp(3.0, "float16")
    0.001953125
    >>> ulp(0.0, "float32") == facts("float32").tiny * facts("float32").eps
    True
    """
    info = facts(dtype)
    magnitude = np.minimum(np.abs(np.asarray(value, dtype=np.float64)), info.max)
    # frexp gives |v| = m * 2**k with m in [0.5, 1): the binade exponent is k - 1.
    _, k = np.frexp(np.maximum(magnitude, info.tiny))
    spacing = np.ldexp(info.eps, k - 1)
    return float(spacing) if np.ndim(spacing) == 0 else spacing


def ulp_distances(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    """Element-wise count of ulps between two tensors of one dtype (numpy int64).

    Positions where either value is NaN get -1. Infinity counts as the number
    after the largest finite one. Distances too big for int64 (only float64
    values of opposite sign near the overflow threshold) saturate at its maximum.

    >>> x = torch.tensor([1.0, 1.0, -0.0], dtype=torch.float16)
    >>> y = torch.tensor([1.0, 1.0009765625, 0.0], dtype=torch.float16)
    >>> ulp_distances(x, y).tolist()
    [0, 1, 0]
    """
    if a.dtype != b.dtype or a.shape != b.shape:
        raise GradLabError(
            f"Ulp distances need two tensors of the same dtype and shape; got {a.dtype} {tuple(a.shape)} "
            f"and {b.dtype} {tuple(b.shape)}."
        )
    ka, kb = ordered_keys(a).numpy(), ordered_keys(b).numpy()
    # |ka - kb| can exceed int64 for float64; unsigned wrap-around arithmetic is exact mod 2**64.
    hi, lo = np.maximum(ka, kb), np.minimum(ka, kb)
    distance = hi.astype(np.uint64) - lo.astype(np.uint64)
    distance = np.minimum(distance, np.uint64(np.iinfo(np.int64).max)).astype(np.int64)
    nan = (torch.isnan(a) | torch.isnan(b)).numpy()
    return np.where(nan, -1, distance)


def ulp_distance(a: float, b: float, dtype: str | torch.dtype) -> int:
    """How many ulps of ``dtype`` separate ``a`` and ``b`` (each first rounded to the dtype).

    0 exactly when the two are the same float (+0.0 and -0.0 count as equal).

    >>> ulp_distance(-0.0, 0.0, "float64")
    0
    >>> ulp_distance(-facts("float16").tiny, facts("float16").tiny, "float16") == 2 * 2**10
    True
    """
    ta, tb = _as_tensor([a], dtype), _as_tensor([b], dtype)
    if torch.isnan(ta).any() or torch.isnan(tb).any():
        raise GradLabError("The ulp distance is not defined for NaN; give two numbers.")
    # Python ints: exact even where int64 would overflow.
    return abs(int(ordered_keys(ta)[0]) - int(ordered_keys(tb)[0]))


def hex_strings(t: torch.Tensor) -> list[str]:
    """The bit pattern of every value of a float tensor, as ``0x``-prefixed hex.

    >>> hex_strings(torch.tensor([1.0, -0.5], dtype=torch.float16))
    ['0x3c00', '0xb800']
    """
    return hex_of(bit_patterns(t))


def bit_patterns(t: torch.Tensor) -> np.ndarray:
    """The bit pattern of every value as an unsigned integer as wide as the dtype.

    Numbers, not strings: a column of 100,000 of them is one array, where hex text
    is 100,000 Python objects (the Round-off lab's tables kept the server's heap
    fragmented). :func:`hex_of` formats the few that are shown.

    >>> bit_patterns(torch.tensor([1.0, -0.5], dtype=torch.float16))
    array([15360, 47104], dtype=uint16)
    """
    view = t.reshape(-1).contiguous().view(_int_view(t.dtype)).numpy()
    return view.view(view.dtype.str.replace("i", "u"))


def hex_of(bits: np.ndarray) -> list[str]:
    """``0x``-prefixed hex of bit patterns from :func:`bit_patterns` (width from their dtype).

    >>> hex_of(bit_patterns(torch.tensor([1.0, -0.5], dtype=torch.float16)))
    ['0x3c00', '0xb800']
    """
    digits = 2 * np.asarray(bits).dtype.itemsize
    return [f"0x{int(b):0{digits}x}" for b in np.asarray(bits).tolist()]


def float_hex(value: float, dtype: str | torch.dtype) -> str:
    """The bit pattern of ``value`` rounded to ``dtype``, in hex.

    >>> float_hex(0.1, "float64")
    '0x3fb999999999999a'
    """
    return hex_strings(_as_tensor([value], dtype))[0]


def float_bits(value: float, dtype: str | torch.dtype) -> str:
    """Sign, exponent and fraction bits of ``value`` rounded to ``dtype``, space-separated.

    >>> float_bits(1.0, "bfloat16")
    '0 01111111 0000000'
    >>> float_bits(-2.0, "float16")
    '1 10000 0000000000'
    """
    info = facts(dtype)
    width = bit_width(dtype)
    pattern = f"{int(float_hex(value, dtype), 16):0{width}b}"
    exponent_end = width - info.mantissa_bits
    return f"{pattern[0]} {pattern[1:exponent_end]} {pattern[exponent_end:]}"


def from_bits(bits: str, dtype: str | torch.dtype) -> float:
    """The number of ``dtype`` whose sign, exponent and fraction bits are ``bits`` (spaces ignored):
    :func:`float_bits`'s inverse, so a reader can set a float bit by bit.

    >>> from_bits("0 01111111 0000000", "bfloat16"), from_bits(float_bits(0.1, "float32"), "float32")
    (1.0, 0.10000000149011612)
    >>> from_bits("0 11111111 00000000000000000000000", "float32")
    inf
    """
    pattern = bits.replace(" ", "")
    width = bit_width(dtype)
    if len(pattern) != width or set(pattern) - {"0", "1"}:
        raise GradLabError(f"{facts(dtype).name} has {width} bits, each 0 or 1; got {bits!r}.")
    raw = int(pattern, 2)
    signed = raw - (1 << width) if raw >= 1 << (width - 1) else raw  # the signed view's integer
    integer = torch.tensor([signed], dtype=_SIGNED_INT[width])
    return float(integer.view(facts(dtype).torch_dtype).to(torch.float64).item())
