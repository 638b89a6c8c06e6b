"""Hostile layer stacks and layer checks (issue 34): each ends in a result or one sentence.

The layer check's ways in are the API (:func:`gradlab.check_layers`,
:func:`gradlab.layers.settings.run_layer_check`), the CLI (``python -m gradlab layers``) and the
Grad check page's model view (``?check=a model, layer by layer&stack=...``). Each reproducer
here was a traceback, Streamlit's exception box, a silently changed request, a misworded
limit, a live link drawn from a module's name, or a request ended only by the worker's kill.
"""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from app_text import shown
from hypothesis_profiles import engine_settings
from streamlit.testing.v1 import AppTest
from torch import nn

import gradlab
from gradlab.cli.main import UNEXPECTED, main
from gradlab.errors import GradLabError, LimitError
from gradlab.layers import check as layer_check
from gradlab.layers import vocabulary
from gradlab.layers.settings import LayerCheckSettings, run_layer_check
from gradlab.layers.vocabulary import build_model, parse_stack, stack_parameters
from gradlab.limits import LIMITS

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "gradcheck.py")
PAGE_TIMEOUT_S = 120
SEED_SENTENCE = "seed must be a whole number from 0 to 2**63 - 1"


def _cli(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def _one_error_line(status, out, err, words):
    assert status == 2 and out == "", (status, out, err)
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert UNEXPECTED not in err and "Traceback" not in err, err
    assert words in err, err


def _page_query(**changes) -> dict:
    from gradlab.teaching.presets import preset, url_query

    return {**url_query(preset("gradcheck", "wrong_layer")), **changes}


def _page_error(query: dict) -> str:
    """The one error the Grad check page shows for ``query`` (no exception box, no table)."""
    at = AppTest.from_file(PAGE, default_timeout=PAGE_TIMEOUT_S)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert len(at.error) == 1, [e.value for e in at.error]
    assert not at.dataframe
    return shown(at.error[0].value)


# ------------------------------------------------------- 1. a size in other digits: linear:²


@pytest.mark.parametrize("size", ["²", "¹", "٣", "１６", "1.5", "-3", "0x10", "9" * 40])
def test_a_size_not_in_ascii_digits_is_one_sentence(size):
    # '²'.isdigit() is True and int('²') raises ValueError; int('٣') reads 3: both refused alike
    with pytest.raises(GradLabError, match=r"the size must be a whole number from 1 to \d+, in the digits 0-9"):
        parse_stack(f"linear:{size}")
    with pytest.raises(GradLabError, match="in the digits 0-9"):
        LayerCheckSettings(f"linear:4, attention:{size}", (2, 3, 4)).validated()


@engine_settings(200)
@given(st.one_of(st.text(max_size=12),
                 st.text(st.characters(categories=["Nd", "No", "Nl"]), min_size=1, max_size=4)))
def test_any_text_after_linear_parses_or_is_a_gradlab_error(text):
    try:
        layers = parse_stack("linear:" + text)
    except GradLabError:
        return
    name, n = layers[0]
    assert name == "linear" and isinstance(n, int) and 1 <= n <= LIMITS.network_width


def test_the_cli_refuses_a_superscript_size_in_one_line(capsys):
    _one_error_line(*_cli(["layers", "--stack", "linear:²", "--input", "4x8"], capsys), "in the digits 0-9")


def test_the_page_refuses_a_superscript_size_in_one_sentence():
    text = _page_error(_page_query(stack="linear:²"))
    assert "in the digits 0-9" in text and "ValueError" not in text, text


# ------------------------------------------------------- 2. the parameter limit says parameters


def test_too_many_parameters_are_called_parameters_with_the_limit(monkeypatch):
    # the classroom profile's limit: linear:512, tanh, linear:512 on a 4x8 input has 267,264 parameters
    small = dataclasses.replace(LIMITS, tensor_elements=65_536)
    monkeypatch.setattr(vocabulary, "LIMITS", small)
    with pytest.raises(LimitError) as info:
        run_layer_check(LayerCheckSettings("linear:512, tanh, linear:512", (4, 8), "float64"))
    message = str(info.value)
    assert "The model has 267,264 parameters, 262,656 of them in module 2 (linear:512)" in message, message
    assert "at most 65,536 parameters" in message and "(LIMITS.tensor_elements)" in message, message
    assert "input" not in message.split(";")[0], message


def test_twenty_four_wide_layers_are_refused_as_parameters_before_any_weight_is_drawn(monkeypatch):
    stack = ", ".join(["linear:512"] * 24)
    drawn = []
    monkeypatch.setattr(nn.Linear, "reset_parameters", lambda self: drawn.append(self))
    with pytest.raises(LimitError, match=r"^The model has 6,049,792 parameters.*LIMITS\.tensor_elements"):
        build_model(stack, (2, 16), "float64")
    with pytest.raises(LimitError, match=r"^The model has 6,049,792 parameters"):
        LayerCheckSettings(stack, (2, 16)).validated()
    assert drawn == []


def test_a_module_with_too_many_parameters_is_skipped_with_a_sentence_naming_them(monkeypatch):
    monkeypatch.setattr(layer_check, "LIMITS", dataclasses.replace(LIMITS, tensor_elements=10))
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh()).double()
    from gradlab.limits import server_limits

    with server_limits():  # the pages' and the CLI's limit; gradlab.check_layers from Python has none
        r = gradlab.check_layers(model, torch.ones(2, 3, dtype=torch.float64))
    (row,) = [r for r in r.rows if r.module == "0" and r.over == "parameters"]
    assert row.verdict == "skipped"
    assert row.note.startswith("its 16 parameters are more than the 10 GradLab checks at once "
                               "(LIMITS.tensor_elements)"), row.note


