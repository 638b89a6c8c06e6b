"""The Grad check page opens, its presets set the controls, and the URL restores them."""

from __future__ import annotations

import pytest

from pathlib import Path

from streamlit.testing.v1 import AppTest
from app_text import shown
from reading_order import ANSWER, CHART, reading_order


PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "gradcheck.py")
#: The session-state key of the page's expander holding the Python call of a layer check.
CODE_KEY = "layer_check_code"
TIMEOUT_S = 120


def _open(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT_S)
    if query:
        at.query_params.update(query)
    return at.run()


def _problems(at: AppTest) -> list[str]:
    return [e.message for e in at.exception]


def test_page_opens_with_a_verdict():
    at = _open()
    assert not _problems(at)
    assert at.title[0].value == "Grad check"
    assert len(at.error) + len(at.success) + len(at.warning) >= 1  # the diagnosis box
    assert len(at.dataframe) >= 1


def test_the_float32_preset_is_named_for_what_it_shows():
    # GradLab says PASS here: "a grad check that fails" read as if GradLab's check failed.
    from gradlab.teaching.presets import preset

    label = preset("gradcheck", "float32_check_fails").label
    assert "float32" in label and "1e-3" in label
    assert "hand-written check fails" in label and "gradient is right" in label
    at = _open()
    assert at.button(key="preset_float32_check_fails").label == label


def test_the_mse_sum_preset_sets_the_controls_and_fails_with_roundoff():
    at = _open()
    at.button(key="preset_float32_check_fails").click().run()
    assert not _problems(at)
    assert at.selectbox(key="model").value == "affine"
    assert at.text_input(key="shape").value == "140x120"
    assert at.selectbox(key="loss").value == "mse"
    assert at.selectbox(key="reduction").value == "sum"
    assert at.selectbox(key="dtype").value == "float32"
    assert at.selectbox(key="scheme").value == "forward"
    assert at.selectbox(key="eps").value == "1e-03"
    assert at.selectbox(key="mode").value == "sampled"
    assert at.number_input(key="samples").value == 5
    assert at.number_input(key="seed").value == 0
    assert any("round-off" in shown(e.value) for e in at.warning)
    # The question's own conclusion (its check fails at eps 1e-3) next to GradLab's (the gradient is right).
    said = " ".join(shown(m.value) for m in at.markdown).replace("**", "")
    assert "A hand-written check" in said and "says FAIL" in said and "GradLab says PASS" in said
    assert not at.error  # a meaningless check is a warning, not a wrong gradient


def test_url_query_params_restore_the_controls():
    at = _open({"dtype": "float64", "shape": "12x10", "reduction": "mean", "scheme": "Central",
                "eps": "1e-03", "mode": "full"})
    assert not _problems(at)
    assert at.selectbox(key="dtype").value == "float64"
    assert at.text_input(key="shape").value == "12x10"
    assert at.selectbox(key="reduction").value == "mean"
    assert at.selectbox(key="scheme").value == "central"
    assert at.selectbox(key="mode").value == "full"
    assert any("Pass" in shown(e.value) for e in at.success)


def test_bad_shape_shows_an_error_not_a_traceback():
    at = _open({"shape": "banana"})
    assert not _problems(at)
    assert any("140x120" in shown(e.value) for e in at.error)


def test_a_full_check_that_would_run_too_long_is_stopped_early_with_the_limit_named():
    # 65,536 elements of the mlp: ~1 min of finite differences on one core, far over the limit
    at = _open({"model": "mlp", "shape": "256x256", "dtype": "float64", "mode": "full"})
    assert not _problems(at)
    messages = [shown(e.value) for e in at.error]
    assert any("LIMITS.full_check_seconds" in m and "sampled" in m for m in messages), messages
    assert not at.get("progress")  # the bar gives way to the message


SWEEP_CAPTION = "Each line is one sampled element"
TAYLOR_TEXT = "This test needs no step and no tolerance"


