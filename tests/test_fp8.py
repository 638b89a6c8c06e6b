"""8-bit floats, emulated: the formats' documented numbers, rounding against the definition
of round-to-nearest-even on the format's grid, and the best central difference against theory."""

import math

import numpy as np
import pytest
import torch

from gradlab.errors import GradLabError
from gradlab.error_sweep import autograd_derivative
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, DTYPE_NAMES, EMULATED_DTYPES, facts, native_facts
from gradlab.numerics.emulation import emulated, to_dtype
from gradlab.numerics.expressions import parse
from gradlab.numerics.schemes import estimates_by_scheme
from gradlab.numerics.ulp import float_bits

# OCP 8-bit floating point specification (v1.0), table 1: E4M3 has no infinities (fn), E5M2 is IEEE-like.
DOCUMENTED = {
    "float8_e4m3fn": dict(eps=2.0 ** -3, tiny=2.0 ** -6, max=448.0, subnormal=2.0 ** -9, exponent=4),
    "float8_e5m2": dict(eps=2.0 ** -2, tiny=2.0 ** -14, max=57344.0, subnormal=2.0 ** -16, exponent=5),
}
FP8 = tuple(EMULATED_DTYPES)


def _grid(name: str) -> np.ndarray:
    """Every finite value of the format, from its 256 bit patterns."""
    values = torch.arange(256, dtype=torch.uint8).view(facts(name).torch_dtype).to(torch.float64).numpy()
    return np.unique(values[np.isfinite(values)])


@pytest.mark.parametrize("name", FP8)
def test_each_row_carries_the_formats_documented_numbers(name):
    info, doc = facts(name), DOCUMENTED[name]
    assert (info.eps, info.tiny, info.max) == (doc["eps"], doc["tiny"], doc["max"])
    grid = _grid(name)
    assert grid.max() == doc["max"] and grid[grid > 0].min() == doc["subnormal"]
    assert info.emulated and info.compute == torch.float32 and "emulated" in info.label


def test_emulated_rows_are_offered_only_where_they_are_emulated():
    assert set(FP8).isdisjoint(DTYPE_NAMES) and set(FP8) <= set(ALL_DTYPE_NAMES)
    with pytest.raises(GradLabError, match="emulated"):
        native_facts("float8_e4m3fn", "A gradient check")


def _round_nearest_even(v: float, name: str) -> float:
    grid = _grid(name)
    if abs(v) >= grid.max():
        return math.copysign(grid.max(), v) if name == "float8_e4m3fn" and abs(v) < 480 else v
    above = grid[np.searchsorted(grid, v)]
    below = grid[np.searchsorted(grid, v) - 1]
    if v - below != above - v:
        return float(below if v - below < above - v else above)
    bits = {b: int(torch.tensor(b).to(facts(name).torch_dtype).view(torch.uint8)) for b in (below, above)}
    return float(below if bits[below] % 2 == 0 else above)  # the even significand


@pytest.mark.parametrize("name", FP8)
def test_rounding_to_the_format_is_round_to_nearest_even_on_its_grid(name):
    rng = np.random.default_rng(0)
    top = DOCUMENTED[name]["max"]
    values = np.concatenate([rng.uniform(-top, top, 300), rng.uniform(-2, 2, 300),
                             (_grid(name)[:-1] + _grid(name)[1:]) / 2])  # every midpoint: the ties
    for v in values:
        assert float(to_dtype(v, name)) == _round_nearest_even(float(v), name), v


@pytest.mark.parametrize("name", FP8)
def test_every_emulated_result_lies_on_the_grid(name):
    grid = set(_grid(name).tolist())
    x = to_dtype(np.linspace(0.1, 3.0, 50), name)
    with emulated(name):
        results = [x * 3, x + 0.01, torch.sin(x), torch.exp(x) / (x + 1), parse("x**2 - log(x)")(x)]
    for r in results:
        assert set(r.to(torch.float64).tolist()) <= grid | {0.0}


def test_bit_patterns_of_8_bit_floats():
    assert float_bits(1.0, "float8_e4m3fn") == "0 0111 000"  # bias 7
    assert float_bits(-1.5, "float8_e5m2") == "1 01111 10"  # bias 15


@pytest.mark.parametrize("name", FP8)
def test_autograd_in_8_bits_is_on_the_grid_and_within_a_few_ulps(name):
    for x in (0.4, 1.0, 1.7):
        xr = float(to_dtype(x, name))
        value = autograd_derivative(parse("sin(x)"), xr, name)
        assert value in set(_grid(name).tolist())
        assert abs(value - math.cos(xr)) <= 2 * facts(name).eps * abs(math.cos(xr)) + 1e-12
        assert value != math.cos(xr)  # far from exact: a whole ulp is 6-12 %


@pytest.mark.parametrize("name", FP8)
def test_the_best_central_difference_is_within_a_factor_of_its_theory(name):
    # Central differences: error ≈ u|f|/h + h²|f'''|/6, smallest at h* = (3u|f|/|f'''|)^(1/3),
    # E* of order eps^(2/3) (about 25 % for e4m3). Round-off errors partly cancel, so the
    # typical error sits a few times below E*; it never beats it by a large factor.
    u, f = facts(name).eps / 2, parse("sin(x)")
    ratios = []
    for x in np.linspace(0.5, 1.2, 60):
        xr = float(to_dtype(x, name))
        fx, f3, d1 = abs(math.sin(xr)), abs(math.cos(xr)), abs(math.cos(xr))
        h = (3 * u * fx / f3) ** (1 / 3)
        predicted = (u * fx / h + h * h * f3 / 6) / d1
        est = estimates_by_scheme(f, xr, np.array([h]), ("central",), name)["central"][0]
        ratios.append(abs(est - math.cos(xr)) / d1 / predicted)
    assert 1 / 10 <= float(np.median(ratios)) <= 1.5
    assert 0.15 <= facts("float8_e4m3fn").eps ** (2 / 3) <= 0.3  # the "about 25 %"
