"""Finite-difference schemes: stencils from Taylor's theorem, observed orders, error floors.

Taylor's theorem gives, for a stencil sum_k w_k f(x + c_k h) / h,

    sum_k w_k f(x + c_k h) / h = sum_j f^(j)(x) h^(j-1) / j! * M_j,   M_j = sum_k w_k c_k^j,

so a consistent scheme of order p has M_0 = 0, M_1 = 1, M_j = 0 for 2 <= j <= p, and
its truncation error is f^(p+1) h^p M_{p+1} / (p+1)! + O(h^(p+1)): C_t = |M_{p+1}| / (p+1)!.
The expected constants below are computed from the stencil with exact fractions.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from gradlab.errors import GradLabError
from gradlab.numerics.expressions import parse
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import (
    SCHEME_NAMES,
    SCHEMES,
    default_step,
    estimates_by_scheme,
    get_scheme,
    not_applicable_reason,
    predicted_best_step,
    predicted_error,
    predicted_terms,
    stencil_estimates,
    step_taken,
)

from hypothesis_profiles import engine_settings

REAL = [name for name in SCHEME_NAMES if not SCHEMES[name].complex_step]
ORDERS = {"forward": 1, "backward": 1, "central": 2, "five_point": 4, "complex_step": 2, "richardson": 4}


def _fractions(values) -> list[Fraction]:
    # Stencil weights are simple rationals (1/12, 4/3); recover them exactly from their floats.
    out = [Fraction(v).limit_denominator(10_000) for v in values]
    assert all(abs(float(f) - v) <= 1e-16 * max(1.0, abs(v)) for f, v in zip(out, values))
    return out


def _moment(scheme, j: int) -> Fraction:
    w, c = _fractions(scheme.weights), _fractions(scheme.offsets)
    return sum((wk * ck**j for wk, ck in zip(w, c)), Fraction(0))


def test_scheme_table():
    # the schemes GradLab started with, in their order; a new row may follow them (its order is
    # held to its stencil by the moment tests below)
    assert SCHEME_NAMES[:6] == ("forward", "backward", "central", "five_point", "complex_step", "richardson")
    assert {n: SCHEMES[n].order for n in ORDERS} == ORDERS


@pytest.mark.parametrize("name", REAL)
def test_stencil_is_consistent_to_its_order(name):
    s = SCHEMES[name]
    p = s.order
    assert len(s.offsets) == len(s.weights)
    assert _moment(s, 0) == 0  # a constant has derivative 0
    assert _moment(s, 1) == 1  # f'(x) comes out with weight 1
    for j in range(2, p + 1):
        assert _moment(s, j) == 0, f"moment {j} must vanish for order {p}"
    assert _moment(s, p + 1) != 0, "the first non-vanishing moment sets the order"
    assert s.truncation_derivative == p + 1


@pytest.mark.parametrize("name", REAL)
def test_truncation_constant_is_the_first_nonvanishing_moment(name):
    s = SCHEMES[name]
    expected = abs(_moment(s, s.order + 1)) / math.factorial(s.order + 1)
    assert Fraction(s.truncation_constant).limit_denominator(100_000) == expected


@pytest.mark.parametrize("name", REAL)
def test_roundoff_constant_is_the_sum_of_absolute_weights(name):
    s = SCHEMES[name]
    assert Fraction(s.roundoff_constant).limit_denominator(10_000) == sum(abs(w) for w in _fractions(s.weights))


def test_complex_step_constants():
    # Im f(x + ih) / h = f' - f''' h^2 / 6 + ...: order 2, C_t = 1/6, no round-off amplification.
    s = SCHEMES["complex_step"]
    assert s.complex_step and s.order == 2 and s.truncation_derivative == 3
    assert Fraction(s.truncation_constant).limit_denominator(1000) == Fraction(1, 6)
    assert s.roundoff_constant == 0


@pytest.mark.parametrize(
    "alias,name",
    [("Central", "central"), ("5-point", "five_point"), ("5 point", "five_point"), ("fivepoint", "five_point"),
     ("complex", "complex_step"), ("complex step", "complex_step"), (" forward ", "forward")],
)
def test_scheme_aliases(alias, name):
    assert get_scheme(alias) is SCHEMES[name]
    assert get_scheme(SCHEMES[name]) is SCHEMES[name]


def test_unknown_scheme_lists_the_known_ones():
    with pytest.raises(GradLabError) as info:
        get_scheme("secant")
    assert "secant" in str(info.value)
    for name in SCHEME_NAMES:
        assert name in str(info.value)


# ---------------------------------------------------------------- observed orders

EXP_AT = 0.5
EXP_DERIV = math.exp(EXP_AT)  # every derivative of exp is exp


@pytest.mark.parametrize("name", SCHEME_NAMES)
def test_observed_error_slope_matches_the_order(name):
    """In the truncation regime log(error) against log(h) is a line of slope p."""
    s = SCHEMES[name]
    lo = 1e-2 if s.order == 4 else 1e-3
    h = np.logspace(math.log10(lo), -1, 9)
    estimates = stencil_estimates(torch.exp, EXP_AT, h, name, "float64")
    with mpmath.workdps(30):
        exact = float(mpmath.exp(mpmath.mpf(EXP_AT)))
    errors = np.abs(estimates - exact)
    slope = np.polyfit(np.log(h), np.log(errors), 1)[0]
    assert abs(slope - s.order) <= 0.15, slope


@pytest.mark.parametrize("name", SCHEME_NAMES)
def test_leading_error_term_has_the_truncation_constant(name):
    """error / (C_t |f^(p+1)| h^p) -> 1 as h -> 0 (C_t derived above from the moments)."""
    s = SCHEMES[name]
    h = 1e-2 if s.order == 4 else 1e-3
    estimate = float(stencil_estimates(torch.exp, EXP_AT, np.array([h]), name, "float64")[0])
    with mpmath.workdps(30):
        exact = mpmath.exp(mpmath.mpf(EXP_AT))
        ratio = abs(mpmath.mpf(estimate) - exact) / (s.truncation_constant * exact * mpmath.mpf(h) ** s.order)
    assert 0.98 <= ratio <= 1.02, float(ratio)


# ---------------------------------------------------------------- error floors


def _exp_derivs(x):
    v = math.exp(x)
    return {k: v for k in (0, 1, 2, 3, 5)}


def _sin_derivs(x):
    s, c = math.sin(x), math.cos(x)
    return {0: s, 1: c, 2: -s, 3: -c, 5: c}


def _recip_derivs(x):
    # d^k/dx^k 1/x = (-1)^k k! / x^(k+1)
    return {k: (-1) ** k * math.factorial(k) / x ** (k + 1) for k in (0, 1, 2, 3, 5)}


SMOOTH = [("exp", torch.exp, 1.0, _exp_derivs), ("sin", torch.sin, 0.7, _sin_derivs),
          ("recip", torch.reciprocal, 0.3, _recip_derivs)]


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fname,fn,x,derivs", SMOOTH, ids=[s[0] for s in SMOOTH])
def test_error_floor_is_near_the_theory(fname, fn, x, derivs, dtype, name):
    """Near the predicted best step the observed error is within ~10x of the predicted error.

    The model adds worst-case-sized terms, so typical errors are at or below it; a
    dense sweep's minimum may be luckier, so the test looks at the median error over
    the half-decade around h* and at the minimum over the whole sweep.
    """
    xr = float(torch.tensor(x, dtype=facts(dtype).torch_dtype).double())
    d = derivs(xr)
    h_star = predicted_best_step(name, dtype, d, xr)
    predicted = float(predicted_error(name, dtype, np.array([h_star]), d, xr)[0])
    h = np.logspace(-14 if dtype == "float64" else -7, -0.5, 241)
    errors = np.abs(stencil_estimates(fn, xr, h, name, dtype) - d[1])
    near = errors[(h >= h_star / 3) & (h <= h_star * 3)]
    assert len(near) >= 5
    assert predicted / 10 <= np.median(near) <= 10 * predicted, (np.median(near), predicted)
    assert errors.min() <= predicted  # the model is an upper estimate of the best error


def test_predicted_best_step_textbook_formulas():
    """The README's best steps ("The mathematics") at x = 0:
    forward h* = 2 sqrt(u |f/f''|), central h* = (3u |f/f'''|)^(1/3)."""
    f, d1, d2, d3 = 2.0, 0.0, 5.0, 7.0
    d = {0: f, 1: d1, 2: d2, 3: d3, 5: 1.0}
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        u = facts(dtype).eps / 2
        assert predicted_best_step("forward", dtype, d) == pytest.approx(2 * math.sqrt(u * f / d2), rel=1e-12)
        assert predicted_best_step("backward", dtype, d) == pytest.approx(2 * math.sqrt(u * f / d2), rel=1e-12)
        assert predicted_best_step("central", dtype, d) == pytest.approx((3 * u * f / d3) ** (1 / 3), rel=1e-12)
        h = 2 * math.sqrt(u * f / d2)
        # best error 2 sqrt(u |f f''|) (plus the u |f'| of rounding the result, 0 here)
        assert float(predicted_error("forward", dtype, np.array([h]), d)[0]) == pytest.approx(
            2 * math.sqrt(u * f * d2), rel=1e-12)


@engine_settings(max_examples=80)
@given(
    st.sampled_from(SCHEME_NAMES),
    st.sampled_from(["float16", "bfloat16", "float32", "float64"]),
    st.floats(1e-3, 1e3), st.floats(1e-3, 1e3), st.floats(1e-3, 1e3), st.floats(1e-3, 1e3),
    st.floats(-10, 10),
)
def test_predicted_best_step_minimises_the_predicted_error(name, dtype, f, d1, dk, d5, x):
    d = {0: f, 1: d1, 2: dk, 3: dk, 5: d5}
    h = predicted_best_step(name, dtype, d, x)
    if SCHEMES[name].complex_step:
        # no round-off growth: h* is where truncation falls to the floor u |f'|
        t, r = predicted_terms(name, dtype, np.array([h]), d, x)
        assert float(t[0]) == pytest.approx(float(r[0]), rel=1e-9)
        return
    around = np.array([h / 1.05, h, h * 1.05])
    e = predicted_error(name, dtype, around, d, x)
    assert e[1] <= e[0] and e[1] <= e[2]
    # and there truncation = round-off / p (d/dh of C_t F h^p + C_r u S / h is zero)
    t, r = predicted_terms(name, dtype, np.array([h]), d, x)
    u = facts(dtype).eps / 2
    growing = float(r[0]) - u * abs(d1)
    assert float(t[0]) == pytest.approx(growing / SCHEMES[name].order, rel=1e-9)


def test_predicted_best_step_none_without_curvature():
    assert predicted_best_step("central", "float64", {0: 1.0, 1: 1.0, 2: 0.0, 3: 0.0, 5: 0.0}) is None


# ---------------------------------------------------------------- complex step

CLASSIC = "exp(x)/sqrt(sin(x)**3 + cos(x)**3)"


def _classic_d1(x, dps=50):
    with mpmath.workdps(dps):
        x = mpmath.mpf(x)
        s, c = mpmath.sin(x), mpmath.cos(x)
        g = s**3 + c**3
        return mpmath.exp(x) / mpmath.sqrt(g) * (1 - (3 * s**2 * c - 3 * c**2 * s) / (2 * g))


@pytest.mark.parametrize("h", [1e-20, 1e-100, 1e-200])
def test_complex_step_reaches_float64_roundoff_with_tiny_steps(h):
    estimate = float(stencil_estimates(parse(CLASSIC), 1.5, np.array([h]), "complex_step", "float64")[0])
    exact = _classic_d1(1.5)
    with mpmath.workdps(50):
        rel = abs(mpmath.mpf(estimate) - exact) / abs(exact)
    assert rel <= 4 * facts("float64").eps, float(rel)


def test_complex_step_in_complex64_reaches_float32_roundoff():
    xr = float(torch.tensor(1.5, dtype=torch.float32).double())
    estimate = float(stencil_estimates(parse(CLASSIC), xr, np.array([1e-20]), "complex_step", "float32")[0])
    exact = _classic_d1(xr)
    with mpmath.workdps(50):
        rel = abs(mpmath.mpf(estimate) - exact) / abs(exact)
    assert rel <= 8 * facts("float32").eps, float(rel)


def test_small_steps_ruin_differences_but_not_the_complex_step():
    """For h <= 1e-8 every difference is dominated by cancellation (u |f| / h >= 1e-8);
    the complex step has no subtraction and stays at round-off."""
    h = np.logspace(-16, -8, 33)
    exact = float(_classic_d1(1.5))
    eps = facts("float64").eps
    complex_rel = np.abs(stencil_estimates(parse(CLASSIC), 1.5, h, "complex_step", "float64") - exact) / exact
    assert complex_rel.max() <= 4 * eps
    for name in REAL:
        rel = np.abs(stencil_estimates(parse(CLASSIC), 1.5, h, name, "float64") - exact) / abs(exact)
        assert np.median(rel) > 1e4 * eps, name


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_complex_step_not_applicable_without_complex_partner(dtype):
    reason = not_applicable_reason("complex_step", dtype)
    assert reason and "complex" in reason and dtype in reason
    with pytest.raises(GradLabError):
        stencil_estimates(torch.sin, 0.5, np.array([1e-3]), "complex_step", dtype)


@pytest.mark.parametrize("text,word", [("abs(x)", "holomorphic"), ("relu(x) + x", "holomorphic"),
                                       ("erf(x)", "erf"), ("sin(x)*erf(x)", "erf")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_step_not_applicable_to_kinks_and_erf(text, word, dtype):
    reason = not_applicable_reason("complex_step", dtype, parse(text))
    assert reason and word in reason


@pytest.mark.parametrize("name", SCHEME_NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_schemes_applicable_to_smooth_functions(name, dtype):
    assert not_applicable_reason(name, dtype, parse("sin(x)")) is None


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_real_schemes_applicable_in_every_dtype(name, dtype):
    assert not_applicable_reason(name, dtype, parse("abs(x)")) is None


# ---------------------------------------------------------------- default steps


def _optimal_from_moments(name, u):
    """argmin of C_t h^p + C_r u / h, with C_t, C_r from the stencil's exact moments."""
    s = SCHEMES[name]
    p = s.order
    c_t = abs(_moment(s, p + 1)) / math.factorial(p + 1)
    c_r = sum(abs(w) for w in _fractions(s.weights))
    return (float(c_r) * u / (p * float(c_t))) ** (1 / (p + 1))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_default_steps_from_the_unit_roundoff(dtype):
    eps = facts(dtype).eps
    u = eps / 2
    assert default_step("forward", dtype) == pytest.approx(math.sqrt(2 * eps), rel=1e-12)  # = 2 sqrt(u)
    assert default_step("backward", dtype) == pytest.approx(2 * math.sqrt(u), rel=1e-12)
    assert default_step("central", dtype) == pytest.approx((3 * u) ** (1 / 3), rel=1e-12)
    for name in ("five_point", "richardson"):
        assert default_step(name, dtype) == pytest.approx(_optimal_from_moments(name, u), rel=1e-12)
    h = default_step("complex_step", dtype)
    assert h**2 / 6 < u and h > facts(dtype).tiny  # truncation under round-off, no underflow


@pytest.mark.parametrize("x,scale", [(0.0, 1.0), (0.5, 1.0), (-1.0, 1.0), (250.0, 250.0), (-1e4, 1e4)])
def test_default_step_scales_with_large_x(x, scale):
    for name in SCHEME_NAMES:
        assert default_step(name, "float32", x) == pytest.approx(scale * default_step(name, "float32"), rel=1e-12)


def test_default_step_is_not_a_fixed_number():
    steps = {d: default_step("central", d) for d in ("float16", "bfloat16", "float32", "float64")}
    assert len(set(steps.values())) == 4
    assert steps["float64"] < steps["float32"] < steps["float16"] < steps["bfloat16"]


# ---------------------------------------------------------------- the step actually taken


def _to_bfloat16(values) -> np.ndarray:
    """Round float32 values to bfloat16 (round to nearest even on the top 16 bits)."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def test_float32_step_below_half_eps_rounds_to_zero():
    expected = (np.float32(1.0) + np.float32(1e-9)) - np.float32(1.0)
    assert expected == 0.0
    assert step_taken(1.0, np.array([1e-9]), "float32")[0] == 0.0


def test_float64_step_is_not_the_nominal_step():
    expected = (0.3 + 1e-10) - 0.3  # Python floats are float64
    assert expected != 1e-10
    got = step_taken(0.3, np.array([1e-10]), "float64")[0]
    assert got == expected and got != 1e-10


H = np.logspace(-12, 0, 37)


@pytest.mark.parametrize("x", [0.3, 1.0, -7.25, 1000.0])
def test_step_taken_float32_and_float16_match_numpy(x):
    for np_dtype, name in ((np.float32, "float32"), (np.float16, "float16")):
        with np.errstate(over="ignore"):
            xd = np_dtype(x)
            expected = ((xd + H.astype(np_dtype)) - xd).astype(np.float64)
        np.testing.assert_array_equal(step_taken(x, H, name), expected)


@pytest.mark.parametrize("x", [0.3, 1.0, -7.25])
def test_step_taken_bfloat16_matches_bit_rounding(x):
    xd = _to_bfloat16([x])[0]
    hd = _to_bfloat16(H.astype(np.float32))
    # the float32 sum of two bfloat16 numbers, rounded again: innocuous double rounding (24 >= 2*8+1)
    expected = (_to_bfloat16(xd + hd) - xd).astype(np.float64)
    np.testing.assert_array_equal(step_taken(x, H, "bfloat16"), expected)


# ---------------------------------------------------------------- vectorised estimates


class Counting:
    """A function of a tensor that records every call (shape and dtype)."""

    def __init__(self, fn):
        self.fn, self.calls = fn, []

    def __call__(self, t):
        self.calls.append((tuple(t.shape), t.dtype))
        return self.fn(t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_call_for_all_real_points_and_one_complex_call(dtype):
    fn = Counting(torch.sin)
    h = np.logspace(-8, -1, 15)
    est = estimates_by_scheme(fn, 0.4, h, SCHEME_NAMES, dtype)
    assert set(est) == set(SCHEME_NAMES)
    real_points = sum(len(SCHEMES[n].offsets) for n in REAL)
    partner = facts(dtype).complex_partner
    assert sorted(fn.calls, key=str) == sorted([((real_points, 15), facts(dtype).torch_dtype), ((15,), partner)],
                                               key=str)


def _naive(fn, x, h, name, dtype):
    """One scalar at a time: f(x + c h) in the dtype, combined in float64."""
    s, torch_dtype = SCHEMES[name], facts(dtype).torch_dtype
    xd = torch.tensor(x, dtype=torch.float64).to(torch_dtype)
    out, scale = [], []
    for hv in h:
        values = [float(fn(xd + torch.tensor(c * hv, dtype=torch.float64).to(torch_dtype)).double())
                  for c in s.offsets]
        out.append(sum(w * v for w, v in zip(s.weights, values)) / hv)
        scale.append(sum(abs(w * v) for w, v in zip(s.weights, values)) / hv)
    return np.array(out), np.array(scale)


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_vectorised_estimates_equal_a_scalar_loop(name, dtype):
    h = np.logspace(-9, -0.5, 12)
    got = stencil_estimates(torch.exp, 0.7, h, name, dtype)
    expected, scale = _naive(torch.exp, 0.7, h, name, dtype)
    # The engine subtracts f(x + c_0 h) first (a reordered float64 sum: eps64 of the terms), and
    # torch's batched kernels may round a value differently from its 0-d ones in the last bit
    # (eps of the dtype): together, under 2 eps of the dtype relative to the sum of |w_k f_k| / h.
    assert np.all(np.abs(got - expected) <= 2 * facts(dtype).eps * scale)
