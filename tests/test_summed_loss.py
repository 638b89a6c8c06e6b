"""The summed-loss lab against mathematics: exact sums by fractions and math.fsum, the
classical error bounds of each summation, and the float32 MSE-sum check's printed finite differences."""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from gradlab.errors import GradLabError
from gradlab.labs.summed.loss import (NO_THRESHOLD, SUM_METHODS, SummedLossSettings, neumaier_sum,
                                      pairwise_sum, sequential_sum, summed_loss)

MSE_SUM_LOSS = summed_loss(SummedLossSettings())


def test_the_exact_sum_is_the_correctly_rounded_fsum_of_the_same_terms():
    terms = MSE_SUM_LOSS.terms.to(torch.float64).tolist()
    assert float(MSE_SUM_LOSS.exact) == math.fsum(terms)  # fsum: the exact sum, rounded once
    assert MSE_SUM_LOSS.exact == sum(map(Fraction, terms))


def test_the_mse_sum_loss_lies_in_the_binade_whose_ulp_makes_the_quantum_1_9531():
    L = MSE_SUM_LOSS.exact_float
    assert 2 ** 14 <= L < 2 ** 15  # float32 spacing there: 2**(14 - 23) = 2**-9
    assert MSE_SUM_LOSS.ulp_loss == 2.0 ** -9 == float(np.spacing(np.float32(L)))
    assert MSE_SUM_LOSS.quantum == pytest.approx(2.0 ** -9 / 1e-3, rel=1e-15)
    assert f"{MSE_SUM_LOSS.quantum:.4f}" == "1.9531"  # what the question printed


def test_the_questions_forward_differences_are_whole_multiples_of_the_quantum():
    # The question's own check: (L(x + h e_i) - L(x)) / h in float32 at h = 1e-3. Both sums are
    # float32 numbers in [2**14, 2**15), so their difference is k ulps of L exactly, and the
    # quotient is k * 1.953125, rounded once: the question's -1.9531, 0 and 1.9531.
    from gradlab.check.lab.builtin_models import build_model_loss
    from gradlab.check.lab.settings import CheckSettings

    problem = build_model_loss(CheckSettings())  # the float32 MSE-sum check: affine, mse, sum, 140x120
    loss = problem.fn(problem.x).sum()
    flat = problem.x.reshape(-1)
    seen = set()
    for i in range(0, flat.numel(), 701):
        moved = flat.clone()
        moved[i] += torch.tensor(1e-3, dtype=torch.float32)
        fd = ((problem.fn(moved.reshape(problem.x.shape)).sum() - loss) / torch.tensor(1e-3)).item()
        k = round(fd / MSE_SUM_LOSS.quantum)
        assert fd == pytest.approx(k * MSE_SUM_LOSS.quantum, rel=2 ** -23)
        seen.add(f"{fd:.4f}")
    assert {"-1.9531", "0.0000", "1.9531"} <= seen


def test_sequential_equals_a_plain_float32_loop():
    rng = np.random.default_rng(1)
    terms = rng.standard_normal(500).astype(np.float32) ** 2
    total = np.float32(0)
    for t in terms:
        total = np.float32(total + t)
    assert sequential_sum(torch.from_numpy(terms)) == float(total)


def test_pairwise_equals_its_recursive_definition():
    def tree(values):
        if len(values) == 1:
            return values[0]
        half = 1 << (len(values) - 1).bit_length() - 1  # the balanced split of the padded tree
        return np.float32(tree(values[:half]) + tree(values[half:])) if len(values) > half else tree(values)

    rng = np.random.default_rng(2)
    for n in (1, 2, 3, 8, 13, 64, 100):
        terms = rng.standard_normal(n).astype(np.float32)
        padded = list(terms) + [np.float32(0)] * ((1 << (n - 1).bit_length()) - n)
        assert pairwise_sum(torch.from_numpy(terms)) == float(tree(padded))


