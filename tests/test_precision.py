"""The per-dtype facts table against the IEEE-754 (and bfloat16) format definitions.

A binary floating-point format with ``t`` stored fraction bits and exponent
bias ``b`` (``b = 2**(w-1) - 1`` for ``w`` exponent bits) has

    machine epsilon  eps  = 2**-t                (gap between 1 and the next number)
    smallest normal  tiny = 2**(1 - b)
    largest finite   max  = (2 - 2**-t) * 2**b

Every expected number below is computed from (t, w) with exact Python
arithmetic, never read back from torch or from the code under test.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import torch

from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import DTYPE_NAMES, DTYPES, facts, resolve_tolerances
from gradlab.numerics.emulation import round_to_dtype

# name, stored fraction bits t, exponent bits w, complex partner (what torch can compute in)
FORMATS = [
    ("float16", 10, 5, None),  # complex32 exists but has no elementary functions on the CPU
    ("bfloat16", 7, 8, None),  # no complex bfloat16 at all
    ("float32", 23, 8, torch.complex64),
    ("float64", 52, 11, torch.complex128),
]


def _format_numbers(t: int, w: int) -> tuple[Fraction, Fraction, Fraction]:
    bias = 2 ** (w - 1) - 1
    eps = Fraction(1, 2**t)
    tiny = Fraction(2) ** (1 - bias)
    largest = (2 - eps) * Fraction(2) ** bias
    return eps, tiny, largest


@pytest.mark.parametrize("name,t,w,partner", FORMATS, ids=[f[0] for f in FORMATS])
def test_facts_match_the_format_definition(name, t, w, partner):
    eps, tiny, largest = _format_numbers(t, w)
    info = facts(name)
    assert info.name == name
    assert info.torch_dtype == getattr(torch, name)
    assert Fraction(info.eps) == eps
    assert Fraction(info.tiny) == tiny
    assert Fraction(info.max) == largest
    assert info.mantissa_bits == t
    assert info.complex_partner == partner
    assert Fraction(info.unit_roundoff) == eps / 2
    assert info.sqrt_eps == pytest.approx(2.0 ** (-t / 2), rel=1e-15)
    assert info.cbrt_eps == pytest.approx(2.0 ** (-t / 3), rel=1e-15)


@pytest.mark.parametrize(
    "name,eps", [("float16", 2**-10), ("bfloat16", 2**-7), ("float32", 2**-23), ("float64", 2**-52)]
)
def test_machine_epsilon_is_a_power_of_two(name, eps):
    assert facts(name).eps == eps


@pytest.mark.parametrize(
    "name,largest", [("float16", 65504.0), ("bfloat16", 3.3895313892515355e38),
                     ("float32", 3.4028234663852886e38), ("float64", 1.7976931348623157e308)]
)
def test_largest_finite_value_known_constants(name, largest):
    # float16's 65504 and float64's DBL_MAX are the textbook constants.
    assert facts(name).max == largest


@pytest.mark.parametrize("name,t,w,partner", FORMATS, ids=[f[0] for f in FORMATS])
def test_eps_is_the_gap_above_one_in_the_dtype(name, t, w, partner):
    """1 + eps is representable and differs from 1; 1 + eps/2 rounds back to 1 (ties to even)."""
    dtype = getattr(torch, name)
    one = torch.tensor(1.0, dtype=dtype)
    eps = 2.0**-t
    assert float(one + torch.tensor(eps, dtype=dtype)) == 1.0 + eps
    assert float(one + torch.tensor(eps / 2, dtype=dtype)) == 1.0


def test_table_holds_exactly_the_four_dtypes():
    assert DTYPE_NAMES == ("float16", "bfloat16", "float32", "float64")
    assert set(DTYPES) == set(DTYPE_NAMES)


ALIASES = [
    ("half", "float16"), ("f16", "float16"), ("bf16", "bfloat16"), ("float", "float32"),
    ("f32", "float32"), ("double", "float64"), ("f64", "float64"), ("torch.float32", "float32"),
    ("  Float64 ", "float64"), ("BFLOAT16", "bfloat16"),
]


@pytest.mark.parametrize("alias,name", ALIASES)
def test_aliases(alias, name):
    assert facts(alias).name == name


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_torch_dtype_is_accepted(name):
    assert facts(getattr(torch, name)) is facts(name)


@pytest.mark.parametrize("bad", ["float8", "int32", "", "complex64", torch.int64, torch.complex128])
def test_unknown_dtype_message_names_it_and_lists_the_known(bad):
    with pytest.raises(GradLabError) as info:
        facts(bad)
    message = str(info.value)
    shown = str(bad)
    assert repr(shown) in message or shown in message
    for name in DTYPE_NAMES:
        assert name in message
    assert message.endswith(".")


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_resolve_tolerances_defaults_and_overrides(name):
    info = facts(name)
    assert resolve_tolerances(name) == (info.rtol, info.atol)
    assert resolve_tolerances(name, rtol=0.25) == (0.25, info.atol)
    assert resolve_tolerances(name, atol=0.0) == (info.rtol, 0.0)
    assert resolve_tolerances(name, rtol=1e-3, atol=1e-9) == (1e-3, 1e-9)


def test_default_tolerances_loosen_as_precision_drops():
    # The order of the formats' precision: the defaults must not contradict it.
    rtols = [facts(n).rtol for n in ("float64", "float32", "float16", "bfloat16")]
    assert rtols == sorted(rtols)
    for name in DTYPE_NAMES:
        assert facts(name).rtol > facts(name).eps  # a tolerance under eps could never pass


@pytest.mark.parametrize("label", ["rtol", "atol"])
@pytest.mark.parametrize("value", [-1e-9, -1.0, math.nan, math.inf, -math.inf])
def test_resolve_tolerances_rejects_negative_and_non_finite(label, value):
    with pytest.raises(GradLabError) as info:
        resolve_tolerances("float32", **{label: value})
    assert label in str(info.value)


def test_resolve_tolerances_unknown_dtype():
    with pytest.raises(GradLabError):
        resolve_tolerances("float128")


ROUNDING = [
    # value, dtype, exact result by hand: nearest number with t fraction bits
    (0.1, "float16", 1638 / 16384),  # 0.1 * 2**14 = 1638.4 -> 1638
    (1 + 2**-11, "float16", 1.0),  # halfway: ties to even
    (1 + 3 * 2**-11, "float16", 1 + 2 * 2**-10),  # halfway, odd below -> rounds up
    (0.3, "bfloat16", 154 / 512),  # 0.3 * 2**9 = 153.6 -> 154
    (1 / 3, "float32", 11184811 / 2**25),  # 2**25/3 = 11184810.67 -> 11184811
    (0.3, "float64", 0.3),
    (70000.0, "float16", math.inf),  # beyond max + half an ulp: overflow
]


@pytest.mark.parametrize("value,dtype,expected", ROUNDING)
def test_round_to_dtype(value, dtype, expected):
    assert round_to_dtype(value, dtype) == expected
