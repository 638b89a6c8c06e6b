"""Edge cases of gradlab.gradcheck's options: every input ends in a result or a sentence."""

import subprocess
import sys

import pytest
import torch

import gradlab
from gradlab.errors import GradLabError

X = torch.linspace(0.1, 1.0, 12, dtype=torch.float64).reshape(3, 4)


@pytest.mark.parametrize("samples", [-3, 0, 2.5, True, "5", None])
def test_samples_that_are_not_a_whole_number_from_1_are_refused_with_a_sentence(samples):
    with pytest.raises(GradLabError, match="samples must be a whole number >= 1"):
        gradlab.gradcheck(torch.sin, X, samples=samples)


@pytest.mark.parametrize("seed", [-1, 2**63, 10**30, 1.5, True])
def test_seeds_outside_what_torch_takes_are_refused_with_a_sentence(seed):
    with pytest.raises(GradLabError, match="seed must be a whole number from 0 to 2\\*\\*63 - 1"):
        gradlab.gradcheck(torch.sin, X, seed=seed)


@pytest.mark.parametrize("empty", [torch.empty(0, dtype=torch.float64), torch.empty(0, 3, dtype=torch.float64)])
def test_an_empty_input_is_refused_not_passed(empty):
    with pytest.raises(GradLabError, match="no elements"):
        gradlab.gradcheck(torch.sin, empty, raise_on_fail=True)


@pytest.mark.parametrize("mode", ["sampled", "full", "directional"])
def test_zero_tolerances_are_a_strict_check_not_a_crash(mode):
    # No finite difference of sin equals cos(x) to the last bit, and the error bound is > 0:
    # with rtol = atol = 0 nothing can pass, and nothing is shown to be wrong either.
    r = gradlab.gradcheck(torch.sin, X, mode=mode, rtol=0, atol=0, taylor=False)
    assert r.verdict == "inconclusive" and r.summary.message


@pytest.mark.server  # starts a process
@pytest.mark.parametrize("argv,words", [
    # zero tolerances in float32: within autograd's own rounding, measured against float64
    # autograd, the float64 witness's differences agree: a pass that says so
    (["--rtol", "0", "--atol", "0"], "Autograd's own rounding in float32 was measured"),
    (["--seed", "1000000000000000000000000000000"], "seed must be a whole number"),
    (["--samples", "-3"], "samples must be a whole number >= 1"),
])
def test_the_cli_ends_these_in_a_result_or_one_sentence(argv, words):
    proc = subprocess.run([sys.executable, "-m", "gradlab", "check", "--shape", "3x4", *argv],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr and "unexpectedly" not in proc.stderr
    assert words in proc.stdout + proc.stderr
    assert proc.returncode in ((0, 3) if "rounding" in words else (2, 3))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("mode", ["sampled", "full", "directional"])
def test_zero_tolerances_never_fail_a_correct_gradient_in_any_dtype(dtype, mode):
    # Autograd's own value is rounded in its dtype: with nothing else to absorb it, a few
    # ulps of it must not read as a wrong gradient.
    from gradlab.check.lab.settings import CheckSettings, run_check

    r = run_check(CheckSettings(shape=(6, 5), dtype=dtype, mode=mode, rtol=0.0, atol=0.0), taylor=False)
    assert r.verdict != "fail"
