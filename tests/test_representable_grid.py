"""The representable-grid lab against IEEE 754: bit patterns by struct/numpy, spacings by
numpy.spacing, the step actually taken, the bits a subtraction keeps."""

import math
import struct

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from gradlab.errors import GradLabError
from gradlab.labs.grid.representable import (GridSettings, grid_around, grid_difference, kept_bits,
                                             shared_decimal_digits, shared_leading_bits)

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


# ---- kept bits from the bit patterns: value = ±m·2**e with integer m (struct / numpy views)

# uint view, width, exponent bits, fraction bits, bias
FIELDS = {"float16": (np.uint16, 16, 5, 10, 15), "float32": (np.uint32, 32, 8, 23, 127),
          "float64": (np.uint64, 64, 11, 52, 1023)}


def _integer_parts(value: float, dtype: str) -> tuple[int, int]:
    """(signed integer significand, exponent of its unit) from the IEEE 754 fields; 0 and the
    subnormals share the unit 2**(1 - bias - fraction bits), the spacing at 0."""
    uint, width, exponent_bits, fraction_bits, bias = FIELDS[dtype]
    raw = int(np.array(value, dtype=NUMPY[dtype]).view(uint))
    sign = -1 if raw >> (width - 1) else 1
    exponent_field = (raw >> fraction_bits) & ((1 << exponent_bits) - 1)
    fraction = raw & ((1 << fraction_bits) - 1)
    if exponent_field == 0:
        return sign * fraction, 1 - bias - fraction_bits
    return sign * (fraction | 1 << fraction_bits), exponent_field - bias - fraction_bits


def _kept_bits_by_integers(a: float, b: float, dtype: str) -> int:
    """min(bit length of |b - a| in units of the finer operand unit, p): integers only."""
    (ma, ea), (mb, eb) = _integer_parts(a, dtype), _integer_parts(b, dtype)
    low = min(ea, eb)
    k = mb * 2 ** (eb - low) - ma * 2 ** (ea - low)
    return min(abs(k).bit_length(), FIELDS[dtype][3] + 1)


@pytest.mark.parametrize("dtype,x,h,expression", [
    ("float32", 1.0, 1e-7, "sin(x)"), ("float32", 1.0, 1e-3, "exp(x)"), ("float64", 0.5, 1e-9, "sin(x)"),
    ("float32", 0.9995, 1e-3, "x**2"),  # f crosses 1: different binades, still cancelling
    ("float32", math.pi, 1e-3, "sin(x)"), ("float32", 0.0, 1e-4, "sin(x)"), ("float64", 0.0, 1e-4, "sin(x)"),
    ("float16", 2.0, 1e-2, "log(x)"),
])
def test_kept_bits_match_integer_arithmetic_on_the_bit_patterns(dtype, x, h, expression):
    r = grid_difference(GridSettings(dtype=dtype, x=x, h=h, expression=expression))
    assert r.kept_bits == _kept_bits_by_integers(r.fx.value, r.fx_plus_h.value, dtype)
    assert 0 <= r.kept_bits <= r.precision_bits == FIELDS[dtype][3] + 1


def test_the_integer_reference_itself():
    # 1 and 1 + 2**-22 in float32 are 2 ulps apart: 0b10, two bits; 0 and 2**-149 (one ulp of 0): one
    assert _integer_parts(1.0, "float32") == (2 ** 23, -23)
    assert _kept_bits_by_integers(1.0, 1.0 + 2 ** -22, "float32") == 2
    assert _kept_bits_by_integers(0.0, 2.0 ** -149, "float32") == 1
    assert _kept_bits_by_integers(-1.0, 1.0, "float64") == 53  # 2**53 ulps of 1: 54 bits, the result has 53


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_x_zero_is_a_result_with_at_most_p_kept_bits(dtype):
    r = grid_difference(GridSettings(dtype=dtype, x=0.0, h=1e-4, expression="sin(x)"))
    p = np.finfo(NUMPY[dtype]).nmant + 1
    f = NUMPY[dtype]
    assert r.fx.value == 0.0 and r.step_taken == float(f(1e-4))
    # f(0) = 0: nothing cancels, the difference is f(h) itself with all p bits
    assert r.kept_bits == p and r.shared_bits == 0
    # the difference holds f(h) to its own ulp, not to ulp(0) = the smallest subnormal
    assert r.quantum == float(np.spacing(f(r.fx_plus_h.value))) / r.step_taken
    assert r.secant == float(f(r.fx_plus_h.value) / f(r.step_taken))  # (f(h) - 0) / step, rounded once


