"""exact_sum against Fraction's one-by-one sum; bfloat16 rounding against torch's own arithmetic."""

import math
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from gradlab.numerics.emulation import round_to_bfloat16
from gradlab.numerics.exact_sum import exact_sum

finite = st.floats(allow_nan=False, allow_infinity=False)


@given(st.lists(finite, max_size=60))
def test_exact_sum_is_fractions_sum(values):
    assert exact_sum(values) == sum(map(Fraction, values), Fraction(0))


@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=60))
def test_exact_sum_of_float32_terms(values):
    x = np.array(values, dtype=np.float32)
    assert exact_sum(x) == sum((Fraction(float(v)) for v in x), Fraction(0))


def test_exact_sum_of_many_equal_large_significands_does_not_overflow_int64():
    # 2**20 copies of a value with a full 53-bit significand: its integer sum is ~2**73
    value = 1 - 2.0 ** -53
    assert exact_sum(np.full(2 ** 20, value)) == Fraction(value) * 2 ** 20


def test_exact_sum_refuses_non_finite_values():
    with pytest.raises(ValueError):
        exact_sum([1.0, math.inf])


def _bf16_pairs(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every bit pattern is equally likely: subnormals, the largest values, infinities, NaNs."""
    g = torch.Generator().manual_seed(seed)
    bits = torch.randint(-(2 ** 15), 2 ** 15, (2, n), generator=g, dtype=torch.int16)
    return bits[0].view(torch.bfloat16), bits[1].view(torch.bfloat16)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_rounding_a_python_result_is_torch_s_bfloat16_arithmetic(op):
    a, b = _bf16_pairs(50_000, seed=len(op))
    python = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}[op]
    want = getattr(torch, op)(a, b).double().tolist()  # torch: float32 op, then its bf16 cast
    got = [round_to_bfloat16(python(x, y)) for x, y in zip(a.double().tolist(), b.double().tolist(), strict=True)]
    mismatches = [(x, y, g, w) for x, y, g, w in zip(a.tolist(), b.tolist(), got, want, strict=True)
                  if not (g == w or (math.isnan(g) and math.isnan(w)))]
    assert not mismatches, mismatches[:5]


@pytest.mark.parametrize("value, expected", [
    (1 + 2 ** -8, 1.0),                         # a tie: to the even neighbour
    (1 + 3 * 2 ** -8, 1 + 2 ** -6),             # a tie: up to the even one
    (2.0 ** -134, 0.0),                         # half the smallest subnormal: ties to zero
    (3 * 2.0 ** -135, 2.0 ** -133),             # above half: the smallest subnormal
    ((2 - 2 ** -7) * 2.0 ** 127, (2 - 2 ** -7) * 2.0 ** 127),  # the largest finite bfloat16
    ((2 - 2 ** -8) * 2.0 ** 127, math.inf),     # halfway to 2**128: ties to even, past the largest
    (-0.0, -0.0),
])
def test_bfloat16_rounding_at_the_formats_edges(value, expected):
    got = round_to_bfloat16(value)
    assert got == expected and math.copysign(1, got) == math.copysign(1, expected)
