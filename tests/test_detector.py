"""Issue 36: a large float64 or float32 default check looks along two dense directions judged
against their measured error bound (gradlab/check/running/detector.py), so one element 10 tolerances off
among 16,800 is found and named, where 64 blocks of 263 elements let it pass at every position. In
float32 the directions are differenced on fn's float64 twin, autograd's own rounding measured."""

import math

import pytest
import torch

import gradlab
from gradlab.check.lab.builtin_models import build_model_loss
from gradlab.check.running.detector import DETECT_FROM, sight
from gradlab.check.lab.settings import CheckSettings
from gradlab.numerics.dtypes import resolve_tolerances
from gradlab.testing.planted import off_by_tolerances

RTOL, ATOL = resolve_tolerances(torch.float64, None, None)


def _off(t, at, times):
    return off_by_tolerances(t, at, times, RTOL, ATOL)


def _question():
    ml = build_model_loss(CheckSettings(model="affine", shape=(140, 120), loss="mse", reduction="sum",
                                        dtype="float64"))
    return ml.fn, ml.x


def _tanh(n):
    g = torch.Generator().manual_seed(n)
    x = torch.randn(16, n, generator=g, dtype=torch.float64)
    w = torch.randn(n, n, generator=g, dtype=torch.float64) / n ** 0.5
    return (lambda t: torch.tanh(x @ t)), w


CASES = {"the MSE question, 16,800": _question, "tanh(X @ W), 16,384": lambda: _tanh(128)}


@pytest.mark.parametrize("case", CASES)
def test_a_right_gradient_passes_on_the_two_dense_directions(case):
    fn, x = CASES[case]()
    assert x.numel() > DETECT_FROM
    r = gradlab.gradcheck(fn, x)
    assert r.verdict == "pass" and r.summary.mode == "dense" and r.summary.checked == 2, r.summary.text


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("where", [0, 1 / 3, 1 / 2, 1.0])
def test_one_element_ten_tolerances_off_is_found_and_named_anywhere(case, where):
    fn, x = CASES[case]()
    k = min(int(where * x.numel()), x.numel() - 1)
    r = gradlab.gradcheck(lambda t: fn(_off(t, [k], 10.0)), x)
    assert r.verdict == "fail", r.summary.text
    assert r.summary.located.flat_index == k and r.summary.located.found_by == "dense", r.summary.text


def _question32():
    ml = build_model_loss(CheckSettings(model="affine", shape=(140, 120), loss="mse", reduction="sum",
                                        dtype="float32"))
    return ml.fn, ml.x


def _tanh32(n):  # its own float64 twin: X cast to the dtype it is given
    fn, w = _tanh(n)
    x = torch.randn(16, n, generator=torch.Generator().manual_seed(n), dtype=torch.float64)
    return (lambda t: torch.tanh(x.to(t.dtype) @ t)), w.float()


CASES32 = {"the MSE question, float32": _question32, "tanh(X @ W), float32": lambda: _tanh32(128)}
RTOL32, ATOL32 = resolve_tolerances(torch.float32, None, None)


@pytest.mark.parametrize("case", CASES32)
def test_float32_right_gradient_passes_on_the_twins_dense_directions(case):
    fn, x = CASES32[case]()
    r = gradlab.gradcheck(fn, x)
    assert r.verdict == "pass" and r.summary.mode == "dense", r.summary.text
    assert "Autograd's own rounding in float32 was measured" in r.summary.text


@pytest.mark.parametrize("case", CASES32)
@pytest.mark.parametrize("where", [0, 1 / 3, 1.0])
def test_float32_one_element_half_off_is_found_and_named(case, where):
    fn, x = CASES32[case]()
    k = min(int(where * x.numel()), x.numel() - 1)
    r = gradlab.gradcheck(lambda t: fn(off_by_tolerances(t, [k], 1.0, 0.5, 0.0)), x)  # 50 % of its gradient
    assert r.verdict == "fail" and r.summary.mode == "dense", r.summary.text
    assert r.summary.located.flat_index == k and r.summary.located.found_by == "dense", r.summary.text