def _texts(at: AppTest) -> str:
    return " ".join(shown(m.value) for m in at.markdown) + " ".join(shown(c.value) for c in at.caption)


def test_only_the_open_tab_is_drawn_and_the_url_names_it_while_the_main_chart_always_shows():
    default = _open({"shape": "12x10"})
    assert not _problems(default)
    assert SWEEP_CAPTION in _texts(default) and TAYLOR_TEXT not in _texts(default)
    assert len(default.dataframe) == 1  # the first tab: every checked value

    taylor = _open({"shape": "12x10", "view": "Taylor test"})
    assert not _problems(taylor)
    assert TAYLOR_TEXT in _texts(taylor) and not taylor.dataframe
    assert SWEEP_CAPTION in _texts(taylor)  # the main chart is not a tab


def test_a_url_naming_an_unknown_tab_opens_the_first():
    at = _open({"shape": "12x10", "view": "<script>"})
    assert not _problems(at)
    assert len(at.dataframe) == 1 and TAYLOR_TEXT not in _texts(at)


# ---------------------------------------------------------------- the first screen

WIDGETS = {"selectbox", "text_input", "number_input", "toggle", "radio", "button"}


def test_the_answer_and_the_main_chart_come_right_after_the_compact_controls():
    at = _open()
    assert not _problems(at)
    order = [kind for kind, _ in reading_order(at.main)]
    last_control = max(i for i, kind in enumerate(order) if kind in WIDGETS)
    assert order[last_control + 1:last_control + 3] == [ANSWER, CHART]
    # before the controls only the title and the one-line question
    first_control = min(i for i, kind in enumerate(order) if kind in WIDGETS)
    assert order[:first_control] == ["title", "markdown"]
    # the long words come after the chart: the diagnosis box, the metrics, the table
    rest = order[last_control + 3:]
    assert {"warning", "metric", "dataframe"} <= set(rest)
    answer = dict(reading_order(at.main))[ANSWER]
    chart = dict(reading_order(at.main))[CHART]
    assert [c.type for c in answer.children.values()] == ["success"]  # one sentence, nothing else
    assert "plotly_chart" in [c.type for c in chart.children.values()]


def test_the_presets_fold_beside_the_title_and_the_controls_are_one_wrapping_row_the_rest_in_a_popover():
    at = _open()
    rows = [c for c in at.main.children.values() if c.type == "flex_container"]
    title_row, row = rows[:2]  # the title row (title, question, what is checked, presets), then the controls
    assert [c.type for c in title_row.children.values()] == ["title", "markdown", "selectbox", "popover"]
    assert list(title_row.children.values())[2].key == "check"  # a function, or a model layer by layer
    presets = list(title_row.children.values())[3]  # the preset buttons, folded into one popover
    assert "preset_float32_check_fails" in {getattr(c, "key", None) for _, c in reading_order(presets)}
    assert row.proto.flex_container.wrap and row.proto.flex_container.direction == 2  # HORIZONTAL
    shown_keys = [c.key for c in row.children.values() if getattr(c, "key", None)]
    assert shown_keys == ["shape", "reduction", "dtype", "scheme", "eps"]
    popover = [c for c in row.children.values() if c.type == "popover"]
    assert len(popover) == 1
    folded = {c.key for _, c in reading_order(popover[0]) if getattr(c, "key", None)}
    assert {"model", "loss", "mode", "samples", "seed", "numeric64"} <= folded


