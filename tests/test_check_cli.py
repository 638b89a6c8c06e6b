"""The check CLI: JSON with the documented keys, one-line errors with exit status 2."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest
import torch

import gradlab
from gradlab.check.lab.settings import CheckSettings, run_check
from gradlab.check.verdicts.states import STATE_NAMES, STATES
from gradlab.cli.check import register, run

ROW_KEYS = {"index", "autograd", "numeric", "ratio", "abs_error", "rel_error", "ok", "state", "error_bound"}
TOP_KEYS = {"rows", "verdict", "diagnosis", "relative_perturbation", "machine_eps"}


def _parse(argv):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["check", *argv])


def _run_json(argv, capsys) -> dict:
    status = run(_parse([*argv, "--format", "json"]))
    out = json.loads(capsys.readouterr().out)
    assert status == {"pass": 0, "fail": 1, "inconclusive": 3, "not_differentiable": 4}[out["verdict"]]
    return out


def test_the_mse_sum_check_json_has_the_keys_and_passes_after_refinement_in_float32(capsys):
    out = _run_json(["--model", "affine", "--shape", "140x120", "--loss", "mse", "--reduction", "sum",
                     "--dtype", "float32", "--eps", "1e-3", "--samples", "5", "--seed", "0",
                     "--scheme", "forward", "--mode", "sampled"], capsys)
    assert TOP_KEYS <= set(out)
    assert len(out["rows"]) == 5 and all(ROW_KEYS <= set(r) for r in out["rows"])
    # The question's own step fails every row (round-off, the diagnosis); re-estimated, the
    # gradient is right: verdict pass.
    assert not any(r["ok"] for r in out["rows"]) and "round-off" in out["diagnosis"]
    assert out["verdict"] == "pass" and all(r["state"] == "pass" for r in out["rows"])
    assert out["machine_eps"] == pytest.approx(2.0**-23)
    assert 0.1 < out["relative_perturbation"] / out["machine_eps"] < 10


def test_json_is_strict_even_with_nan(capsys):
    # log at negative inputs gives nan: JSON must still parse, with null for non-finite values.
    out = _run_json(["--model", "expression", "--expression", "log(x)", "--shape", "3x2",
                     "--dtype", "float64", "--reduction", "none"], capsys)
    json.dumps(out, allow_nan=False)
    # no finite difference where the loss is NaN: no evidence either way
    assert out["verdict"] == "inconclusive" and out["diagnosis_kind"] == "nonfinite"


def test_table_output_passes_in_float64(capsys):
    assert run(_parse(["--shape", "6x5", "--dtype", "float64", "--mode", "full"])) == 0
    assert "verdict: PASS" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--shape", "0x3"], ["--mode", "full", "--shape", "300x300"],
                                  ["--scheme", "complex_step", "--dtype", "bfloat16"],
                                  ["--model", "expression", "--expression", "foo(x)"]])
def test_bad_values_give_one_error_line_and_status_2(argv, capsys):
    assert run(_parse(argv)) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ")
    assert captured.err.count("\n") == 1


@pytest.mark.server  # starts a process
@pytest.mark.parametrize("argv", [["--scheme", "bogus"], ["--eps", "-1"], ["--samples", "0"]])
def test_bad_options_exit_2_with_one_line_from_python_m_gradlab(argv):
    proc = subprocess.run([sys.executable, "-m", "gradlab", "check", *argv],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_model_and_loss_choices_are_the_engines():
    from gradlab.check.lab.builtin_models import LOSSES, MODELS

    assert [_parse(["--model", m]).model for m in MODELS] == list(MODELS)
    assert [_parse(["--loss", name]).loss for name in LOSSES] == list(LOSSES)
    with pytest.raises(SystemExit):
        _parse(["--model", "bogus"])


@pytest.mark.parametrize("argv, words", [(["--eps", "-1"], "positive finite"), (["--samples", "0"], "samples"),
                                         (["--rtol", "nan"], "rtol"),
                                         (["--mode", "full", "--shape", "300x300"], "LIMITS.full_check_elements")])
def test_out_of_range_values_get_the_engines_sentence(argv, words, capsys):
    assert run(_parse(argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err


def test_inconclusive_table_output_prints_the_message_and_the_hint_on_their_own_lines(capsys):
    assert run(_parse(["--model", "expression", "--expression", "log(x)", "--shape", "3x2",
                       "--dtype", "float64", "--mode", "sampled"])) == 3
    lines = capsys.readouterr().out.splitlines()
    # log(x) is NaN at the negative inputs: said plainly, naming the output values (issue 34)
    message = next(line for line in lines if line.startswith("fn returns NaN or inf at the given input: out["))
    assert "Hint" not in message and "output values" in message
    assert any(line.startswith("Hint: ") and "not finite" in line for line in lines)
    assert any(line.startswith("verdict: INCONCLUSIVE") for line in lines)


@pytest.mark.server  # starts a process
def test_help_documents_the_exit_codes():
    proc = subprocess.run([sys.executable, "-m", "gradlab", "check", "--help"],
                          capture_output=True, text=True, timeout=120)
    text = " ".join(proc.stdout.split())
    assert "0 pass, 1 fail, 3 inconclusive, 4 not differentiable, 2 bad usage" in text


class _Tripled(torch.autograd.Function):
    """2·t forward, a backward that says 3: a wrong gradient."""

    @staticmethod
    def forward(ctx, t):
        return 2 * t

    @staticmethod
    def backward(ctx, g):
        return 3 * g


_X = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64)
#: A real check ending in each state: sin is smooth, the Function's backward is wrong, relu
#: has a kink at 0, and log at 1e-300 has an error bound no tolerance covers in float64.
_STATE_CHECKS = {
    "pass": lambda: gradlab.gradcheck(torch.sin, _X, mode="full", taylor=False),
    "fail": lambda: gradlab.gradcheck(_Tripled.apply, _X, mode="full", taylor=False),
    "not_differentiable": lambda: gradlab.gradcheck(torch.relu, torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64),
                                                    mode="full", taylor=False),
    "inconclusive": lambda: run_check(CheckSettings(model="expression", expression="log(x)", shape=(3, 2),
                                                    dtype="float64")),
}


@pytest.mark.parametrize("state", STATE_NAMES)
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_each_state_exits_with_its_documented_code(state, fmt, monkeypatch, capsys):
    result = _STATE_CHECKS[state]()
    assert result.verdict == state  # the check itself ends in that state
    monkeypatch.setattr("gradlab.cli.check.run_check", lambda settings, **limits: result)
    status = run(_parse(["--format", fmt]))
    documented = {"pass": 0, "fail": 1, "inconclusive": 3, "not_differentiable": 4}  # the --help text
    assert status == documented[state]
    out = capsys.readouterr().out
    if fmt == "json":
        assert json.loads(out)["exit_code"] == documented[state] and json.loads(out)["verdict"] == state
    else:
        words = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE",
                 "not_differentiable": "NOT DIFFERENTIABLE"}[state]
        assert any(line.startswith(f"verdict: {words}") for line in out.splitlines())
