"""Round-off lab (the 1/x question): ulp arithmetic and formula comparisons.

Expected values come from the IEEE formats and from error analysis of correctly
rounded operations, never from this code's own output.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gradlab.errors import GradLabError, LimitError
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import DTYPE_NAMES, facts
from gradlab.labs.roundoff.engine import (
    BUILTIN_FORMULAS,
    COMPARISONS,
    RoundoffSettings,
    compare,
    compare_at,
    formula,
    sample_inputs,
    ulp_histogram,
    with_hex,
)
from gradlab.numerics.ulp import float_bits, float_hex, ordered_keys, ulp, ulp_distance, ulp_distances

# ---------------------------------------------------------------- ulp facts from the formats

# (dtype, exponent bits, fraction bits, hex of 1.0): IEEE 754 binary16/32/64 and bfloat16.
FORMATS = [
    ("float16", 5, 10, "0x3c00"),
    ("bfloat16", 8, 7, "0x3f80"),
    ("float32", 8, 23, "0x3f800000"),
    ("float64", 11, 52, "0x3ff0000000000000"),
]


@pytest.mark.parametrize("dtype,exp_bits,frac_bits,one_hex", FORMATS)
def test_ulp_of_one_and_powers_of_two(dtype, exp_bits, frac_bits, one_hex):
    assert ulp(1.0, dtype) == 2.0**-frac_bits
    assert ulp(1.5, dtype) == 2.0**-frac_bits  # same binade as 1
    assert ulp(2.0, dtype) == 2.0 ** (1 - frac_bits)
    assert ulp(0.75, dtype) == 2.0 ** (-1 - frac_bits)
    # Subnormal spacing: smallest normal 2**(1-bias) times 2**-frac_bits.
    bias = 2 ** (exp_bits - 1) - 1
    assert ulp(0.0, dtype) == 2.0 ** (1 - bias - frac_bits)
    assert float_hex(1.0, dtype) == one_hex
    sign, exponent, fraction = float_bits(1.0, dtype).split()
    assert (sign, len(exponent), fraction) == ("0", exp_bits, "0" * frac_bits)
    assert exponent == "0" + "1" * (exp_bits - 1)


def test_hex_matches_struct_for_float32_and_float64():
    for value in (0.1, -3.75, 1e-30, 6.0e4):
        assert float_hex(value, "float64") == "0x" + struct.pack(">d", value).hex()
        assert float_hex(value, "float32") == "0x" + struct.pack(">f", value).hex()


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_ulp_distance_counts_representable_numbers(dtype):
    eps = facts(dtype).eps
    assert ulp_distance(1.0, 1.0 + eps, dtype) == 1
    assert ulp_distance(1.0, 1.0 + 4 * eps, dtype) == 4
    # Between 1 - eps/2 (the float below 1) and 1 + eps: two steps up.
    assert ulp_distance(1.0 - eps / 2, 1.0 + eps, dtype) == 2
    # Across zero: from -tiny to +tiny are 2 * 2**frac_bits subnormal steps.
    tiny = facts(dtype).tiny
    assert ulp_distance(-tiny, tiny, dtype) == 2 * 2 ** facts(dtype).mantissa_bits
    assert ulp_distance(-0.0, 0.0, dtype) == 0


def test_ulp_distance_refuses_nan():
    with pytest.raises(GradLabError, match="NaN"):
        ulp_distance(float("nan"), 1.0, "float32")


def _next_up(t: torch.Tensor) -> torch.Tensor:
    return torch.nextafter(t, torch.full_like(t, math.inf))


finite_floats = st.floats(allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=200, deadline=None)
@given(finite_floats, finite_floats)
def test_ulp_distance_symmetric_and_zero_iff_equal(a, b):
    d = ulp_distance(a, b, "float32")
    assert d == ulp_distance(b, a, "float32")
    assert (d == 0) == (a == b)


@settings(max_examples=200, deadline=None)
@given(finite_floats, st.sampled_from(["float32", "float64", "float16", "bfloat16"]))
def test_ulp_distance_to_nextafter_is_one(a, dtype):
    t = torch.tensor([a], dtype=torch.float64).to(facts(dtype).torch_dtype)
    if not torch.isfinite(t).all() or float(t) == facts(dtype).max:
        return
    up = _next_up(t)
    assert ulp_distances(t, up).tolist() == [1]


@settings(max_examples=200, deadline=None)
@given(finite_floats, finite_floats, finite_floats)
def test_ulp_distance_is_additive_along_the_line(a, b, c):
    lo, mid, hi = sorted((a, b, c))
    assert ulp_distance(lo, hi, "float32") == ulp_distance(lo, mid, "float32") + ulp_distance(mid, hi, "float32")


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_ordered_keys_preserve_order_across_zero_in_float64(a):
    t = torch.tensor([a, -a, 0.0], dtype=torch.float64)
    k = ordered_keys(t).tolist()
    assert (k[0] < k[1]) == (a < -a)
    assert k[2] == 0


def test_float64_distance_across_zero_does_not_overflow():
    big = facts("float64").max
    d = ulp_distances(torch.tensor([-big], dtype=torch.float64), torch.tensor([big], dtype=torch.float64))
    assert d[0] == np.iinfo(np.int64).max  # saturates, documented
    assert ulp_distance(-big, big, "float64") == 2 * (0x7FEFFFFFFFFFFFFF)


# ---------------------------------------------------------------- formulas


def test_builtin_formulas_mean_the_derivative_of_one_over_x():
    import sympy

    from gradlab.numerics.expressions import X

    for spec in BUILTIN_FORMULAS.values():
        assert sympy.simplify(formula(spec.name).sympy - (-1 / X**2)) == 0


def test_formula_refuses_bad_text():
    with pytest.raises(GradLabError):
        formula("")
    with pytest.raises(GradLabError, match="Unknown function"):
        formula("grad(foo(x))")


# ---------------------------------------------------------------- the 1/x question's facts

# Ranges where x, x*x, 1/x and 1/x**2 are all normal numbers of the dtype, so the
# textbook error bounds of correctly rounded operations hold.
NORMAL_RANGE = {"float16": (0.1, 10.0), "bfloat16": (1e-3, 1e3), "float32": (1e-3, 1e3), "float64": (1e-3, 1e3)}
SAMPLES = {"float16": 3000, "bfloat16": 3000, "float32": 3000, "float64": 800}
# The reference itself is exact to far better than this many ulps (float64 or 50+ digits).
REF_SLACK = 1e-6


def _settings(a, b, dtype, samples=None):
    lo, hi = NORMAL_RANGE[dtype]
    return RoundoffSettings(a, b, dtype, "log-uniform", lo, hi, samples or SAMPLES[dtype], seed=7)


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_autograd_of_reciprocal_is_bitwise_minus_r_times_r(dtype):
    # reciprocal's backward is -grad * (result * result): with grad = 1 that is -(r*r).
    result = compare(_settings("autograd", "-(1/x)*(1/x)", dtype))
    assert result.summary.bitwise_equal == 1.0
    assert result.summary.compared == SAMPLES[dtype]


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_error_bounds_from_counting_roundings(dtype):
    """1/x: one rounding, <= 0.5 ulp. -1/x**2 = -fl(1/fl(x*x)): < 1.5 ulp.
    -(1/x)*(1/x) = -fl(r*r), r = fl(1/x): r's relative error u is doubled by the square,
    which is < 2 ulp of the result (ulp(y) > u*|y|), plus 0.5 for the last rounding: < 2.5 ulp."""
    one_over = compare(_settings("1/x", "1/x", dtype))
    assert one_over.summary.max_ulps_a_exact <= 0.5 + REF_SLACK
    pair = compare(_settings("-1/x**2", "-(1/x)*(1/x)", dtype))
    assert pair.summary.max_ulps_a_exact < 1.5 + REF_SLACK
    assert pair.summary.max_ulps_b_exact < 2.5 + REF_SLACK
    # Both differ from each other by at most the sum of their bounds, in whole ulps.
    assert pair.summary.max_ulps_a_b <= 4


def test_the_reciprocal_question_in_numbers_float32():
    result = compare(COMPARISONS["reciprocal"].settings)
    s = result.summary
    # They are neither always equal nor far apart: the question saw one ulp (5.96e-8 near 1).
    assert 0.2 < s.bitwise_equal < 0.9
    assert 1 <= s.max_ulps_a_b <= 4
    assert math.isclose(s.a_closer + s.b_closer + s.tie, 1.0)
    # Two roundings of the same size beat a doubled one more often than not.
    assert s.b_closer > s.a_closer
    # A tie here means bit-equal: both are computed from the same exact value.
    assert s.tie == pytest.approx(s.bitwise_equal)
    # The quiz's answer reads this from the engine: B (-1/x**2) is closer more often.
    assert s.closer_more_often() == "B"


def test_the_reciprocal_difference_is_one_ulp_near_one():
    # The question printed 5.9605e-08 = 2**-24: one ulp of float32 in [0.5, 1).
    result = compare(COMPARISONS["reciprocal"].settings)
    t = result.table
    near = t[(t["value_a"].abs() >= 0.5) & (t["value_a"].abs() < 1.0) & (t["ulps_a_b"] == 1)]
    assert len(near) > 0
    assert np.allclose((near["value_a"] - near["value_b"]).abs(), 2.0**-24)


def test_decimal_example_29_over_100_times_100():
    # Python's 29/100*100 == 28.999999999999996: one ulp (2**-48 near 29) below 29.
    r = compare_at("x/100*100", "x", [29.0], "float64")
    row = r.table.iloc[0]
    assert row["value_a"] == 29.0 - 2.0**-48 and row["value_b"] == 29.0
    assert int(row["ulps_a_b"]) == 1 and row["closer"] == "B"


def test_log1p_beats_log_of_one_plus_x_for_small_x():
    result = compare(COMPARISONS["log1p"].settings)
    assert result.summary.correctly_rounded_b > 0.99  # log1p is accurate to ~0.5 ulp
    assert result.summary.b_closer > 0.9
    assert result.summary.closer_more_often() == "B"


def test_distance_histogram_of_bit_equal_formulas_is_all_zero_ulps():
    # Autograd of 1/x is -(r*r) with r = fl(1/x): the same operations, so 0 ulp at every point.
    result = compare(RoundoffSettings("autograd", "-(1/x)*(1/x)", samples=64))
    hist = result.distance_histogram()
    assert hist["ulps"].tolist() == [0] and hist["count"].tolist() == [result.summary.compared]
    assert hist["fraction"].tolist() == [1.0]


def test_formulas_that_differ_in_mathematics_are_refused():
    with pytest.raises(GradLabError, match="not equal in mathematics"):
        compare(RoundoffSettings("1/x", "-1/x**2", samples=50))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"distribution": "cauchy"}, "Unknown distribution"),
        ({"low": 1.0, "high": 1.0}, "low < high"),
        ({"distribution": "log-uniform", "low": -1.0}, "positive"),
        ({"dtype": "int8"}, "Unknown dtype"),
        ({"samples": 0}, "At least one"),
    ],
)
def test_settings_misuse_gives_a_sentence(kwargs, match):
    with pytest.raises(GradLabError, match=match):
        RoundoffSettings(**kwargs).validated()


def test_samples_within_the_limits():
    with pytest.raises(LimitError):
        RoundoffSettings(samples=LIMITS.roundoff_samples + 1).validated()


def test_sampling_is_seeded_and_in_the_dtype():
    s = RoundoffSettings(dtype="bfloat16", samples=100, seed=3)
    a, b = sample_inputs(s), sample_inputs(s)
    assert a.dtype == torch.bfloat16 and torch.equal(a, b)
    logu = sample_inputs(RoundoffSettings(distribution="log-uniform", low=1e-3, high=1e3, samples=500))
    assert float(logu.min()) >= 1e-3 * (1 - facts("float32").eps) and float(logu.max()) <= 1e3 * (1 + facts("float32").eps)


def test_overflow_points_are_left_out_with_a_note():
    # float16 max is 65504: 1/x**2 overflows for |x| < 1/sqrt(65504) ~ 3.9e-3.
    r = compare(RoundoffSettings("-1/x**2", "-(1/x)*(1/x)", "float16", "log-uniform", 1e-4, 1e-1, samples=400))
    assert 0 < r.summary.compared < 400
    assert any("left out" in n for n in r.notes)


def test_histogram_fractions_sum_to_one():
    h = ulp_histogram(compare(COMPARISONS["reciprocal"].settings).table)
    assert h["fraction"].sum() == pytest.approx(1.0)
    assert list(h["ulps"]) == sorted(h["ulps"])


def test_the_table_holds_bit_patterns_as_numbers_and_shows_them_in_hex():
    # 1/x at x = 3 in float32: 0x3eaaaaab is the float32 nearest 1/3 (IEEE 754, by hand)
    table = compare_at("1/x", "1/x", [3.0, 3.0], "float32").table
    assert table["bits_a"].dtype == np.uint32 and table["closer"].dtype == "category"
    assert not any(table[c].dtype == object for c in table.columns)  # no Python object per point
    assert list(with_hex(table)["hex_a"]) == ["0x3eaaaaab", "0x3eaaaaab"]


# ---------------------------------------------------------------- the page's answer sentence
# Its numbers are checked against errors computed here with numpy's float32 arithmetic and exact
# rationals (fractions.Fraction), the ulp from numpy.nextafter: nothing from the engine's own tables.

from fractions import Fraction  # noqa: E402

from gradlab.labs.roundoff.answer import roundoff_answer  # noqa: E402


def _ulp32(value: Fraction) -> Fraction:
    """Spacing of float32 at the real number ``value``: nextafter of its binade's start, minus the start."""
    start = np.float32(2.0 ** math.floor(math.log2(abs(float(value)))))
    return Fraction(float(np.nextafter(start, np.float32(np.inf)) - start))