def test_the_answer_says_the_gradient_is_right_and_why_the_hand_written_check_fails():
    # The question's check: float32, forward differences at eps 1e-3 of a 16,800-element sum.
    # rho = h·|g|/|L| ~ 1e-3·1/2.5e4 = 4e-8 < float32's eps 1.2e-7: the step is lost to round-off,
    # while autograd of (x+1)/2 under MSE is exact to rounding, so the gradient is right.
    at = _open({"shape": "140x120", "dtype": "float32", "scheme": "Forward", "eps": "1e-03"})
    assert not _problems(at)
    answer = dict(reading_order(at.main))[ANSWER]
    (box,) = answer.children.values()
    text = shown(box.value)
    assert text.startswith("The gradient is right")
    assert "eps = 0.001, says FAIL because round-off" in text


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_the_questions_hand_written_values_are_those_its_code_prints(reduction):
    """The preset's "hand-written check" lists what the question's own loop prints (0.0 and
    multiples of ulp(L)/eps), not GradLab's estimates, and says how GradLab's differ."""
    import numpy as np
    import torch

    from gradlab.teaching.presets import preset, url_query
    from question_check import page_data, questions_grad_check

    at = _open({**url_query(preset("gradcheck", "float32_check_fails")), "reduction": reduction})
    assert not _problems(at)
    texts = [shown(m.value) for m in at.markdown]
    (said,) = [t for t in texts if t.startswith("A hand-written check at eps = 0.001")]
    listed = said.split(" prints ", 1)[1].split(" where autograd", 1)[0].split(", ")
    elements = [tuple(int(i) for i in e[2:-1].split(", ")) for e in _table_elements(at)]
    data, target = page_data((140, 120), torch.float32)
    expected = questions_grad_check(data, target, reduction, 1e-3, elements)
    # the table lists worst first, the sentence in the check's order: the same values, as float32
    assert sorted(np.float32(v) for v in listed) == sorted(np.float32(e) for e in expected)
    assert "0.0" in listed
    assert any(shown(c.value).startswith("GradLab's own finite differences (column numeric) are computed "
                                         "differently") for c in at.caption)


def _table_elements(at: AppTest) -> list[str]:
    """The element labels of the values table ("x[58, 51]"), in its order (worst first)."""
    frame = at.dataframe[0].value
    frame = frame.data if hasattr(frame, "data") else frame  # a Styler holds its frame
    return frame["element"].tolist()


def test_a_clean_float64_check_answers_right_with_no_hand_written_fail():
    # (x+1)/2 under MSE in float64 at the central default step: round-off ~u/rho is far under
    # rtol, so the check passes at its own step and there is no FAIL to explain.
    at = _open({"shape": "6x5", "dtype": "float64", "scheme": "Central"})
    answer = dict(reading_order(at.main))[ANSWER]
    (box,) = answer.children.values()
    # the default mode checks ceil(30 / 8) = 4 block directions, each element in one of them
    assert box.type == "success" and "all 4 random directions, which together cover every element, agree" \
        in shown(box.value)
    assert "FAIL" not in shown(box.value)


def test_the_questions_check_shows_the_verdict_after_re_estimation_and_the_diagnosis_of_its_step():
    # At the question's step round-off swamps every value (the warning box); re-estimated at
    # better steps the gradient is right, and the engine's message says so.
    at = _open({"shape": "140x120", "dtype": "float32", "scheme": "forward", "eps": "1e-03"})
    assert not _problems(at)
    captions = [shown(c.value) for c in at.caption]
    said = [c for c in captions if c.startswith("Autograd and the finite differences agree")]
    assert said and "re-estimated" in said[0] and "Hint" not in said[0]
    assert any(m.value == "PASS" for m in at.metric)
    assert any("round-off" in shown(e.value) for e in at.warning)  # the hint's words, in the box


# ------------------------------------------------------------- a model, layer by layer

def _layer_table(at: AppTest):
    """The per-module table: (module, checked over, verdict) per row."""
    (frame,) = [d.value for d in at.dataframe]
    frame = getattr(frame, "data", frame)  # a Styler holds its DataFrame in .data
    return list(zip(frame["module"], frame["checked over"], frame["verdict"], strict=True))


