"""``python -m gradlab layers``: the wrong layer named from a terminal, with the check's exit codes."""

from __future__ import annotations

import json

import pytest

from gradlab.cli.main import main

SIX = ["linear:8", "tanh", "layernorm", "linear:8", "gelu", "linear:2"]


def _run(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("position", range(6))
def test_the_wrong_layer_is_named_in_every_position(position, dtype, capsys):
    stack = ", ".join(SIX[:position] + ["wrong_swish"] + SIX[position + 1:])
    status, out, err = _run(["layers", "--stack", stack, "--input", "4x5", "--dtype", dtype, "--format", "json"],
                            capsys)
    report = json.loads(out)
    assert status == 1 and err == ""
    assert report["failing_modules"] == [str(position)] and report["exit_code"] == 1
    assert report["answer"].startswith(f"{position} (WrongSwish, a custom autograd.Function)")


def test_a_right_stack_passes_with_exit_0_and_a_table(capsys):
    status, out, _ = _run(["layers", "--stack", "linear:4, swish, layernorm, linear:1", "--input", "3x2",
                           "--dtype", "float64"], capsys)
    assert status == 0
    assert "verdict: PASS" in out and "Every module's gradient is right" in out
    assert "The whole model at once" in out


@pytest.mark.parametrize("argv, words", [
    (["layers", "--stack", "linear:3, foo"], "Unknown layer 'foo'"),
    (["layers", "--stack", "linear"], "linear needs a size"),
    (["layers", "--stack", "tanh:3"], "tanh takes no size"),
    (["layers", "--stack", "conv2d:2", "--input", "4x3"], "conv2d needs an input of at least 4 dimensions"),
    (["layers", "--input", "4xa"], "is not a list of sizes"),
])
def test_bad_input_is_one_error_line_and_exit_2(argv, words, capsys):
    status, out, err = _run(argv, capsys)
    assert status == 2 and out == ""
    assert err.startswith("error: ") and words in err and err.count("\n") == 1


def test_a_layer_check_whose_pace_projects_past_the_limit_is_stopped_in_one_sentence(monkeypatch):
    # the CLI's child paces the layer check as it paces a check: a clock that spends the whole
    # limit on the first module projects the rest past it
    import itertools

    from gradlab.cli import layers
    from gradlab.errors import LimitError
    from gradlab.layers.settings import LayerCheckSettings
    from gradlab.server import deadline

    ticks = itertools.count(0.0, 0.6 * layers.LIMITS.full_check_seconds)
    real = deadline.paced_progress
    monkeypatch.setattr(layers, "paced_progress", lambda *a, **k: real(*a, **k, clock=lambda: next(ticks)))
    settings = LayerCheckSettings("linear:4, tanh, linear:4, tanh, linear:1", (2, 3), "float64", "blocks",
                                  0, "first", "none", "sum").validated()
    with pytest.raises(LimitError, match=r"This layer check would take .*LIMITS\.full_check_seconds.*smaller --input"):
        layers._output(settings, "table")