@pytest.mark.parametrize("method", SUM_METHODS, ids=[m.name for m in SUM_METHODS])
def test_each_method_is_within_its_classical_error_bound(method):
    row = MSE_SUM_LOSS.row(method.name)
    n, absolute = MSE_SUM_LOSS.terms.numel(), float(MSE_SUM_LOSS.terms.abs().to(torch.float64).sum())
    u = 2.0 ** -24 if method.in_dtype else 2.0 ** -53
    bounds = {  # Higham, Accuracy and Stability, ch. 4 (first order in u)
        "sequential": (n - 1) * u * absolute,
        "pairwise": math.ceil(math.log2(n)) * u * absolute,
        "torch.sum": math.ceil(math.log2(n)) * 16 * u * absolute,  # blocked: a few more levels
        "neumaier": 2 * u * abs(MSE_SUM_LOSS.exact_float) + n * u * u * absolute,
        "float64": (n - 1) * u * absolute,
    }
    assert abs(row.error) <= bounds[method.name]


def test_compensation_and_float64_beat_the_naive_loop_on_the_mse_sum_loss():
    assert abs(MSE_SUM_LOSS.row("neumaier").error_ulps) <= 1
    assert abs(MSE_SUM_LOSS.row("float64").error_ulps) < 1e-6
    assert abs(MSE_SUM_LOSS.row("sequential").error_ulps) > 5  # the naive loop loses many ulps


@pytest.mark.parametrize("name", ["sequential", "pairwise", "torch.sum", "neumaier"])
def test_a_change_below_about_half_an_ulp_of_L_does_not_move_the_rounded_sum(name):
    threshold = MSE_SUM_LOSS.row(name).threshold
    assert MSE_SUM_LOSS.ulp_loss / 4 <= threshold <= 4 * MSE_SUM_LOSS.ulp_loss


def test_mean_divides_the_exact_sum_by_n():
    mean = summed_loss(SummedLossSettings(shape=(30, 20), reduction="mean"))
    total = summed_loss(SummedLossSettings(shape=(30, 20)))
    assert mean.exact == total.exact / 600


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_other_dtypes_measure_against_their_own_grid(dtype):
    r = summed_loss(SummedLossSettings(shape=(20, 10), dtype=dtype))
    assert r.terms.dtype == getattr(torch, dtype)
    assert abs(r.row("neumaier").error_ulps) <= 1


def test_reduction_none_and_bad_steps_are_refused_with_a_sentence():
    with pytest.raises(GradLabError, match="reduction"):
        SummedLossSettings(reduction="none")
    with pytest.raises(GradLabError, match="step h"):
        SummedLossSettings(h=0.0)


def test_neumaier_recovers_what_the_loop_loses():
    terms = torch.tensor([1.0, 1e8, 1.0, -1e8], dtype=torch.float32)
    assert sequential_sum(terms) == 0.0 and neumaier_sum(terms) == 2.0


def test_a_loss_beyond_float16_s_largest_value_is_reported_not_raised():
    # 400x500 squared errors sum to ~3e5, beyond float16's largest finite value 65504
    # (IEEE binary16: (2 - 2**-10) * 2**15). Every method that keeps its running sum
    # in float16 and adds large partial sums overflows to inf; the float64 sum is exact
    # to float64 rounding; the naive loop stalls: once its total's ulp exceeds twice a
    # term, adding the term changes nothing, so it ends far below L without overflowing.
    r = summed_loss(SummedLossSettings(shape=(400, 500), dtype="float16"))
    terms = [float(t) for t in r.terms.to(torch.float64).tolist()]
    assert math.fsum(terms) > (2 - 2 ** -10) * 2 ** 15
    assert r.overflows
    assert {row.method for row in r.overflowed_rows} == {"pairwise", "torch.sum", "neumaier"}
    for row in r.overflowed_rows:
        assert row.value == math.inf and row.error_ulps == math.inf and math.isnan(row.threshold)
        assert row.threshold_reason == "overflowed" 
    assert r.row("float64").value == math.fsum(terms)
    naive = r.row("sequential")
    assert math.isfinite(naive.value) and naive.value < 65504


# ------------------------------------------------------------------ thresholds, every method and dtype


def neumaier_by_hand(values, dtype: torch.dtype) -> float:
    """Kahan-Neumaier with every one of its five operations done in the dtype: numpy's float32
    scalars, or 0-d torch tensors (torch rounds each bfloat16 operation)."""
    if dtype == torch.float32:
        values = [np.float32(v) for v in values]
        total = carry = np.float32(0)
    else:
        values = [torch.tensor(v, dtype=dtype) for v in values]
        total = carry = torch.tensor(0.0, dtype=dtype)
    for t in values:
        s = total + t
        lost = (total - s) + t if abs(total) >= abs(t) else (t - s) + total
        carry = carry + lost
        total = s
    return float(total + carry)


