"""8-bit floats, emulated: the formats' documented numbers, rounding against IEEE 754's
round-to-nearest-even written here with fractions (overflow included), emulated values against
torch's own casts of float32 results, and the best central difference against its theory."""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch

from gradlab.step_sweep.engine import EMULATION_NOTE, SweepSettings, autograd_derivative, run_sweep
from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import (ALL_DTYPE_NAMES, DTYPE_NAMES, DTYPE_TABLE, EMULATED_DTYPES, facts,
                                     native_facts)
from gradlab.numerics.emulation import RoundedTo, emulated, round_to_dtype, to_dtype
from gradlab.numerics.expressions import parse
from gradlab.numerics.schemes import estimates_by_scheme
from gradlab.numerics.ulp import float_bits

# OCP 8-bit floating point specification (v1.0), table 1: E4M3 has no infinities (fn), E5M2 is IEEE-like.
# p: significand bits with the implicit 1; emin: exponent of the smallest normal.
DOCUMENTED = {
    "float8_e4m3fn": dict(eps=2.0 ** -3, tiny=2.0 ** -6, max=448.0, subnormal=2.0 ** -9, p=4, emin=-6, inf=False),
    "float8_e5m2": dict(eps=2.0 ** -2, tiny=2.0 ** -14, max=57344.0, subnormal=2.0 ** -16, p=3, emin=-14, inf=True),
}
FP8 = ("float8_e4m3fn", "float8_e5m2")


def _grid(name: str) -> np.ndarray:
    """Every finite value of the format, from its 256 bit patterns."""
    values = torch.arange(256, dtype=torch.uint8).view(facts(name).torch_dtype).to(torch.float64).numpy()
    return np.unique(values[np.isfinite(values)])


def ieee_round(v: float, name: str) -> float:
    """Round-to-nearest-even on the format's grid with an unbounded exponent (IEEE 754, 4.3.1),
    in exact rational arithmetic; beyond the largest finite number it is an overflow: inf, or
    NaN in e4m3fn, which has no inf."""
    doc = DOCUMENTED[name]
    if math.isnan(v) or v == 0:
        return v
    if math.isinf(v):
        return v if doc["inf"] else math.nan
    exponent = max(math.floor(math.log2(abs(v))), doc["emin"])
    quantum = Fraction(2) ** (exponent - doc["p"] + 1)
    rounded = float(round(Fraction(abs(v)) / quantum) * quantum)  # round() of a Fraction: ties to even
    if rounded > doc["max"]:
        return math.copysign(math.inf, v) if doc["inf"] else math.nan
    return math.copysign(rounded, v)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def cast(values, name: str) -> torch.Tensor:
    """torch's own cast of float32 values to the format and back (one rounding)."""
    return torch.as_tensor(values, dtype=torch.float32).to(facts(name).torch_dtype).to(torch.float32)


# ------------------------------------------------------------------ the rows and the rounding


@pytest.mark.parametrize("name", FP8)
def test_each_row_carries_the_formats_documented_numbers(name):
    info, doc = facts(name), DOCUMENTED[name]
    assert (info.eps, info.tiny, info.max) == (doc["eps"], doc["tiny"], doc["max"])
    assert (info.mantissa_bits + 1, info.has_inf) == (doc["p"], doc["inf"])
    grid = _grid(name)
    assert grid.max() == doc["max"] and grid[grid > 0].min() == doc["subnormal"]
    assert info.emulated and info.compute == torch.float32 and "emulated" in info.label


def test_emulated_rows_are_rows_of_the_one_table_offered_only_where_they_are_emulated():
    assert set(FP8) <= set(EMULATED_DTYPES) and all(DTYPE_TABLE[n] is EMULATED_DTYPES[n] for n in EMULATED_DTYPES)
    assert set(EMULATED_DTYPES).isdisjoint(DTYPE_NAMES) and ALL_DTYPE_NAMES == DTYPE_NAMES + tuple(EMULATED_DTYPES)
    with pytest.raises(GradLabError, match="emulated"):
        native_facts("float8_e4m3fn", "A gradient check")


@pytest.mark.parametrize("name", FP8)
def test_rounding_to_the_format_is_round_to_nearest_even_on_its_grid(name):
    rng = np.random.default_rng(0)
    top, grid = DOCUMENTED[name]["max"], _grid(name)
    values = np.concatenate([rng.uniform(-top, top, 300), rng.uniform(-2, 2, 300), (grid[:-1] + grid[1:]) / 2,
                             (grid[:-1] + grid[1:]) / 2 * (1 + 2.0 ** -40),  # just past each tie
                             [top * 1.03, top * 1.05, top * 1.2, -top * 1.1, 1e30, math.inf, -math.inf]])
    for v in values:
        assert _same(float(to_dtype(v, name)), ieee_round(float(v), name)), v