def _wrong_layer_query(**changes) -> dict:
    from gradlab.teaching.presets import preset, url_query

    return {**url_query(preset("gradcheck", "wrong_layer")), **changes}


def test_the_wrong_layer_preset_names_module_3_and_only_module_3_fails():
    # The stack is linear:16, tanh, layernorm, wrong_swish, linear:8, linear:1: nn.Sequential names
    # its modules 0..5, so the wrong swish is module 3. Its backward returns sigmoid(x) where
    # d(x·sigmoid(x))/dx = s + x·s·(1 − s): they differ wherever x ≠ 0, so its input check must fail;
    # every other layer is stock PyTorch, whose gradients are right.
    from gradlab.layers.vocabulary import parse_stack
    from gradlab.labs.gradcheck import MODEL

    query = _wrong_layer_query()
    assert query["check"] == MODEL
    names = [name for name, _ in parse_stack(query["stack"])]
    assert names.index("wrong_swish") == 3 and len(names) == 6
    at = _open(query)
    assert not at.exception
    answer = dict(reading_order(at.main))[ANSWER]
    (box,) = answer.children.values()
    text = shown(box.value)
    assert box.type == "error" and text.startswith("Module 3 (WrongSwish, a custom autograd.Function): wrong "
                                                   "gradient with respect to its input"), text
    assert "every other module passes. At x[" in text
    # why it is wrong, in the table's own numbers: backward's value against the finite difference's
    (frame,) = [getattr(d.value, "data", d.value) for d in at.dataframe]
    row = frame[frame["module"] == "3"].iloc[0]
    assert (f"its backward gives {row['autograd']:.4g} where the finite difference gives "
            f"{row['numeric']:.4g}") in text, text
    assert abs(row["autograd"] - row["numeric"]) > 10 * row["tolerance"]
    # the heading asks the view's question, not the float32 function check's
    from gradlab.labs.gradcheck import LAYER_QUESTION, QUESTION

    headings = [shown(m.value).replace("**", "") for m in at.markdown if "The question:" in m.value]
    assert headings == [f"The question: {LAYER_QUESTION}"] and QUESTION not in headings[0], headings
    # every bar of the chart named by its module's path and class
    import json

    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert "3 WrongSwish · inputs" in chart["layout"]["yaxis"]["ticktext"]
    assert len(chart["layout"]["yaxis"]["ticktext"]) == len(frame)
    rows = _layer_table(at)
    assert {m for m, _, v in rows if v == "fail"} == {"3"}
    assert [(m, over) for m, over, v in rows if m == "3"] == [("3", "inputs")]  # it has no parameters
    assert all(v == "pass" for m, _, v in rows if m != "3")
    assert {m for m, _, _ in rows} == {"0", "1", "2", "3", "4", "5"}
    # the whole-model check, beside the chart, fails too, and at a parameter of module 0: the chain rule
    # carries module 3's wrong backward to every parameter before it
    whole = [shown(e.value) for e in at.error if e is not box]
    assert len(whole) == 1 and whole[0].startswith("FAIL") and "0.weight" in whole[0], whole
    # the Python call that reproduces the view, drawn once its expander is opened
    assert not [c for c in at.code if "check_layers" in c.value]
    at.session_state[CODE_KEY] = True
    at.run()
    (code,) = [c.value for c in at.code if "check_layers" in c.value]
    assert "build_model('linear:16, tanh, layernorm, wrong_swish, linear:8, linear:1', (4, 8), 'float32'" in code


def test_the_answer_and_the_chart_come_right_after_the_model_controls():
    at = _open(_wrong_layer_query())
    order = [kind for kind, _ in reading_order(at.main)]
    last_control = max(i for i, kind in enumerate(order) if kind in WIDGETS)
    assert order[last_control + 1:last_control + 3] == [ANSWER, CHART]
    chart = dict(reading_order(at.main))[CHART]
    assert "plotly_chart" in [c.type for c in chart.children.values()]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("position", range(6))