@pytest.mark.parametrize(("stack", "shape"), [
    ("linear:4, tanh, linear:1", (2, 3)),
    ("conv2d:3, batchnorm, relu, conv2d:2", (2, 2, 5, 4)),
    ("layernorm, attention:2, linear:3, gru:5, batchnorm", (2, 3, 4)),
    ("batchnorm, linear:3, swish, wrong_swish, expr:x*tanh(x), fn:sigmoid_tanh, gelu", (4, 5)),
])
def test_the_parameter_count_from_the_text_is_the_built_model_s(stack, shape):
    model = build_model(stack, shape, "float64")
    assert stack_parameters(stack, shape) == sum(p.numel() for p in model.parameters())


def test_the_parameter_limit_at_its_boundary(monkeypatch):
    monkeypatch.setattr(vocabulary, "LIMITS", dataclasses.replace(LIMITS, tensor_elements=100))
    assert stack_parameters("linear:10", (1, 9)) == 100
    with pytest.raises(LimitError, match="The model has 110 parameters"):
        stack_parameters("linear:10", (1, 10))


# ------------------------------------------------------- 3. the seed, as gradcheck refuses it


def test_check_layers_refuses_a_seed_gradcheck_refuses_instead_of_skipping_every_module():
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh()).double()
    x = torch.ones(2, 2, dtype=torch.float64)
    with pytest.raises(GradLabError) as mine:
        gradlab.check_layers(model, x, seed=2**70)
    with pytest.raises(GradLabError) as theirs:
        gradlab.gradcheck(model, x, seed=2**70)
    assert str(mine.value) == str(theirs.value) and SEED_SENTENCE in str(mine.value)
    for options, words in (({"mode": "bogus"}, "Unknown mode 'bogus'"), ({"samples": 0}, "samples must be"),
                           ({"eps": -1.0}, "The step eps must be"), ({"reduction": "max"}, "Unknown reduction")):
        with pytest.raises(GradLabError, match=words):
            gradlab.check_layers(model, x, **options)