def test_a_value_just_past_a_tie_rounds_up_though_torch_rounds_float64_through_float32():
    # 1 + 2**-11 + 2**-40 is nearer 1 + 2**-10 than 1 in float16 (p = 11); torch's cast of the
    # float64 lands on the tie 1 + 2**-11 in float32 first and then goes to the even 1.
    v = 1 + 2.0 ** -11 + 2.0 ** -40
    assert float(torch.tensor(v, dtype=torch.float64).to(torch.float16)) == 1.0  # torch's double rounding
    assert float(to_dtype(v, "float16")) == 1 + 2.0 ** -10 == round_to_dtype(v, "float16")
    assert float(to_dtype(1.0625 + 2.0 ** -40, "float8_e4m3fn")) == 1.125 == ieee_round(1.0625 + 2.0 ** -40,
                                                                                      "float8_e4m3fn")


def test_e4m3fn_overflows_past_464_where_torch_saturates_at_448():
    # Near 448 = 0b1110 * 2**5 the grid spacing is 2**5 = 32: 464 is the tie between 448 and the
    # 480 an unbounded exponent would give; 448's significand is even, so 464 rounds to 448.
    assert ieee_round(464.0, "float8_e4m3fn") == 448.0 and math.isnan(ieee_round(468.0, "float8_e4m3fn"))
    assert float(cast([468.0], "float8_e4m3fn")[0]) == 448.0  # torch's cast saturates ...
    held = to_dtype([464.0, 468.0, -500.0, math.inf, math.e ** 7], "float8_e4m3fn").tolist()
    assert held[0] == 448.0 and all(math.isnan(v) for v in held[1:])  # ... emulation overflows
    assert math.isnan(round_to_dtype(468.0, "e4m3"))
    # e5m2 has inf: 57344 = 0b111 * 2**13 is odd, so its tie 61440 overflows (torch agrees)
    assert to_dtype([61439.0, 61440.0], "float8_e5m2").tolist() == [57344.0, math.inf]


def test_an_overflow_inside_an_emulated_computation_is_nan_forward_and_backward():
    x = to_dtype([7.0, 6.0], "float8_e4m3fn")
    with emulated("float8_e4m3fn"):
        y = torch.exp(x)  # e**7 = 1096.6 overflows; e**6 = 403.4 rounds to 416 (spacing 32)
    assert math.isnan(float(y[0])) and float(y[1]) == ieee_round(math.exp(6), "float8_e4m3fn") == 416.0
    assert math.isnan(autograd_derivative(parse("exp(x)"), 7.0, "float8_e4m3fn"))
    t = torch.tensor([1.0, 1.0], requires_grad=True)
    RoundedTo.apply(t, facts("float8_e4m3fn")).backward(torch.tensor([464.0, 500.0]))
    assert t.grad[0] == 448.0 and math.isnan(float(t.grad[1]))


def test_an_emulated_sweep_shows_the_overflow_as_a_gap():
    result = run_sweep(SweepSettings("exp(x)", 6.0, ("float8_e4m3fn",), ("central",), 1e-2, 0.5, 9))
    t = result.table
    xr = result.rounded_x["float8_e4m3fn"]
    for h, estimate in zip(t["eps"], t["estimate"]):
        up = float(to_dtype(xr + float(to_dtype(h, "float8_e4m3fn")), "float8_e4m3fn"))
        past = math.isnan(ieee_round(float(torch.tensor(up, dtype=torch.float32).exp()), "float8_e4m3fn"))
        assert past == (not math.isfinite(estimate)), (h, up, estimate)
    assert not t["finite"].all() and t["finite"].any()


@pytest.mark.parametrize("name", FP8)
def test_every_emulated_result_is_torch_s_cast_of_the_float32_result(name):
    x32 = cast(np.linspace(0.1, 3.0, 50), name)
    with emulated(name):
        x = to_dtype(np.linspace(0.1, 3.0, 50), name)
        results = [x * 3, x + 0.01, torch.sin(x), torch.exp(x) / (x + 1)]
    by_hand = [cast(x32 * 3, name), cast(x32 + 0.01, name), cast(torch.sin(x32), name),
               cast(cast(torch.exp(x32), name) / cast(x32 + 1, name), name)]
    for r, expected in zip(results, by_hand):
        assert torch.equal(r, expected)
    grid = set(_grid(name).tolist()) | {0.0}
    with emulated(name):
        assert set(parse("x**2 - log(x)")(x).tolist()) <= grid


def test_bit_patterns_of_8_bit_floats():
    assert float_bits(1.0, "float8_e4m3fn") == "0 0111 000"  # bias 7
    assert float_bits(-1.5, "float8_e5m2") == "1 01111 10"  # bias 15


@pytest.mark.parametrize("name", FP8)
def test_autograd_in_8_bits_is_torch_s_cast_of_float32_cos(name):
    # d sin/dx: the backward multiplies the (rounded) upstream 1 by cos(x) in float32, and x.grad
    # is stored in the format: one rounding of float32 cos(x), so within u of the exact cos(x).
    u = facts(name).eps / 2
    for x in np.linspace(0.1, 1.5, 29):
        x32 = cast([x], name)
        value = autograd_derivative(parse("sin(x)"), float(x32[0]), name)
        assert value == float(cast(torch.cos(x32), name)[0])
        assert abs(value - math.cos(float(x32[0]))) <= u * abs(math.cos(float(x32[0]))) * (1 + 1e-6)


