"""check_layers: each module of a model checked on its own names the module whose backward is wrong.

The models come from the layer vocabulary (gradlab.layers.vocabulary). A wrong layer is
either GradLab's wrong_swish (x·sigmoid(x) whose hand-written backward forgets the product
rule) or a stock Linear with a one-element error planted in its weight's gradient
(gradlab.testing.modules.plant_error: forward unchanged). In every position of a six-layer
model, in float64 and float32, exactly that module fails and every other module passes.
"""

from __future__ import annotations

import re

import pytest

import torch
from torch import nn

import gradlab
from gradlab.errors import GradLabError, LimitError
from gradlab.layers.vocabulary import build_model
from gradlab.limits import LIMITS
from gradlab.testing.modules import plant_error

#: The answer's last sentence: why the named module is wrong, in its numbers (gradlab.layers.result).
WHY = (r" At \S+(, \d+)*\] its backward gives \S+ where the finite difference gives \S+( ± \S+)?: "
       r"[\d,]+ times the tolerance apart\.")

#: Six layers, every one with parameters or an elementwise op the wrong one may replace.
SIX = ["linear:8", "tanh", "layernorm", "linear:8", "gelu", "linear:2"]


def _x(dtype: str, shape=(4, 5)) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(2)).to(getattr(torch, dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("position", range(6))
def test_a_wrong_custom_activation_is_named_in_every_position(position, dtype):
    stack = SIX[:position] + ["wrong_swish"] + SIX[position + 1:]
    r = gradlab.check_layers(build_model(", ".join(stack), (4, 5), dtype, seed=1), _x(dtype))
    assert r.verdict == "fail" and r.failing_modules == (str(position),)
    assert r.answer.startswith(f"{position} (WrongSwish, a custom autograd.Function): wrong gradient "
                               "with respect to its input at x[")
    # and why, in the failing row's own numbers (a float64 row is far more than 1,000 tolerances off)
    row = next(row for row in r.rows if row.verdict == "fail")
    assert r.answer.endswith(f"every other module passes. At {row.element} its backward gives {row.autograd:.4g} where "
                             f"the finite difference gives {row.numeric:.4g} ± {row.bound:.1g}: "
                             f"{row.difference / row.tolerance:,.0f} times the tolerance apart."), r.answer
    assert row.difference > 10 * row.tolerance


@pytest.mark.parametrize("dtype, relative", [("float64", 10.0), ("float32", 0.5)])
@pytest.mark.parametrize("position", [0, 2, 3, 5])  # every layer of SIX with a weight (2 is the LayerNorm)
def test_a_one_element_error_in_a_weight_is_named_at_its_layer(position, dtype, relative):
    model = build_model(", ".join(SIX), (4, 5), dtype, seed=1)
    x = _x(dtype)
    # the model's input at the planted layer: plant_error sizes the error from that layer's gradient
    at_layer = model[:position](x) if position else x
    plant_error(model[position], (at_layer,), "weight", relative, seed=3)
    r = gradlab.check_layers(model, x)
    # the Linear over its parameters, then inside it the parametrization holding the weight and the
    # planted identity (where the wrong backward is): every failing module is that layer or in it
    assert r.failing_modules[0] == str(position)
    assert all(m.startswith(f"{position}.parametrizations.weight") for m in r.failing_modules[1:])
    assert re.match(rf"{position} \(Parametrized(Linear|LayerNorm)\): wrong gradient with respect to its parameters at "
                    r"parametrizations\.weight\.original\[\d+(, \d+)?\]; every other module passes\." + WHY + "$", r.answer)
    assert all(row.verdict == "pass" for row in r.rows if not row.module.startswith(str(position)))


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_a_correct_model_never_fails(dtype):
    model = build_model("linear:8, swish, layernorm, linear:8, tanh, linear:2", (4, 5), dtype, seed=1)
    r = gradlab.check_layers(model, _x(dtype))
    assert not any(row.verdict == "fail" for row in r.rows)
    if dtype == "float64":
        assert r.verdict == "pass" and r.answer.startswith("Every module's gradient is right")


def test_the_callers_model_and_tensors_are_left_as_they_were():
    model = build_model("linear:6, batchnorm, tanh, linear:1", (8, 3), "float64", seed=0).train()
    x = _x("float64", (8, 3)).requires_grad_(True)
    before_params = [p.detach().clone() for p in model.parameters()]
    before_buffers = [b.detach().clone() for b in model.buffers()]
    x_before = x.detach().clone()
    gradlab.check_layers(model, x)
    assert all(torch.equal(a, b) for a, b in zip(before_params, model.parameters()))
    # BatchNorm in training mode updates its running statistics at every call: put back
    assert all(torch.equal(a, b) for a, b in zip(before_buffers, model.buffers()))
    assert all(p.grad is None for p in model.parameters()) and x.grad is None
    assert torch.equal(x.detach(), x_before) and x.requires_grad


class _Loop(nn.Module):
    """One Linear applied three times: a shared layer."""

    def __init__(self):
        super().__init__()
        self.step = nn.Linear(3, 3)

    def forward(self, x):
        for _ in range(3):
            x = torch.tanh(self.step(x))
        return x


@pytest.mark.parametrize("calls, rows", [("first", 2), ("all", 6)])
def test_a_module_called_several_times_is_checked_at_its_first_or_every_call(calls, rows):
    r = gradlab.check_layers(_Loop().double(), _x("float64", (2, 3)), calls=calls)
    # the loop's own tanh between its calls of step: the model is checked whole too, once
    model, step = [row for row in r.rows if row.module == ""], [row for row in r.rows if row.module == "step"]
    assert [(row.over, row.own_code, row.calls) for row in model] == [("parameters", True, 1), ("inputs", True, 1)]
    assert len(step) == rows and all(row.calls == 3 for row in step)
    assert sorted({row.call for row in step}) == ([0] if calls == "first" else [0, 1, 2])
    assert step[0].where == "step (Linear, call 1 of 3)" and r.verdict == "pass"


def test_keyword_arguments_and_tuple_outputs_are_passed_as_recorded():
    model = build_model("attention:2, linear:3", (2, 3, 4), "float64", seed=0)  # MHA(x, x, x, need_weights=False)
    r = gradlab.check_layers(model, _x("float64", (2, 3, 4)))
    kinds = {(row.kind, row.over) for row in r.rows}
    assert ("MultiheadAttention", "parameters") in kinds and ("MultiheadAttention", "inputs") in kinds
    assert r.verdict == "pass"


def test_a_module_without_floating_inputs_or_parameters_is_skipped_with_its_reason():
    model = nn.Sequential(nn.Embedding(5, 3), nn.Flatten(), nn.Linear(6, 1)).double()
    r = gradlab.check_layers(model, torch.tensor([[1, 4]]))
    embedding = [row for row in r.rows if row.kind == "Embedding"]
    assert [row.over for row in embedding] == ["parameters"]  # its input holds indices: no gradient
    assert r.verdict == "pass"
    only_ints = gradlab.check_layers(nn.Sequential(nn.Identity()), torch.tensor([1, 2]))
    (row,) = only_ints.rows
    assert row.verdict == "skipped" and "nothing has a gradient to check" in row.note
    assert only_ints.verdict == "inconclusive"


def test_a_random_layer_is_reported_not_failed():
    model = nn.Sequential(nn.Linear(4, 64), nn.Dropout(0.5), nn.Linear(64, 1)).double().train()
    r = gradlab.check_layers(model, _x("float64", (3, 4)))
    (dropout,) = [row for row in r.rows if row.kind == "Dropout"]
    assert dropout.verdict == "skipped" and "different outputs on two calls" in dropout.note
    assert "fail" not in {row.verdict for row in r.rows}


def test_too_many_module_checks_are_refused_before_any_runs():
    model = nn.Sequential(*[nn.Tanh() for _ in range(LIMITS.layer_checks + 1)])
    with pytest.raises(LimitError, match="module checks"):
        gradlab.check_layers(model, _x("float64", (2, 2)))


def test_options_the_layer_check_chooses_itself_are_refused():
    with pytest.raises(GradLabError, match="wrt"):
        gradlab.check_layers(nn.Linear(2, 1).double(), _x("float64", (1, 2)), wrt="parameters")
    with pytest.raises(GradLabError, match="calls must be one of"):
        gradlab.check_layers(nn.Linear(2, 1).double(), _x("float64", (1, 2)), calls="some")


def test_assert_layers_does_not_pass_a_model_none_of_whose_checks_ran():
    # dropout in training mode is skipped (fn is random), and nothing else is checked: no module
    # passed, so the assertion must not
    with pytest.raises(AssertionError):
        gradlab.assert_layers(torch.nn.Sequential(torch.nn.Dropout(0.5)), _x("float64", (3, 2)))


def test_assert_layers_raises_with_the_answer_and_passes_a_right_model():
    wrong = build_model("linear:4, wrong_swish, linear:1", (3, 2), "float64", seed=0)
    with pytest.raises(AssertionError, match=r"^1 \(WrongSwish, a custom autograd.Function\): wrong gradient"):
        gradlab.assert_layers(wrong, _x("float64", (3, 2)))
    right = build_model("linear:4, swish, linear:1", (3, 2), "float64", seed=0)
    assert gradlab.assert_layers(right, _x("float64", (3, 2))).verdict == "pass"


def test_the_table_figure_and_html_show_every_check():
    r = gradlab.check_layers(build_model("linear:4, wrong_swish, linear:1", (3, 2), "float64", seed=0),
                             _x("float64", (3, 2)))
    table = r.table
    assert list(table["module"]) == ["0", "0", "1", "2", "2"]
    assert {"module", "type", "dtype", "checked over", "verdict", "element", "difference", "error bound",
            "seconds"} <= set(table.columns)
    fig = r.figure()
    assert {t.name for t in fig.data} == {"pass", "fail"}
    html = r._repr_html_()
    assert "wrong gradient with respect to its input" in html and "WrongSwish" in html


def test_a_model_that_cannot_run_on_the_inputs_is_one_sentence():
    with pytest.raises(GradLabError, match=r"^The model could not run on the inputs given \(RuntimeError: "):
        gradlab.check_layers(nn.Linear(3, 1).double(), _x("float64", (2, 4)))


def test_expression_and_catalogue_activations_are_layers_through_autograd():
    from gradlab.layers.vocabulary import parse_stack

    assert parse_stack("linear:3, expr:x*tanh(x), fn:sigmoid_tanh") == (
        ("linear", 3), ("expr", "x*tanh(x)"), ("fn", "sigmoid_tanh"))
    model = build_model("linear:4, expr:x*tanh(x), fn:sigmoid_tanh, linear:1", (3, 2), "float64", seed=0)
    x = _x("float64", (3, 2))
    h = model[0](x)
    assert torch.equal(model[1](h), h * torch.tanh(h))  # the expression language computes x*tanh(x)
    r = gradlab.check_layers(model, x)
    assert r.verdict == "pass" and [row.kind for row in r.rows if row.module in ("1", "2")] == ["Expression"] * 2


@pytest.mark.parametrize("stack, words", [
    ("expr:", "expr needs a text after the colon"),
    ("expr:__import__('os')", "Unknown function '__import__'"),
    ("fn:nope", "fn:nope is not in the function catalogue"),
])
def test_a_bad_activation_text_is_refused_in_one_sentence(stack, words):
    from gradlab.layers.vocabulary import parse_stack

    with pytest.raises(GradLabError, match=re.escape(words)):
        parse_stack(stack)


def test_a_loss_layer_and_a_reduction_reach_every_check():
    from gradlab.layers.settings import LayerCheckSettings, SquaredError, run_layer_check

    s = LayerCheckSettings("linear:4, wrong_swish, linear:1", (3, 2), "float64", loss="mse", reduction="mean")
    report = run_layer_check(s)
    assert report.layers.failing_modules == ("1",)
    assert [row.kind for row in report.layers.rows if row.module == "3"] == ["SquaredError"]
    assert report.whole.summary.reduction == "mean" and report.whole.verdict == "fail"
    loss = SquaredError(torch.tensor([1.0, 2.0], dtype=torch.float64))
    assert loss(torch.tensor([3.0, 0.0], dtype=torch.float64)).tolist() == [4.0, 4.0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_passing_row_reads_its_check_without_building_the_words(dtype):
    # a pass's summary is built only when read; the row takes the same worst value from the table
    from types import SimpleNamespace

    from gradlab.layers.result import LayerRow

    layer = nn.Linear(5, 3).to(getattr(torch, dtype))
    result = gradlab.gradcheck(layer, _x(dtype), wrt="parameters", mode="full")
    call = SimpleNamespace(path="0", kind="Linear", index=0, custom_function=False, kwargs={})
    row = LayerRow.of(call, 1, "parameters", result, 0.0)
    assert callable(result._summary)  # still unbuilt
    s = result.summary
    assert (row.verdict, row.dtype, row.note) == (s.verdict, s.dtype, "") == ("pass", dtype, "")
    assert row.element == s.worst.where
    assert (row.autograd, row.numeric, row.difference, row.tolerance, row.bound) == \
        (s.worst.autograd, s.worst.numeric, s.worst.abs_error, s.worst.tolerance, s.worst.error_bound)


@pytest.mark.parametrize("spec, words", [("once", "Unknown grad_outputs 'once'"),
                                         (torch.ones(2, 1), "grad_outputs is one of random, ones; got a Tensor")])
def test_a_bad_grad_outputs_is_refused_once_not_skipped_in_every_module(spec, words):
    # each module's refusal used to read as "skipped" on every row
    with pytest.raises(GradLabError, match=words):
        gradlab.check_layers(nn.Sequential(nn.Linear(2, 1), nn.Tanh()).double(), _x("float64", (2, 2)),
                             grad_outputs=spec)
