"""The Grid page in AppTest: answer and main chart first after the controls, the shared digits
marked, presets and URLs open their view, bad input gives one sentence."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_text import shown
from gradlab.teaching.presets import presets_for, url_query

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "grid.py")
TIMEOUT_S = 120


def _open(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT_S)
    if query:
        at.query_params.update(query)
    return at.run()


def _order(node, out: list[str]) -> list[str]:
    """Element kinds (and container keys) in the order the page draws them."""
    for child in getattr(node, "children", {}).values():
        key = getattr(getattr(child, "proto", None), "id", "") or ""
        out.append(f"{child.type}:{key}")
        _order(child, out)
    return out


def test_answer_and_chart_come_first_after_the_controls():
    at = _open()
    assert not at.exception
    kinds = _order(at.main, [])
    answer = next(i for i, k in enumerate(kinds) if k.endswith("gl-answer"))
    chart = next(i for i, k in enumerate(kinds) if k.endswith("gl-main-chart"))
    assert kinds[answer + 1] == "info:" and kinds[chart + 1].startswith("plotly_chart")
    assert answer + 2 == chart  # the chart right under the answer
    controls = {"flex_container", "title", "space", "popover", "button", "selectbox", "number_input",
                "text_input", "select_slider"}
    assert {k.split(":")[0] for k in kinds[:answer]} <= controls, kinds[:answer]  # only controls above
    first_text = next(i for i, k in enumerate(kinds) if k.startswith("markdown"))
    first_table = next(i for i, k in enumerate(kinds) if k.startswith("dataframe"))
    assert chart < first_text < first_table
    assert "839 ulps above x" in shown(at.info[0].value)  # float32: 1e-4 / 2**-23 rounds to 839


def test_one_ulp_and_the_shared_digits_are_marked():
    at = _open({"h": "1e-07"})
    answer = shown(at.info[0].value)
    assert "1 ulp above x" in answer and "first 23 of 24 binary digits" in answer and "multiple of 0.5" in answer
    text = "\n".join(m.value for m in at.markdown)
    fx = str(np.float32(math.sin(1.0)))  # 0.84147096 (torch's float32 sin agrees here)
    assert fx.startswith("0.84147")
    assert ":orange-background[`0.84147`]" in text  # the five shared digits marked
    # 23 shared significand bits: sign, exponent and 22 of the 23 fraction bits marked, the last not
    marked = ":orange-background[`0`] :orange-background[`01111110`] :orange-background[`10101110`] " \
             ":orange-background[`11010101`] :orange-background[`010010`]"
    assert f"{marked}`0`" in text and f"{marked}`1`" in text


def test_no_step_and_the_8_bit_dtype():
    at = _open({"h": "1e-08"})
    assert shown(at.info[0].value).startswith("x + h rounds back to x in float32")
    at = _open({"dtype": "float8_e4m3fn (emulated)", "h": "1e-01"})
    assert not at.exception
    assert "0.125, not 0.1" in shown(at.info[0].value)


@pytest.mark.parametrize("query", [{"fn": "custom (type it)", "expr": "x +"},
                                   {"fn": "custom (type it)", "expr": "log(x)", "x": "-1"}])
def test_bad_input_gives_one_sentence_and_no_chart(query):
    at = _open(query)
    assert not at.exception and len(at.error) == 1
    assert len(at.get("plotly_chart")) == 0
    assert shown(at.error[0].value).count(". ") <= 2


def test_presets_open_their_view():
    for p in presets_for("grid"):
        at = _open(url_query(p))
        assert not at.exception
        for key, value in p.values.items():
            assert at.session_state[key] == value, (p.key, key)
        assert len(at.info) >= 1


def test_definitions_and_the_precision_table_are_on_the_page():
    at = _open()
    assert any(h.value == "Definitions" for h in at.subheader)
    table = at.dataframe[0].value
    assert len(table) == 6 and "u = 2^−p" in table.columns


def test_x_zero_in_float64_is_a_result_not_something_went_wrong():
    at = _open({"x": "0", "dtype": "float64"})
    assert not at.exception and len(at.error) == 0
    answer = shown(at.info[0].value)
    assert "keeps 53 binary digits" in answer  # f(0) = 0: nothing cancels, p = 53 bits


def test_the_step_is_labelled_in_ulps_of_x_and_counted_so():
    at = _open({"x": "0.75", "h": "1e+00"})
    assert not at.exception
    # the step 1.0 over ulp(0.75) = 2**-24 in float32 (the grid numbers up to 1.75 are 10,485,760)
    n = int(1.0 / float(np.spacing(np.float32(0.75))))
    assert n == 2 ** 24
    assert f"{n:,} ulps above x" in shown(at.info[0].value)
    assert any(f"= {n:,} ulps of x" in m.value for m in at.markdown)


def test_at_zero_in_float64_the_main_chart_has_finite_points():
    # ulp(0) = 2^-1074 in float64: x + h lies ~1e319 ulps away, past float64's range, so the
    # chart counts in a coarser unit and says so (it drew nothing but NaN and inf before).
    import math

    from gradlab.labs.grid.figures import grid_figure
    from gradlab.labs.grid.story import window_points
    from gradlab.labs.grid.representable import GridSettings, grid_difference

    r = grid_difference(GridSettings("float64", 0.0, 1e-4, "sin(x)"))
    fig = grid_figure(r, window_points(r))
    drawn = [v for t in fig.data if t.name == "x, x+h rounded" for v in (*t.x, *t.y)]
    assert drawn and all(math.isfinite(v) for v in drawn)
    assert "units" in fig.layout.xaxis.title.text


# ------------------------------------------------------------------ URLs that once spun the server

def _result_or_one_sentence(at: AppTest) -> str:
    """The answer sentence of a view that ended in a result, or the one sentence of its error."""
    assert not at.exception
    if at.error:
        assert len(at.error) == 1 and len(at.get("plotly_chart")) == 0
        text = shown(at.error[0].value)
        assert "Something went wrong" not in text and text.endswith("."), text
        return text
    assert len(at.get("plotly_chart")) == 2  # the main chart and the secant's slope against h
    return shown(at.info[0].value)


def test_sin_near_pi_ends_in_its_answer():
    """/grid?x=3.1415927&h=1e-06: 1e-6 / ulp(π in float32) = 1e-6 / 2^-22 = 4.19, so 4 ulps."""
    answer = _result_or_one_sentence(_open({"x": "3.1415927", "h": "1e-06"}))
    assert answer.startswith("x + h is 4 ulps above x")


def test_x_1e31_ends_in_its_answer():
    """/grid?x=1e31: ulp(1e31) in float32 is 2^79 = 6.04e23, far over 2h."""
    answer = _result_or_one_sentence(_open({"x": "1e31"}))
    assert answer.startswith("x + h rounds back to x in float32") and "6.04e+23" in answer


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("sign", [1, -1])
def test_each_dtype_s_largest_number_ends_in_a_result_or_one_sentence(dtype, sign):
    from gradlab.numerics.dtypes import facts

    largest = facts(dtype).max
    at = _open({"dtype": facts(dtype).label, "x": repr(sign * largest), "h": "1e+00"})
    _result_or_one_sentence(at)
    if largest <= 1e100:  # the x control's range: float64's largest falls back to the default x
        assert at.session_state["x"] == sign * largest


@pytest.mark.parametrize("h", ["1e-20", "1e+00", "1e-300", "1e+300", "5e-324", "0", "-1", "nan"])
def test_h_at_and_past_its_extremes_ends_in_a_result_or_one_sentence(h):
    _result_or_one_sentence(_open({"h": h}))


def test_the_default_function_is_named_sin_and_old_links_open_the_same_view():
    """The function box names sin(x) at x = 1; links written when its default was "custom (type
    it)" with sin(x) typed (no fn in the URL, or fn spelled out) open the same difference, and a
    link that typed another expression still opens that expression."""
    fresh = _open()
    assert fresh.selectbox(key="fn").value == "sin" and fresh.selectbox(key="fn").format_func("sin") == "sin(x)"
    expected = math.sin(float(np.float32(1.0)))
    views = {
        "default": fresh,
        "fn spelled out": _open({"fn": "custom (type it)", "expr": "sin(x)", "h": "1e-04"}),
        "expr only": _open({"expr": "sin(x)", "h": "1e-04"}),
        "h only": _open({"h": "1e-04"}),
    }
    answers = {name: shown(at.info[0].value) for name, at in views.items()}
    assert len(set(answers.values())) == 1, answers  # one view, whichever way it was linked
    assert "839 ulps above x" in answers["default"]
    assert f"{expected:.4g}"[:5] in "\n".join(m.value for m in fresh.markdown)  # f(x) = sin(1) in float32
    typed = _open({"expr": "x**2", "h": "1e-04"})
    assert typed.selectbox(key="fn").value == "custom" and "tangent's slope is 2" in shown(typed.info[0].value)


def test_ulp_is_defined_where_the_answer_first_says_it():
    at = _open()
    answer = at.info[0].value
    assert '839 [ulps](#definitions "ulp: unit in the last place: the gap between' in answer
    assert answer.count("](#definitions") == 1


def test_a_new_step_reuses_the_views_frames(monkeypatch):
    """Moving h (the slider's release, or the control) looks the step up in the view's frames:
    the 61 stops are computed once per view, not once per step."""
    import gradlab.ui.worker_calls as worker_calls

    calls = []
    real = worker_calls.run_limited  # what heavy() calls, looked up at each call (the page's cached
    # functions are made once per process and keep the heavy() of the run that made them)
    monkeypatch.setattr(worker_calls, "run_limited",
                        lambda fn, *a, **k: calls.append(fn.__name__) or real(fn, *a, **k))
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT_S)
    at.query_params.update({"x": "1.3125", "dtype": "float16", "h": "1e-03"})  # a view no other test opens
    at.run()
    assert "above x" in shown(at.info[0].value)
    at.select_slider(key="h").set_value(2e-3).run()
    assert not at.exception
    # float16 at 1.3125: ulp 2^-10; 2e-3 is 2.05 ulps, so x + h lands 2 ulps above x
    assert "2 ulps above x" in shown(at.info[0].value)
    assert calls == ["view"]  # one engine call, for the view


# ------------------------------------------------------------- each preset's numbers agree

import json  # noqa: E402
import re  # noqa: E402

_N = r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)"


def _to_digits(printed: str, value: float) -> bool:
    """``printed`` is ``value`` to the significant digits it shows."""
    digits = len(re.sub(r"^0\.0*|\.|e.*$", "", printed.lstrip("0.")) or "0")
    return float(printed) == float(f"{value:.{max(digits, 1) - 1}e}")


@pytest.mark.parametrize("preset", presets_for("grid"), ids=lambda p: p.key)
def test_each_presets_answer_facts_and_chart_say_the_same_numbers(preset):
    """issue 37: the answer, the list of facts under the bits and the chart's step readout say the
    same step taken, ulps, bits and slopes, each against numpy: the step taken is dtype(x + h) − x,
    its ulps that over numpy's spacing at x."""
    at = _open(url_query(preset))
    assert not at.exception
    v = preset.values
    dtype = {"float8_e4m3fn": None}.get(v["dtype"], v["dtype"])
    answer = shown(at.info[0].value)
    (facts,) = [shown(m.value).replace("**", "") for m in at.markdown if shown(m.value).startswith("- step taken")]
    if "no step" in answer or dtype is None:  # nothing moves (or an 8-bit grid numpy cannot hold)
        return
    x = np.array(v["x"], dtype=dtype)
    taken = float(np.array(x + np.array(v["h"], dtype=dtype), dtype=dtype)) - float(x)
    ulps = round(taken / float(np.spacing(x)))
    n, step = re.search(rf"x \+ h is ([\d,]+) ulps? above x: the step taken is {_N}", answer).groups()
    assert int(n.replace(",", "")) == ulps and _to_digits(step, taken), (answer, taken)
    exact_step, listed = re.search(rf"step taken \(x\+h\) − x: {_N} = ([\d,]+) ulps? of x", facts).groups()
    assert float(exact_step) == taken and int(listed.replace(",", "")) == ulps, facts
    agree, bits, kept, quantum, slope, tangent = re.search(
        rf"agree in their first (\d+) of (\d+) binary digits; their difference keeps (\d+) binary digits? .*?"
        rf"a multiple of {_N}: here {_N}, where the tangent's slope is {_N}", answer).groups()
    assert f"{agree} of {bits} bits" in facts and f"keeps {kept} significant bit{'s' if kept != '1' else ''}\n" in facts
    secant, d1, q = re.search(rf"secant \(f\(x\+h\) − f\(x\)\) / step: {_N}; tangent f′\(x\): {_N}\n- .*? = {_N}",
                              facts).groups()
    assert _to_digits(slope, float(secant)) and _to_digits(tangent, float(d1)) and _to_digits(quantum, float(q))
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    slider = figure["layout"]["sliders"][0]
    label = slider["steps"][slider["active"]]["label"]
    assert label == f"{v['h']:.0e}: step taken {step}, slope {slope}", (label, answer)