# ------------------------------------------------------------------ the central difference


def test_the_stencil_rounds_the_points_and_f_and_divides_by_the_nominal_step_in_float64():
    # At x = 1, h = 0.3 in e4m3: h is held as 0.3125, x + h = 1.3125 is a tie (spacing 1/8 in
    # [1, 2)) and goes to the even 1.25, x - h = 0.6875 is on the grid: the stencil spans 0.5625.
    # f's values are rounded; their difference is divided by the nominal 2h = 0.6 in float64,
    # as every dtype's stencil is (EMULATION_NOTE says so), not rounded to 8 bits again.
    name = "float8_e4m3fn"
    x, h = cast([1.0], name), cast([0.3], name)
    up, down = cast(x + h, name), cast(x - h, name)
    assert (float(h), float(up), float(down)) == (0.3125, 1.25, 0.6875)
    f_up, f_down = float(cast(torch.sin(up), name)), float(cast(torch.sin(down), name))
    estimate = estimates_by_scheme(torch.sin, 1.0, np.array([0.3]), ("central",), name)["central"][0]
    assert estimate == (f_up - f_down) / (2 * 0.3) == 0.3125 / 0.6
    all_fp8 = float(cast(cast([f_up - f_down], name) / cast(2 * h, name), name)[0])
    assert all_fp8 == 0.5 != estimate  # what fp8 code rounding the difference and the quotient gets
    assert "float64" in EMULATION_NOTE and "nominal step" in EMULATION_NOTE


@pytest.mark.parametrize("name", [*FP8, "float16", "bfloat16"])
def test_every_stencil_estimate_is_the_hand_rolled_one_with_torch_casts(name):
    """The same recipe for emulated and native dtypes: points and f rounded, float64 after."""
    native = not facts(name).emulated

    def held(values):
        return torch.as_tensor(values, dtype=torch.float64).to(torch.float32).to(facts(name).torch_dtype)

    def on_grid(t):  # a float32 result rounded to the format, kept in the dtype torch computes in
        return t if native else cast(t, name)

    steps = np.logspace(-3, math.log10(0.5), 25)
    for fn, x in ((torch.sin, 1.0), (torch.exp, 0.7), (torch.sin, 2.2)):
        got = estimates_by_scheme(fn, x, steps, ("central",), name)["central"]
        xd = held([x]) if native else cast(held([x]).float(), name)
        for h, value in zip(steps, got):
            hd = held([h]) if native else cast(held([h]).float(), name)
            up, down = on_grid(xd + hd), on_grid(xd - hd)
            f_up, f_down = float(on_grid(fn(up))[0]), float(on_grid(fn(down))[0])
            assert value == (f_up - f_down) / (2 * h), (name, h)  # 2h exact: one rounding, in float64


def central_theory(fn: str, x: float, name: str) -> tuple[float, float]:
    """The best step and relative error of the central difference for sin or exp at x, by hand
    in mpmath: h* = (3 u S / |f'''|)^(1/3), E = u S / h + |f'''| h^2 / 6 + u |f'| with S = |f| + |x f'|
    (README's model, with x ± h rounded too and the result rounded once)."""
    with mpmath.workdps(40):
        x, u = mpmath.mpf(x), mpmath.mpf(facts(name).eps) / 2
        f, d1, d3 = ((mpmath.sin(x), mpmath.cos(x), -mpmath.cos(x)) if fn == "sin"
                     else (mpmath.exp(x),) * 3)
        s = abs(f) + abs(x * d1)
        h = mpmath.cbrt(3 * u * s / abs(d3))
        return float(h), float((u * s / h + abs(d3) * h ** 2 / 6 + u * abs(d1)) / abs(d1))


@pytest.mark.parametrize("name", FP8)
@pytest.mark.parametrize("fn,x0", [("sin", 0.5), ("sin", 1.0), ("sin", 2.0), ("exp", 0.5), ("exp", 1.0),
                                   ("exp", 2.0)])
def test_the_errors_around_the_best_step_are_within_a_factor_3_of_the_theory(name, fn, x0):
    """On an 8-bit grid x ± h lands on a few values and one step's error is partly luck (0.3 %
    once, 60 % next door), so the typical error is measured: the root mean square over 40 points
    near x0 and five steps around each point's h* (h*/2 ... 2h*), against that point's E*."""
    torch_fn, exact = (torch.sin, math.cos) if fn == "sin" else (torch.exp, math.exp)
    ratios = []
    for x in np.linspace(0.8 * x0, 1.2 * x0, 40):
        xr = float(to_dtype(x, name))
        h_star, predicted = central_theory(fn, xr, name)
        steps = h_star * np.array([0.5, 0.5 ** 0.5, 1.0, 2 ** 0.5, 2.0])
        estimates = estimates_by_scheme(torch_fn, xr, steps, ("central",), name)["central"]
        ratios.extend(np.abs(estimates - exact(xr)) / abs(exact(xr)) / predicted)
    rms = float(np.sqrt(np.mean(np.square(ratios))))
    assert 1 / 3 <= rms <= 3, rms  # observed: 0.44 to 0.79 across these cases
