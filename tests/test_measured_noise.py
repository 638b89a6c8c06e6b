"""Verdicts from measured noise: a correct gradient is never "fail" in float32, bfloat16 or
float16, careless use ends in one sentence naming its cause, and the states cannot
contradict themselves.

Expectations come from mathematics (the gradient of the sum of a layer norm is exactly 0;
torch's stock layers are correct; a planted error has a known size) or from the noise of
a known Gaussian; none is copied from the checker's output.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import gradlab
from gradlab.check.differences.noise import ecnoise
from gradlab.check.verdicts.judging import state_of
from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import resolve_tolerances
from gradlab.testing.modules import module_case


def _both(case_name: str, dtype: torch.dtype, mode: str = "full"):
    module, inputs = module_case(case_name).build(dtype)
    yield gradlab.gradcheck(module, *inputs, wrt="parameters", mode=mode, taylor=False)
    yield gradlab.gradcheck(module, *inputs, mode=mode, taylor=False)


@pytest.mark.parametrize("name", ["LayerNorm", "GRUCell"])
def test_stock_layers_in_float32_pass_over_parameters_and_inputs(name):
    for r in _both(name, torch.float32):
        assert r.verdict == "pass", r.summary.text


def test_layer_norm_in_float32_never_claims_a_difference_of_zero_exceeds_the_tolerance():
    # the sum of a layer norm is 0 for every input: its gradient is exactly 0
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))
    r = gradlab.gradcheck(lambda t: F.layer_norm(t, t.shape[-1:]), x, mode="full", taylor=False)
    assert r.verdict != "fail" and r.summary.count("not_differentiable") == 0, r.summary.text
    assert "difference 0," not in r.summary.message


def _planted(module: torch.nn.Module, inputs: tuple, relative: float, seed: int = 0):
    """The module with one element of its weight's gradient off by ``relative`` of its size
    (at least 10 atol), forward unchanged (an identity parametrization whose backward adds
    the error); returns the module and that element's name."""
    from gradlab.testing.modules import plant_error

    return plant_error(module, inputs, "weight", relative, seed)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_planted_error_of_half_the_gradient_is_fail_and_named_in_full_mode(dtype):
    module, inputs = module_case("Linear").build(dtype)
    module, label = _planted(module, inputs, 0.5)
    r = gradlab.gradcheck(module, *inputs, wrt="parameters", mode="full", taylor=False)
    assert r.verdict == "fail" and r.summary.count("fail") == 1, r.summary.text
    assert r.summary.worst.label == label


def test_dropout_in_training_mode_is_stopped_with_its_cause():
    x = torch.randn(5, dtype=torch.float64)
    with pytest.raises(GradLabError, match="different outputs on two calls.*random"):
        gradlab.gradcheck(lambda t: F.dropout(t, 0.5, training=True), x)


def test_an_fn_that_rounds_otherwise_with_grad_is_not_called_random():
    # a forward pass with grad may take another kernel (a fused attention path): an output 1e-6
    # away (far above a few roundings) is not randomness when fn without grad repeats itself
    def fn(t):
        return t.sin() + (1e-6 if torch.is_grad_enabled() else 0.0)

    assert gradlab.gradcheck(fn, torch.linspace(-1, 1, 6, dtype=torch.float64)).verdict == "pass"


def test_an_fn_changing_its_input_in_place_is_stopped_with_its_cause():
    def fn(t):
        t.data.add_(1)
        return t.sin()

    with pytest.raises(GradLabError, match="changed its input in place"):
        gradlab.gradcheck(fn, torch.randn(5, dtype=torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_step_of_1e300_is_refused_in_one_sentence(dtype):
    with pytest.raises(GradLabError, match=r"^The step eps = 1e\+300 is .*default step\.$"):
        gradlab.gradcheck(torch.sin, torch.randn(5, dtype=dtype), eps=1e300)


def test_a_step_that_does_not_move_x_is_refused_naming_the_step_that_would():
    x = torch.full((3,), 1000.0, dtype=torch.float32)
    with pytest.raises(GradLabError, match=r"does not move .*Pick eps >= 6\.1e-05"):  # spacing at 1000: 2**-14
        gradlab.gradcheck(torch.sin, x, eps=1e-6)


def test_numeric_fn_serves_as_the_float64_witness_without_numeric_float64():
    # float32 at a tiny step cannot decide; the float64 twin given as numeric_fn decides,
    # and the result says it was used (a twin that computes something else would fail)
    x = torch.linspace(0.5, 1.5, 6)
    r = gradlab.gradcheck(torch.sin, x, eps=1e-6, mode="full", numeric_fn=torch.sin, taylor=False)
    assert r.verdict == "pass" and any("numeric_fn" in n for n in r.summary.notes)
    wrong = gradlab.gradcheck(torch.sin, x, eps=1e-6, mode="full", numeric_fn=torch.cos, taylor=False)
    assert wrong.verdict != "pass"


def test_ecnoise_recovers_the_level_of_gaussian_noise_on_a_smooth_function():
    rng = np.random.default_rng(1)
    t = np.arange(-3, 4) * 1e-3
    for sigma in (1e-12, 1e-8, 1e-4):
        table = np.cos(1 + t)[None, :] + sigma * rng.standard_normal((400, 7))
        found, accepted = ecnoise(table)
        assert accepted.mean() > 0.8
        assert 0.7 * sigma < np.median(found[accepted]) < 2.0 * sigma


_finite = st.floats(-1e6, 1e6, allow_nan=False)
_positive = st.floats(0, 1e6, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_finite, st.one_of(_finite, st.just(float("nan"))), _positive,
                          st.one_of(_positive, st.just(float("inf")), st.just(float("nan"))), _positive,
                          st.booleans()), min_size=1, max_size=20))
def test_states_cannot_contradict_themselves(rows):
    a, n, tol, bound, slack, kink = (np.array(c) for c in zip(*rows))
    state = state_of(a, n, tol, bound, slack, kink)
    err = np.abs(a - n)
    within = err <= tol + slack
    assert not (state[within] == "fail").any()  # within the tolerance: never fail
    assert not (state[kink] == "fail").any()  # not differentiable: never fail
    fail = state == "fail"
    assert (err[fail] > tol[fail] + np.nan_to_num(bound[fail], nan=np.inf) + slack[fail]).all()
    assert (state[~kink & within] == "pass").all()
