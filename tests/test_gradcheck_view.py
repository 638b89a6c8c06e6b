"""The Grad check lab's views (gradlab.labs.gradcheck): what its page lays out, checked against
arithmetic, numpy's float facts and the library's own check of the same model."""

from __future__ import annotations

import numpy as np
import pytest
from app_text import shown

from gradlab.check import CheckSettings, sweep_settings_for
from gradlab.labs.gradcheck import (DEFAULT_STEP, appended_layer, eps_sweep_view, function_settings,
                                    function_view, layer_settings, layer_view, marked)
from gradlab.labs.gradcheck.tables import TABLE_ROWS, VALUE_COLUMNS, state_colour

FLOAT64 = CheckSettings(shape=(6, 5), dtype="float64", scheme="central")


def test_a_clean_float64_check_is_right_and_its_numbers_are_numpys():
    v = function_view(FLOAT64)
    assert v.answer.level == "success" and v.answer.text.startswith("The gradient is right")
    numbers = {n.label: n.value for n in v.numbers}
    assert numbers["machine eps (float64)"] == f"{np.finfo(np.float64).eps:.2e}"
    assert float(numbers["step h (central)"]) == pytest.approx(v.step, rel=1e-2)
    # the default mode: one direction per block of 8 of the 30 elements, all of them passing
    assert numbers["verdict (4 pass)"] == "PASS"
    assert v.diagnosis is not None and v.texts["step verdicts"] == ""  # no hand-written FAIL to explain
    assert "heatmap" not in v.charts and "taylor" in v.charts


def test_a_full_check_shows_its_worst_hundred_values_and_a_heatmap_of_every_element():
    v = function_view(CheckSettings(shape=(12, 10), dtype="float64", mode="full"))
    table = v.tables["values"]
    assert len(table) == TABLE_ROWS
    assert v.texts["values shown"] == f"The {TABLE_ROWS} values furthest over their tolerance, of {12 * 10:,}."
    assert list(table.columns) == [c.name for c in VALUE_COLUMNS if c.name in table]
    assert set(table["state"]) == {"pass"}
    heatmap = v.charts["heatmap"].figure()
    assert np.asarray(heatmap.data[0].z).shape == (12, 10)


def test_the_float32_question_shows_what_a_hand_written_check_prints():
    # forward differences at eps = 1e-3 of a 16,800-term float32 sum: the step is lost to round-off,
    # so a hand-written check fails while the re-estimated values pass
    v = function_view(CheckSettings(shape=(140, 120), dtype="float32", scheme="forward", eps=1e-3,
                                    mode="sampled", samples=5))
    assert shown(v.texts["hand-written"]).startswith("A hand-written check at eps = 0.001")
    assert "says **FAIL**: 5 of 5 values" in shown(v.texts["step verdicts"])
    assert v.diagnosis.level == "warning" and "round-off swamps" in shown(v.diagnosis.text)


def test_the_eps_sweep_is_shared_by_checks_differing_in_mode_or_step_and_marks_each_step():
    full = CheckSettings(shape=(4, 5), mode="full", eps=1e-2)
    assert sweep_settings_for(full) == sweep_settings_for(CheckSettings(shape=(4, 5), eps=1e-4))
    sweep = eps_sweep_view(sweep_settings_for(full))
    fig = marked(sweep, 1e-3).charts["eps sweep"].figure()
    notes = [a.text for a in fig.layout.annotations]
    assert "this check: eps = 0.001" in notes and any(n.startswith("rtol = ") for n in notes)
    assert "step" not in sweep.charts["eps sweep"].kwargs  # marking makes a new view


def test_the_function_controls_make_the_settings_the_engine_checks():
    values = {"model": "expression", "expression": "tanh(x)", "shape": "3x4", "loss": "mse", "reduction": "none",
              "dtype": "float64", "scheme": "central", "eps": DEFAULT_STEP, "mode": "full", "samples": 2,
              "seed": 3, "numeric64": False, "grad_outputs": "random"}
    s = function_settings(values)
    assert (s.shape, s.eps, s.expression, s.grad_outputs, s.seed) == ((3, 4), None, "tanh(x)", "random", 3)
    assert function_settings({**values, "eps": "1e-04"}).eps == 1e-4


WRONG = "linear:4, tanh, wrong_swish, linear:1"


def test_the_layer_view_names_the_wrong_module_and_its_python_call_reproduces_it():
    settings = layer_settings(WRONG, "3x5", dtype="float64")
    v = layer_view(settings)
    # nn.Sequential names its modules 0..3: the wrong swish is module 2
    assert v.answer.level == "error" and v.answer.text.startswith("Module 2 (WrongSwish"), v.answer.text
    table = v.tables["modules"]
    assert set(table[table["verdict"] == "fail"]["module"]) == {"2"}
    assert v.whole.level == "error" and v.whole.text.startswith("FAIL: ")
    assert "module 2 reaches every parameter before it" in shown(v.texts["whole model"])
    assert set(v.charts["layers"].figure().layout.yaxis.ticktext) >= {"2 WrongSwish · inputs"}
    namespace: dict = {}
    exec(v.texts["python call"], namespace)  # our own lines, the stack a literal of this test
    assert f"Module {namespace['result'].answer}" == v.answer.text


def test_a_loss_layer_s_python_call_runs_too():
    v = layer_view(layer_settings("linear:4, tanh", "3x5", dtype="float64", loss="mse", reduction="mean"))
    namespace: dict = {}
    exec(v.texts["python call"], namespace)
    assert namespace["result"].passed and len(namespace["result"].table) == len(v.tables["modules"])


def test_the_add_a_layer_buttons_write_the_layer_at_the_stack_s_end():
    assert appended_layer("linear:4, ", "tanh") == "linear:4, tanh"
    assert appended_layer("linear:4", "linear") == "linear:4, linear:8"
    assert appended_layer(" ", "attention") == "attention:2"


def test_each_state_has_its_colour_and_a_module_that_could_not_run_none():
    from gradlab.check import STATES

    assert {s: state_colour(s) for s in STATES} == {
        s: f"color: {row.colour}; font-weight: bold" for s, row in STATES.items()}
    assert state_colour("skipped") == ""


def test_the_views_are_worker_entries_with_the_check_s_limits_and_forecast():
    assert function_view.worker_entry.limit_name == "LIMITS.full_check_seconds + LIMITS.request_seconds"
    assert layer_view.worker_entry.limit_fields == ("full_check_seconds", "request_seconds")
    assert eps_sweep_view.worker_entry.limit_fields == ("request_seconds",)
    # a full check of 65,536 elements evaluates fn once per element (both sides: twice), each of every element
    full = CheckSettings(shape=(256, 256), mode="full")
    assert function_view.forecast_seconds(full) >= 256 * 256 * 256 * 256 * 1e-8