def test_the_settings_refuse_a_seed_out_of_range():
    for seed in (2**63, -1, 2**70):
        with pytest.raises(GradLabError, match=r"seed must be a whole number from 0 to 2\*\*63 - 1"):
            LayerCheckSettings("linear:2", (2, 3), seed=seed).validated()
    assert LayerCheckSettings("linear:2", (2, 3), seed=2**63 - 1).validated().seed == 2**63 - 1


def test_the_cli_refuses_a_huge_seed_in_one_line_as_the_check_command_does(capsys):
    status, out, err = _cli(["layers", "--seed", "99999999999999999999"], capsys)
    _one_error_line(status, out, err, SEED_SENTENCE)
    assert "/" not in err  # no server paths
    check = _cli(["check", "--seed", "99999999999999999999"], capsys)
    assert check[0] == 2 and check[2] == err


def test_the_largest_seed_runs_the_layer_check():
    report = run_layer_check(LayerCheckSettings("linear:2, tanh", (2, 3), "float64", seed=2**63 - 1))
    assert report.layers.verdict == "pass"


# ------------------------------------------------------- 4. a module's name is text, not markup


HOSTILE_NAME = '<a href="https://evil-example/login">click</a>'  # torch refuses a "." in a module's name


class _Double(torch.autograd.Function):  # forward 2x, backward claims 3x: the answer names its module
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        return 3 * g


class _Wrong(nn.Module):
    def forward(self, x):
        return _Double.apply(x)


def _hostile_result():
    model = nn.Sequential()
    model.add_module(HOSTILE_NAME, nn.Linear(2, 2))
    model.add_module(HOSTILE_NAME.replace("click", "wrong"), _Wrong())
    model = model.double()
    torch.manual_seed(0)
    return gradlab.check_layers(model, torch.randn(3, 2, dtype=torch.float64))


def test_a_module_named_with_a_link_is_shown_escaped_in_the_chart():
    r = _hostile_result()
    assert r.failing_modules == (HOSTILE_NAME.replace("click", "wrong"),)
    fig = r.figure()
    texts = [fig.layout.title.text, *fig.layout.yaxis.categoryarray]
    for trace in fig.data:
        texts += [*trace.y, *trace.hovertext]
    assert all("<a" not in t and "</a" not in t for t in texts), texts
    escaped = html.escape(HOSTILE_NAME, quote=True)
    assert f"{escaped} Linear · parameters" in fig.layout.yaxis.categoryarray
    assert escaped.replace("click", "wrong") in fig.layout.title.text


def test_a_module_named_with_a_link_is_no_link_in_the_notebook_outputs():
    """The table's HTML and the figure Plotly's renderer is handed (its mimetype JSON) say the name
    as typed, in entities: no link in either."""
    import json

    from notebook_kernel import notebook_kernel

    with notebook_kernel() as shown:
        _hostile_result()._ipython_display_()
    table = shown.outputs[0].data["text/html"]
    figure = json.dumps(shown.outputs[-1].data["application/vnd.plotly.v1+json"])
    for page in (table, figure):
        assert "<a" not in page, page[page.index("<a") - 80:][:200]
    escaped = html.escape(HOSTILE_NAME, quote=True)
    assert escaped in figure  # the chart's labels: the name as typed, in entities
    assert "&lt;a href=&quot;https://evil-example/login&quot;&gt;click&lt;/a&gt;" in figure
    assert "&lt;a href=\"https://evil-example/login\"&gt;click&lt;/a&gt;" in table  # the table


# ------------------------------------------------------- 5. a stack over its length: refused, not cut


def _stack_of(length: int) -> str:
    return "linear:4," + " " * (length - len("linear:4,"))


def test_a_stack_at_the_length_limit_parses_and_one_more_character_is_refused():
    assert parse_stack(_stack_of(LIMITS.expression_chars)) == (("linear", 4),)
    with pytest.raises(LimitError, match=rf"^The stack is {LIMITS.expression_chars + 1} characters long; GradLab "
                                         rf"allows at most {LIMITS.expression_chars} \(LIMITS\.expression_chars\)"):
        parse_stack(_stack_of(LIMITS.expression_chars + 1))