def test_a_difference_across_binades_keeps_at_most_p_bits():
    # sin(pi) in float32 is -8.7e-8 (pi rounds below), sin(pi + 1e-3) about -1e-3: 14 binades apart
    r = grid_difference(GridSettings(dtype="float32", x=math.pi, h=1e-3, expression="sin(x)"))
    assert math.frexp(r.fx.value)[1] != math.frexp(r.fx_plus_h.value)[1]
    assert r.shared_bits == 0 and r.kept_bits == 24
    difference = np.float32(r.fx_plus_h.value) - np.float32(r.fx.value)  # rounded: it needs 38 bits
    assert r.quantum == float(np.spacing(abs(difference))) / r.step_taken


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_kept_bits_are_the_integer_count_and_at_most_p_for_any_finite_pair(dtype, data):
    finite = st.floats(allow_nan=False, allow_infinity=False, width={"float16": 16, "float32": 32}.get(dtype, 64))
    a, b = data.draw(finite), data.draw(finite)
    k = kept_bits(a, b, dtype)
    assert k == _kept_bits_by_integers(a, b, dtype)
    assert 0 <= k <= FIELDS[dtype][3] + 1
    assert (k == 0) == (a == b)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"])
@given(x=st.floats(-1e6, 1e6, allow_nan=False), h=st.floats(1e-30, 1e3))
@settings(max_examples=15, deadline=None)
def test_any_finite_x_and_h_give_a_result_or_a_sentence(dtype, x, h):
    try:
        r = grid_difference(GridSettings(dtype=dtype, x=x, h=h, expression="exp(-x*x)*x"))
    except GradLabError:
        return  # a sentence (x past an 8-bit format's range)
    assert 0 <= r.kept_bits <= r.precision_bits and 0 <= r.shared_bits <= r.precision_bits


# ---- overflow in the 8-bit formats: reported as float16's is, whatever torch's cast returns

def test_torchs_e4m3fn_cast_saturates_so_the_lab_cannot_trust_it():
    cast = torch.tensor([1096.6, math.inf]).to(torch.float8_e4m3fn).float().tolist()
    assert cast == [448.0, 448.0]  # the reason for the overflow check; float16 overflows to inf
    assert torch.tensor([1e6]).to(torch.float16).float().isinf().all()


@pytest.mark.parametrize("dtype,x", [("float16", 12.0), ("float8_e4m3fn", 7.0), ("float8_e5m2", 12.0)])
def test_overflow_of_f_is_the_same_sentence_in_every_format(dtype, x):
    # e**7 = 1096.6 > 448 (e4m3fn's largest); e**12 = 162755 > 65504 (float16) and 57344 (e5m2)
    with pytest.raises(GradLabError, match=f"not finite in {dtype} at x = {x:g}"):
        grid_difference(GridSettings(dtype, x, 1.0, "exp(x)"))


def test_an_intermediate_overflow_in_e4m3fn_is_not_hidden_by_saturation():
    # exp(7) = 1096.6 overflows before the subtraction; saturated to 448 it would give 448 - 400 = 48
    with pytest.raises(GradLabError, match="not finite in float8_e4m3fn"):
        grid_difference(GridSettings("float8_e4m3fn", 7.0, 0.5, "exp(x) - 400"))


def test_e4m3fn_overflow_is_ieee_rounding_past_448():
    # 4 significant bits: 464 = 0b1.1101 * 2**8 is halfway between 448 (0b1.110) and 480 (0b1.111):
    # ties to even give 448, no overflow; 468 rounds to 480 > 448: overflow
    r = grid_difference(GridSettings("float8_e4m3fn", 4.0, 0.1, "x*116"))  # 4.1 rounds back to 4
    assert r.step_taken == 0 and r.fx.value == 448.0
    with pytest.raises(GradLabError, match="not finite in float8_e4m3fn"):
        grid_difference(GridSettings("float8_e4m3fn", 4.0, 0.1, "x*117"))
    with pytest.raises(GradLabError, match="x \\+ h = 440 \\+ 30 is beyond float8_e4m3fn's largest"):
        grid_difference(GridSettings("float8_e4m3fn", 440.0, 30.0, "x"))  # 470 rounds to 480


@pytest.mark.parametrize("dtype, x, h, f, exact", [
    ("float32", 1.0, 1e-7, "sin(x)", math.sin),
    ("float32", 0.3, 3e-6, "exp(x)", math.exp),  # 0.3 is not a float32: x as typed is off x₀
    ("bfloat16", 2.5, 0.01, "x**3", lambda v: v ** 3),
])
def test_the_x_plus_h_as_asked_mark_sits_on_the_curve(dtype, x, h, f, exact):
    """The mark for x + h as typed is drawn at f(x + h), in the chart's units (ulps of f from
    f(x₀)), not on the row of grid ticks; the unit is read off the rounded x + h's point."""
    from gradlab.labs.grid.figures import grid_figure
    from gradlab.labs.grid.story import window_points

    r = grid_difference(GridSettings(dtype, x, h, f))
    traces = {t.name: t for t in grid_figure(r, window_points(r)).data}
    mark = traces["x + h asked"]
    on_grid = traces["x, x+h rounded"]
    unit = (r.fx_plus_h.value - r.fx.value) / on_grid.y[1]  # ulps of f per chart unit
    expected = (exact(x + h) - r.fx.value) / unit
    assert mark.y[0] == pytest.approx(expected, rel=1e-9, abs=1e-6)