def _worst_ulps(values: np.ndarray, exact: list[Fraction]) -> float:
    return max(float(abs(Fraction(float(v)) - e) / _ulp32(e)) for v, e in zip(values, exact))


def test_answer_for_the_question_gives_the_worst_error_of_either_formula_rounded_up():
    s = RoundoffSettings("autograd", "-1/x**2", "float32", samples=3000, seed=5)
    x = sample_inputs(s).numpy()
    r = np.float32(1) / x  # autograd: -(r*r) with r = fl(1/x), rounded again (see the module docstring)
    autograd = -(r * r)
    quotient = np.float32(-1) / (x * x)
    exact = [-1 / Fraction(float(v)) ** 2 for v in x]
    worst = max(_worst_ulps(autograd, exact), _worst_ulps(quotient, exact))
    assert 1.0 < worst <= 2.5  # the error analysis: at most 2.5 ulp (autograd) and 1.5 ulp (-1/x**2)
    note = roundoff_answer(compare(s))
    assert note.level == "success"  # nothing is wrong: the good news box
    assert note.text == (f"Both are within {math.ceil(worst * 10) / 10:g} ulp of the exact value at all "
                         f"3,000 points: neither is wrong.")


def test_answer_says_log_of_one_plus_tiny_x_loses_all_seven_digits_of_float32():
    # x < 2**-24: 1 + x rounds to 1, log gives 0, the error is all of x: about x / ulp(x) = 2**23..2**24
    # ulp, log10 of which is 6.9..7.2, i.e. every one of float32's 7 decimal digits (24 bits · log10 2).
    s = RoundoffSettings("log(1+x)", "log1p(x)", "float32", "log-uniform", 1e-9, 1e-8, samples=200)
    x = sample_inputs(s).numpy()
    assert (np.float32(1) + x == np.float32(1)).all()
    worst = _worst_ulps(np.zeros_like(x), [Fraction(float(v)) for v in x])  # log(1+x) - x = O(x**2): negligible
    assert 2**23 <= worst <= 2**24
    text = roundoff_answer(compare(s)).text
    assert text.startswith(f"log(1+x) is off by up to {worst:.1e} ulp: at worst it loses all 7 significant digits")
    # log1p(x) returns x itself here: off by x**2/2, a relative x/2 <= 5e-9, under 0.1 of an ulp (>= 2**-24 x)
    assert text.endswith("; log1p(x) stays within 0.1 ulp of the exact value.")


def test_answer_for_bit_equal_formulas_calls_them_one_computation():
    note = roundoff_answer(compare(RoundoffSettings("autograd", "-(1/x)*(1/x)", samples=500)))
    assert note.level == "success" and "same bits at all 500 points" in note.text