#: The issue's reproducer: 24 layers whose last, cut at 300 characters, read as "exp".
LONG_STACK = f"{', '.join(['linear:16'] * 23):<295}, expr:x*tanh(x)"


def test_a_long_stack_is_refused_with_its_length_in_the_api_and_the_cli(capsys):
    assert len(LONG_STACK) > LIMITS.expression_chars == 300
    with pytest.raises(GradLabError, match="Unknown layer 'exp'"):  # what the page's text box made of it
        parse_stack(LONG_STACK[:300])
    with pytest.raises(LimitError, match=r"LIMITS\.expression_chars"):
        LayerCheckSettings(LONG_STACK, (2, 3)).validated()
    with pytest.raises(LimitError, match=r"LIMITS\.expression_chars"):
        build_model(LONG_STACK, (2, 3), "float64")
    _one_error_line(*_cli(["layers", "--stack", LONG_STACK, "--input", "2x3"], capsys), "LIMITS.expression_chars")


def test_the_page_refuses_a_long_stack_instead_of_cutting_it():
    text = _page_error(_page_query(stack=LONG_STACK))
    assert "LIMITS.expression_chars" in text and "Unknown layer" not in text, text


# ------------------------------------------------------- 6. attention over a million tokens


ATTENTION = dict(stack="attention:1", input_shape=(1, 1_048_576, 1))


def test_attention_over_a_million_tokens_is_refused_up_front_naming_the_limit():
    from gradlab.labs.gradcheck import layer_view

    settings = LayerCheckSettings(ATTENTION["stack"], ATTENTION["input_shape"])
    for call in (settings.validated, lambda: run_layer_check(settings), lambda: layer_view(settings),
                 lambda: build_model(ATTENTION["stack"], ATTENTION["input_shape"], "float32")):
        with pytest.raises(LimitError) as info:
            call()
        message = str(info.value)
        assert "1,099,511,627,776 attention scores" in message and "(LIMITS.tensor_elements)" in message, message
        assert "at most 1,024 here" in message, message


def test_the_attention_limit_at_its_boundary():
    assert stack_parameters("attention:1", (1, 1024, 2)) == 4 * 2 * 2 + 4 * 2
    with pytest.raises(LimitError, match=r"attention scores .*batch 1 x 1 head x 1,025²"):
        stack_parameters("attention:1", (1, 1025, 2))
    with pytest.raises(LimitError, match=r"batch 2 x 2 heads x 1,024².*at most 512 here"):
        stack_parameters("attention:2", (2, 1024, 2))


def test_a_gru_over_a_long_sequence_is_refused_up_front_naming_its_limit():
    # one step after another: a million steps were 112 s of one core for the recording pass alone
    assert stack_parameters("gru:1", (1, LIMITS.recurrent_steps, 1)) == 3 * (1 + 1) + 6
    with pytest.raises(LimitError, match=rf"Module 0 \(gru:1\) runs over sequences of "
                                         rf"{LIMITS.recurrent_steps + 1:,} steps.*\(LIMITS\.recurrent_steps\)"):
        LayerCheckSettings("gru:1", (1, LIMITS.recurrent_steps + 1, 1)).validated()


def test_a_layer_whose_output_is_over_the_tensor_limit_is_refused_up_front():
    with pytest.raises(LimitError, match=r"Module 1 \(linear:512\) would output 536,870,912 elements "
                                         r"\(1x1048576x512\).*\(LIMITS\.tensor_elements\)"):
        LayerCheckSettings("tanh, linear:512", (1, 1_048_576, 1)).validated()


def test_the_cli_and_the_page_refuse_attention_over_a_million_tokens(capsys):
    _one_error_line(*_cli(["layers", "--stack", "attention:1", "--input", "1x1048576x1"], capsys),
                    "(LIMITS.tensor_elements)")
    text = _page_error(_page_query(stack="attention:1", input="1x1048576x1"))
    assert "attention scores" in text and "LIMITS.tensor_elements" in text, text