@pytest.mark.parametrize("case", CASES32)
def test_float32_only_bug_is_not_taken_for_rounding(case):
    # right in the float64 twin, 10 tolerances off at one element in float32: the distance from the
    # twin's autograd along a direction is allowed for only up to what re-rounding produces
    fn, x = CASES32[case]()
    k = x.numel() // 2
    r = gradlab.gradcheck(lambda t: fn(off_by_tolerances(t, [k], 10.0, RTOL32, ATOL32, dtypes=[torch.float32])), x)
    assert r.verdict == "fail" and r.summary.mode == "dense", r.summary.text
    assert r.summary.located.flat_index == k, r.summary.text


def test_several_wrong_elements_are_all_named_at_a_cost_of_log_n_each():
    fn, x = _question()
    n, evaluations = x.numel(), [0]

    def counting(t):  # evaluations of fn at one point, batched or not
        evaluations[0] += t.numel() // n
        return fn(t)

    passed = gradlab.gradcheck(counting, x)
    passing, evaluations[0] = evaluations[0], 0
    wrong = [17, 9_000, n - 3]
    r = gradlab.gradcheck(lambda t: counting(_off(t, wrong, 10.0)), x)
    assert passed.verdict == "pass" and r.verdict == "fail", r.summary.text
    rows = r.table[(r.table["kind"] == "element") & (r.table["state"] == "fail")]
    assert {int(i) for i in rows["flat"]} == set(wrong), rows
    # each wrong element: 2 halves of 2 points at 2 steps a level, log2(N) levels, and its own judging
    assert evaluations[0] <= passing + len(wrong) * (8 * math.log2(n) + 80), (passing, evaluations[0])


def test_a_difference_within_the_tolerances_is_suspected_but_passes_and_is_said():
    fn, x = _question()
    r = gradlab.gradcheck(lambda t: fn(_off(t, [4_321], 0.9)), x)  # within its tolerance: no failure
    assert r.verdict == "pass", r.summary.text
    assert any("each pass their own tolerance" in note for note in r.summary.notes), r.summary.notes


def test_where_the_bound_is_too_loose_the_blocks_decide_and_it_is_said():
    # fn's value carries noise of 1e-9 of itself (a term autograd does not see): the dense
    # directions' measured bound is ~800 times what one element 10 tolerances off moves them by
    x = torch.linspace(0.1, 3.0, 4000, dtype=torch.float64)
    r = gradlab.gradcheck(lambda t: torch.sin(t) * (1 + 1e-9 * torch.sin(1e12 * t).detach()), x)
    assert r.verdict != "fail" and r.summary.mode == "blocks", r.summary.text
    seen = f"could not see one element {sight(x.numel()):.0f} tolerances off, as the blocks can"  # 12 at 4,000
    assert any(seen in note for note in r.summary.notes), r.summary.notes


def test_small_checks_low_precisions_a_chosen_step_and_no_twin_keep_their_blocks():
    x = torch.linspace(0.1, 3.0, DETECT_FROM, dtype=torch.float64)
    assert gradlab.gradcheck(torch.sin, x).summary.mode == "blocks"
    wide = torch.linspace(0.1, 3.0, 4 * DETECT_FROM, dtype=torch.float64)
    assert gradlab.gradcheck(torch.sin, wide).summary.mode == "dense"
    assert gradlab.gradcheck(torch.sin, wide, eps=1e-6).summary.mode == "blocks"  # the caller's step
    assert gradlab.gradcheck(torch.sin, wide.float()).summary.mode == "dense"  # on its float64 twin
    assert gradlab.gradcheck(torch.sin, wide.bfloat16()).summary.mode == "blocks"
    held = torch.full((3, 4 * DETECT_FROM), 0.01)  # a float32 matrix: fn refuses float64, has no twin
    assert gradlab.gradcheck(lambda t: torch.tanh(held @ t), wide.float()).summary.mode == "blocks"


def test_a_fn_that_refuses_the_ladders_far_points_is_checked_by_the_blocks():
    fn, x = _question()
    x0 = x.clone()

    def guarded(t):  # a domain check: refuses points far from x (the ladder's largest steps)
        if float((t - x0).abs().max()) > 1e-3:
            raise ValueError("too far from x")
        return fn(t)

    r = gradlab.gradcheck(guarded, x)
    assert r.verdict == "pass" and r.summary.mode == "blocks", r.summary.text
