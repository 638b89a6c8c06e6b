"""The representable-grid lab against IEEE 754: bit patterns by struct/numpy, spacings by
numpy.spacing, the step actually taken, the bits a subtraction keeps."""

import math
import struct

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from gradlab.errors import GradLabError
from gradlab.labs.representable_grid import (GridSettings, grid_around, grid_difference, shared_decimal_digits,
                                             shared_leading_bits)

NUMPY = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
STRUCT = {"float32": (">f", ">I", 32), "float64": (">d", ">Q", 64)}


def _bits_by_struct(value: float, dtype: str) -> str:
    fmt, ifmt, width = STRUCT[dtype]
    raw = format(struct.unpack(ifmt, struct.pack(fmt, value))[0], f"0{width}b")
    exp = {"float32": 8, "float64": 11}[dtype]
    return f"{raw[0]} {raw[1:1 + exp]} {raw[1 + exp:]}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x,h", [(1.0, 1e-4), (0.1, 1e-6), (-3.7, 1e-2), (1e-3, 1e-9)])
def test_bit_patterns_and_spacing_are_ieee_754s(dtype, x, h):
    r = grid_difference(GridSettings(dtype=dtype, x=x, h=h, expression="sin(x)"))
    for point in (r.x, r.x_plus_h, r.fx, r.fx_plus_h):
        assert point.bits == _bits_by_struct(point.value, dtype)
        assert point.ulp == float(np.spacing(NUMPY[dtype](abs(point.value))))


def test_float16_bits_match_numpys_view():
    r = grid_difference(GridSettings(dtype="float16", x=1.5, h=1e-2, expression="x**2"))
    raw = format(int(np.float16(r.x.value).view(np.uint16)), "016b")
    assert r.x.bits == f"{raw[0]} {raw[1:6]} {raw[6:]}"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@given(x=st.floats(0.01, 100.0), exponent=st.floats(-12.0, -1.0))
@settings(max_examples=40, deadline=None)
def test_the_step_taken_is_x_plus_h_rounded_minus_x(dtype, x, exponent):
    f = NUMPY[dtype]
    h = 10.0 ** exponent
    r = grid_difference(GridSettings(dtype=dtype, x=x, h=h, expression="x"))
    expected = float(f(f(x) + f(h)) - f(x))  # IEEE: each operation rounded to nearest
    assert r.step_taken == expected
    spacing = float(np.spacing(f(x)))
    assert r.step_taken / spacing == round(r.step_taken / spacing)  # a whole number of ulp(x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(x=st.floats(0.1, 10.0), exponent=st.floats(-10.0, -1.0))
@settings(max_examples=40, deadline=None)
def test_the_secant_is_a_whole_number_of_quanta_rounded_once(dtype, x, exponent):
    r = grid_difference(GridSettings(dtype=dtype, x=x, h=10.0 ** exponent, expression="exp(x)"))
    if r.step_taken == 0:
        assert math.isnan(r.secant)
        return
    k = (r.fx_plus_h.value - r.fx.value) / r.fx.ulp  # Sterbenz: the difference is exact
    if math.frexp(r.fx.value)[1] == math.frexp(r.fx_plus_h.value)[1]:
        assert k == round(k)
        assert r.secant == pytest.approx(k * r.quantum, rel=float(np.finfo(NUMPY[dtype]).eps))


@given(a=st.floats(0.5, 0.99), ulps=st.integers(0, 2 ** 23 - 1))
@settings(max_examples=60, deadline=None)
def test_shared_and_kept_bits_by_integer_arithmetic(a, ulps):
    # a and b in the binade [0.5, 1) of float32: significands are 24-bit integers
    m = int(np.float32(a) * 2 ** 24)
    b = float(np.float32((m + ulps) % 2 ** 24 / 2 ** 24)) if m + ulps < 2 ** 24 else float(np.float32(a))
    mb = int(np.float32(b) * 2 ** 24)
    if b < 0.5:
        return
    expected = 24 if m == mb else 24 - (m ^ mb).bit_length()
    assert shared_leading_bits(float(np.float32(a)), b, "float32") == expected


def test_as_h_shrinks_the_difference_keeps_fewer_bits_and_the_secant_jumps():
    kept, secants = [], []
    for h in (1e-2, 1e-4, 1e-6, 1e-7, 1e-8):
        r = grid_difference(GridSettings(dtype="float32", x=1.0, h=h, expression="sin(x)"))
        kept.append(r.kept_bits)
        secants.append(r.secant)
    assert kept == sorted(kept, reverse=True) and kept[-1] == 0  # h below ulp(1)/2: no step at all
    assert math.isnan(secants[-1])
    assert secants[3] in (0.5, 0.0, 1.0)  # one ulp of f over one ulp of x: a coarse quantum


def test_tangent_is_the_exact_derivative():
    r = grid_difference(GridSettings(dtype="float32", x=0.5, h=1e-3, expression="sin(x)"))
    assert r.tangent == pytest.approx(math.cos(0.5), rel=1e-15)


def test_grid_around_lists_neighbours_by_nextafter():
    values = grid_around(1.0, "float32", 2)
    below = np.nextafter(np.float32(1), np.float32(0))
    assert values == [float(np.nextafter(below, np.float32(0))), float(below), 1.0,
                      float(np.nextafter(np.float32(1), np.float32(2))),
                      float(np.nextafter(np.nextafter(np.float32(1), np.float32(2)), np.float32(2)))]


def test_shared_decimal_digits_counts_digits_only():
    assert shared_decimal_digits("0.84147", "0.84190") == 3
    assert shared_decimal_digits("-1.25", "1.25") == 0


def test_bad_settings_are_refused_with_a_sentence():
    with pytest.raises(GradLabError, match="positive finite step"):
        GridSettings(h=0.0)
    with pytest.raises(GradLabError):
        GridSettings(dtype="int8")