def test_the_wrong_layer_is_named_in_every_position_of_six(position, dtype):
    six = ["linear:16", "tanh", "layernorm", "linear:8", "gelu", "linear:1"]
    stack = ", ".join(six[:position] + ["wrong_swish"] + six[position + 1:])
    at = _open(_wrong_layer_query(stack=stack, dtype=dtype))
    assert not at.exception
    assert {m for m, _, v in _layer_table(at) if v == "fail"} == {str(position)}
    (box,) = dict(reading_order(at.main))[ANSWER].children.values()
    assert shown(box.value).startswith(f"Module {position} (WrongSwish, a custom autograd.Function): wrong")


def test_the_same_model_in_float64_still_names_module_3():
    at = _open(_wrong_layer_query(dtype="float64"))
    assert not at.exception
    assert {m for m, _, v in _layer_table(at) if v == "fail"} == {"3"}


def test_a_correct_model_and_a_float16_transformer_block_never_fail():
    from gradlab.teaching.presets import preset, url_query

    for key in ("correct_model", "float16_block"):
        at = _open(url_query(preset("gradcheck", key)))
        assert not at.exception and not at.error, key
        assert all(v in ("pass", "inconclusive", "skipped") for _, _, v in _layer_table(at)), key
        if key == "float16_block":
            assert preset("gradcheck", key).values["dtype"] == "float16"
            assert "attention" in preset("gradcheck", key).values["stack"]


def test_the_model_controls_come_from_the_url():
    at = _open(_wrong_layer_query(stack="linear:4, swish", input="3x5", dtype="float64", mode="sampled",
                                  seed="7", calls="all"))
    assert not at.exception and not at.error
    assert at.selectbox(key="check").value == "a model, layer by layer"
    assert at.text_input(key="stack").value == "linear:4, swish"
    assert at.text_input(key="input").value == "3x5"
    assert (at.selectbox(key="dtype").value, at.selectbox(key="mode").value) == ("float64", "sampled")
    assert (at.number_input(key="seed").value, at.selectbox(key="calls").value) == (7, "all")
    assert {m for m, _, _ in _layer_table(at)} == {"0", "1"}


def test_a_loss_layer_and_a_reduction_come_from_the_url():
    at = _open(_wrong_layer_query(stack="linear:4, expr:x*tanh(x)", input="3x5", dtype="float64",
                                  model_loss="mse", reduction="mean"))
    assert not at.exception and not at.error
    assert (at.selectbox(key="model_loss").value, at.selectbox(key="reduction").value) == ("mse", "mean")
    rows = _layer_table(at)
    # the squared error is the last module (2), checked over its input like any layer; all pass
    assert {m for m, _, _ in rows} == {"0", "1", "2"} and all(v == "pass" for _, _, v in rows)
    at.session_state[CODE_KEY] = True
    at.run()
    (code,) = [c.value for c in at.code if "check_layers" in c.value]
    assert "loss='mse'" in code and "reduction='mean'" in code


def test_the_add_a_layer_buttons_append_to_the_stack():
    from gradlab.layers.vocabulary import LAYERS

    at = _open(_wrong_layer_query(stack="linear:4"))
    assert {b.key for b in at.button if (b.key or "").startswith("add_")} == {f"add_{n}" for n in LAYERS}
    at.button(key="add_tanh").click().run()
    at.button(key="add_linear").click().run()
    assert at.text_input(key="stack").value == "linear:4, tanh, linear:8"
    assert {m for m, _, _ in _layer_table(at)} == {"0", "1", "2"}