def sequential_by_hand(values, dtype: torch.dtype) -> float:
    total = torch.tensor(0.0, dtype=dtype)
    for t in values:
        total = total + torch.tensor(t, dtype=dtype)
    return float(total)


BY_HAND = {"neumaier": neumaier_by_hand, "sequential": sequential_by_hand,
           **{m.name: (lambda values, dtype, m=m: m.total(torch.tensor(values, dtype=dtype)))
              for m in SUM_METHODS if m.name not in ("neumaier", "sequential")}}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_compensated_sum_equals_one_written_here(dtype):
    rng = np.random.default_rng(3)
    for values in (rng.standard_normal(300) ** 2 * 10, rng.standard_normal(300) * 1e3,
                   [1.0, 1e8, 1.0, -1e8, 3.0, 2.0 ** -20]):
        terms = torch.tensor(np.asarray(values, dtype=np.float64)).to(torch.float32).to(dtype)
        assert neumaier_sum(terms) == neumaier_by_hand(terms.tolist(), dtype)
        assert sequential_sum(terms) == sequential_by_hand(terms.tolist(), dtype)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", [m.name for m in SUM_METHODS])
def test_each_threshold_moves_the_sum_and_no_smaller_increase_does(dtype, name):
    r = summed_loss(SummedLossSettings(shape=(30, 20), dtype=dtype))
    row, j = r.row(name), r.term_index
    torch_dtype = getattr(torch, dtype)
    values = r.terms.tolist()
    assert values[j] == max(values)  # the term moved is the largest
    assert row.threshold_reason is None and row.threshold > 0

    def total(increase: float) -> float:
        moved = list(values)
        moved[j] = float(torch.tensor(values[j] + increase, dtype=torch.float64).to(torch.float32).to(torch_dtype))
        return BY_HAND[name](moved, torch_dtype)

    def next_up(v: float) -> float:  # the next number of the dtype above a positive normal v
        return v + 2.0 ** (math.floor(math.log2(v)) - (23 if dtype == "float32" else 7))

    base = BY_HAND[name](values, torch_dtype)
    assert base == row.value
    assert total(row.threshold) != base
    assert total(row.threshold / 2) == base
    smaller = [next_up(values[j])]  # every number of the dtype between the term and term + threshold
    while smaller[-1] < values[j] + row.threshold:
        smaller.append(next_up(smaller[-1]))
    assert smaller.pop() == values[j] + row.threshold  # the threshold is a whole step of the grid
    assert all(total(v - values[j]) == base for v in smaller)  # minimal: no smaller increase moves it


def test_bfloat16_has_every_threshold_and_the_cli_prints_no_nan(capsys):
    # the MSE-sum loss in bfloat16: the naive loop and Neumaier's carry both stall (n u = 16,800 / 256 >> 1)
    r = summed_loss(SummedLossSettings(dtype="bfloat16"))
    assert all(math.isfinite(row.threshold) and row.threshold_reason is None for row in r.rows)
    assert r.row("float64").threshold == 2.0 ** (math.floor(math.log2(float(r.terms[r.term_index]))) - 7)
    from gradlab.cli.main import main

    assert main(["sum", "--dtype", "bfloat16", "--shape", "30x20"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "the smallest increase of the largest term" in out


def test_an_overflowed_sum_says_why_it_has_no_threshold(capsys):
    from gradlab.cli.main import main

    assert main(["sum", "--dtype", "float16", "--shape", "400x500", "--format", "json"]) == 0
    rows = {row["method"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["pairwise"]["threshold"] is None and rows["pairwise"]["threshold_reason"] == "overflowed"
    assert rows["sequential"]["threshold_reason"] is None and rows["sequential"]["threshold"] > 0
    assert main(["sum", "--dtype", "float16", "--shape", "400x500"]) == 0
    out = capsys.readouterr().out
    assert "none (overflowed)" in out and f"overflowed: {NO_THRESHOLD['overflowed']}" in out and "nan" not in out