def test_a_bad_stack_or_shape_shows_one_sentence_not_a_traceback():
    for changes, words in (({"stack": "linear:4, banana"}, "Unknown layer 'banana'"),
                           ({"stack": "linear"}, "linear needs a size"),
                           ({"input": "4x0"}, "each at least 1"),
                           ({"stack": "attention:2", "input": "4x8"}, "at least 3 dimensions")):
        at = _open(_wrong_layer_query(**changes))
        assert not at.exception, changes
        assert len(at.error) == 1 and words in shown(at.error[0].value), (changes, [e.value for e in at.error])
        assert "Traceback" not in shown(at.error[0].value) and not at.dataframe


def test_a_function_preset_switches_back_from_the_model_view():
    at = _open(_wrong_layer_query())
    at.button(key="preset_float32_check_fails").click().run()
    assert not at.exception
    assert at.selectbox(key="check").value == "a function"
    assert at.text_input(key="shape").value == "140x120"
    assert any("round-off" in shown(e.value) for e in at.warning)


@pytest.mark.parametrize("column, position", [("state", 1), ("verdict", 3)])
def test_the_tables_colour_each_state_cell_in_its_state_s_colour_and_nothing_else(column, position):
    """What st.dataframe sends for the values and layer tables (Streamlit's own marshalling of the
    cheaper Styler): every state cell, and only those, in its state's colour, and each text column's
    displayed text its own value (only the columns up to the state's are rendered by pandas)."""
    import re

    import pandas as pd
    import pyarrow as pa
    from streamlit.elements.lib.pandas_styler_utils import marshall_styler
    from streamlit.proto.ArrowData_pb2 import ArrowData

    from gradlab.check import STATES
    from gradlab.labs.gradcheck import state_styler

    states = ["pass", "fail", "inconclusive", "not_differentiable"] * 3
    frame = pd.DataFrame({"name": [f"x[{i}]" for i in range(12)], "kind": ["Linear"] * 12, "side": ["inputs"] * 12})
    frame.insert(position, column, states)
    frame["value"], frame["note"] = [float(i) / 7 for i in range(12)], ["" if i % 2 else "a note" for i in range(12)]
    proto = ArrowData()
    marshall_styler(proto, state_styler(frame, column, lambda s: f"color: {STATES[s].colour}; font-weight: bold"),
                    "uuid")
    styled = {}
    for selectors, props in re.findall(r"([^{}]+)\{([^{}]*)\}", proto.styler.styles):
        for row, col in re.findall(r"row(\d+)_col(\d+)", selectors):
            styled[int(row), int(col)] = props
    assert set(styled) == {(r, position) for r in range(12)}
    for (row, _), props in styled.items():
        assert f"color: {STATES[states[row]].colour}" in props and "font-weight: bold" in props
    shown_text = pa.ipc.open_stream(proto.styler.display_values).read_all().to_pandas()
    for text in ("name", "kind", "side", column, "note"):
        assert shown_text[text].tolist() == frame[text].tolist(), text


# ------------------------------------------------------------- each preset's numbers agree

import json  # noqa: E402
import re  # noqa: E402

import numpy as np  # noqa: E402

from gradlab.numerics.dtypes import facts  # noqa: E402
from gradlab.teaching.presets import presets_for, url_query  # noqa: E402

_N = r"([\d.]+(?:e[-+]?\d+)?)"


def _read(at: AppTest, *kinds: str) -> list[str]:
    return [shown(e.value) for kind in kinds for e in getattr(at, kind)]


def _close(printed: str, value: float, digits: int = 3) -> bool:
    """``printed`` is ``value`` to ``digits`` significant digits (as a page rounds it)."""
    return float(printed) == float(f"{value:.{digits - 1}e}") or abs(float(printed) - value) <= abs(value) * 10 ** (1 - digits)


_FUNCTION = [p for p in presets_for("gradcheck") if p.values.get("check") == "a function"]
_LAYERS = [p for p in presets_for("gradcheck") if p.values.get("check") != "a function"]


@pytest.mark.parametrize("preset", _FUNCTION, ids=lambda p: p.key)
def test_each_function_presets_numbers_agree_across_the_screen(preset):
    """issue 37: the step, machine epsilon, ρ and rtol say the same in the metrics, the diagnosis,
    the chart and the tolerance line; machine epsilon is numpy's; the count of values agrees with
    the verdict; "re-estimated ... before they agreed" only where the check's own step did not
    agree (per_element said it under a passing own step)."""
    at = _open(url_query(preset))
    assert not _problems(at)
    eps = float(preset.values["eps"])
    # the differences' dtype: float64 where the preset asks for float64 differences
    dtype = "float64" if preset.values.get("numeric64") else preset.values["dtype"]
    metrics = {m.label: m.value for m in at.metric}
    assert _close(metrics[f"machine eps ({dtype})"], float(np.finfo(dtype).eps))
    assert float(metrics[f"step h ({preset.values['scheme']})"]) == eps
    samples = int(preset.values["samples"])
    assert metrics[f"verdict ({samples} pass)"] == "PASS"
    boxes = _read(at, "success", "warning", "error")
    answer, diagnosis = boxes[0], boxes[1]
    if "ρ = h·" in diagnosis:  # a truncation diagnosis speaks of the step, not of ρ
        rho, times, machine = re.search(rf"ρ = h·\|dL/dx_i\|/\|L\| ≈ {_N} .*?, {_N}× {dtype}'s machine epsilon "
                                        rf"\({_N}\)", diagnosis).groups()
        assert _close(rho, float(metrics[next(k for k in metrics if k.startswith("ρ"))]), 2)
        assert _close(machine, float(np.finfo(dtype).eps)) and _close(times, float(rho) / float(machine), 2)
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    notes = [a["text"] for a in figure["layout"]["annotations"]]
    (chart_rtol,) = [re.match(rf"rtol = {_N}", n).group(1) for n in notes if n.startswith("rtol = ")]
    (tolerance,) = [c for c in _read(at, "caption") if c.startswith("tolerance = atol + rtol")]
    assert f"rtol = {chart_rtol} " in tolerance, (chart_rtol, tolerance)
    assert f"this check: eps = {eps:g}" in notes, notes
    captions = " ".join(_read(at, "caption"))
    own_step_agrees = "round-off swamps" not in diagnosis and "truncation" not in diagnosis.split(".")[0]
    assert ("before they agreed" in captions) == (not own_step_agrees and "re-estimated at steps" in captions), captions
    assert f"{samples} sampled elements" in answer, answer


@pytest.mark.parametrize("preset", _LAYERS, ids=lambda p: p.key)
def test_each_layer_presets_answer_names_what_its_bars_show(preset):
    """issue 37: the module the answer names is the one failing bar ("every other module passes"),
    a pass counts the bars it names, and "N times the tolerance apart" is the printed backward and
    finite difference's distance over the dtype's tolerance atol + rtol·|fd|."""
    at = _open(url_query(preset))
    assert not _problems(at)
    answer = _read(at, "success", "error")[0]
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    bars = {t["name"]: list(t["y"]) for t in figure["data"]}
    if "fail" not in bars:
        checks, modules = re.search(r"(\d+) checks of (\d+) modules pass", answer).groups()
        assert len(bars["pass"]) == int(checks), (bars, answer)
        return
    index, name = re.search(r"Module (\d+) \((\w+),", answer).groups()
    assert "every other module passes" in answer
    assert {str(label).split(" · ")[0] for label in bars["fail"]} == {f"{index} {name}"}, bars["fail"]
    backward, fd, apart = re.search(rf"its backward gives {_N} where the finite difference gives {_N} ± \S+: "
                                    r"([\d,]+) times the tolerance apart", answer).groups()
    row = facts(preset.values["dtype"])
    ratio = abs(float(backward) - float(fd)) / (row.atol + row.rtol * abs(float(fd)))
    assert abs(ratio / float(apart.replace(",", "")) - 1) < 0.02, (ratio, apart)  # 3 printed digits each
