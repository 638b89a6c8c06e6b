"""The Summed-loss page under app.py's navigation (AppTest) and its CLI, against mathematics:
the exact sum by math.fsum and fractions, ulp(L) by numpy.spacing, the quantum ulp(L)/h."""

from __future__ import annotations

import base64
import json
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from app_text import shown
from gradlab.check.lab.builtin_models import build_model_loss
from gradlab.check.lab.settings import CheckSettings
from gradlab.cli.main import main
from gradlab.labs.summed.loss import SUM_METHODS
from gradlab.teaching.presets import presets_for, url_query

APP = Path(__file__).resolve().parents[1] / "app.py"
PAGE = "pages/summed.py"


def _open(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    if query:
        at.query_params.update(query)
    at.switch_page(PAGE).run()
    return at


def _terms(shape=(140, 120), dtype=torch.float32) -> list[float]:
    """The loss's per-element squared errors, straight from the grad check's built-in model loss."""
    p = build_model_loss(CheckSettings(shape=shape, dtype=str(dtype).removeprefix("torch.")))
    return p.fn(p.x).detach().reshape(-1).to(torch.float64).tolist()


def _values(data) -> np.ndarray:
    """A figure's array as sent to the browser: a list, or Plotly's typed array (base64)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
    return np.asarray(data)


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]


@pytest.fixture(scope="module")
def page() -> AppTest:
    return _open()


def test_the_answer_and_the_chart_come_first_after_the_controls(page):
    assert not page.exception and not page.error
    top = list(page.main.children.values())
    keys = [getattr(c, "key", None) for c in top]
    answer_at, chart_at = keys.index("gl-answer"), keys.index("gl-main-chart")
    assert chart_at == answer_at + 1
    # Before the answer: the title, the question, the presets and one row of four controls.
    widgets = [type(w).__name__ for c in top[:answer_at] for w in getattr(c, "children", {}).values()]
    assert widgets.count("TextInput") == 1 and widgets.count("Selectbox") == 2
    (main,) = top[chart_at].get("plotly_chart")
    points = json.loads(main.proto.spec)["data"][-1]
    assert points["mode"] == "markers" and len(_values(points["x"])) == 40  # the check's differences
    ticks = json.loads(main.proto.spec)["layout"]["yaxis"]["ticktext"]
    assert {"-1.953", "0", "1.953"} <= set(ticks)  # the values the question printed, as the y axis
    charts = [json.loads(c.proto.spec) for c in page.get("plotly_chart")]
    (bars,) = [c["data"][0] for c in charts if c["data"][0]["type"] == "bar"]
    assert len(bars["x"]) == len(SUM_METHODS)
    (link,) = page.get("page_link")
    assert link.proto.page == "gradcheck"  # the question's own check: the same loss, step and dtype
    assert {"shape=140x120", "reduction=sum", "dtype=float32", "eps=1e-03"} <= set(link.proto.query_string.split("&"))
    assert "2^29 times finer" in " ".join(m.value for m in page.markdown)  # float32's eps / float64's


def test_the_answer_s_numbers_are_the_float32_grid_of_the_exact_sum(page):
    (box,) = [c for c in page.main.children.values() if getattr(c, "key", None) == "gl-answer"]
    (answer,) = box.children.values()
    sentence, unit = answer.value.split("  \n:small[")  # the sentence, then its unit defined in its box
    assert shown(unit).startswith("ulp: unit in the last place")
    text = shown(sentence)
    assert answer.type == "warning" and "round-off" in text
    terms = _terms()
    exact = math.fsum(terms)  # the exact sum, rounded once to float64
    assert Fraction(exact) - sum(map(Fraction, terms)) < Fraction(1, 2 ** 30)
    spacing = float(np.spacing(np.float32(exact)))  # ulp(L) in float32
    assert spacing == 2.0 ** -9
    gradient = float(np.median(np.sqrt(terms)))  # (x+1)/2 - t: |dL/dx_i| = sqrt(term_i) for mse sum
    wanted = [round(exact, 2), float(f"{spacing:.3g}"), 0.001, float(f"{spacing / 1e-3:.3g}"),
              float(f"{gradient:.1g}")]
    assert wanted == pytest.approx([n for n in _numbers(text) if n not in (32,)][:5], rel=1e-12)
    assert "1.95" in text and "25229.58" in text


def test_every_preset_opens_without_an_error():
    for p in presets_for("summed"):
        at = _open(url_query(p))
        assert not at.exception and not at.error, p.key
        assert at.session_state["dtype"] == p.values["dtype"]


def test_a_bad_shape_gives_a_sentence_not_a_traceback():
    at = _open({"shape": "0x5"})
    assert not at.exception
    assert at.error and "shape" in at.error[0].value


def test_a_loss_that_overflows_float16_is_a_warning_with_its_numbers_not_an_error():
    # The load test's class found it: ~3e5 summed in float16 (largest value 65504) raised.
    at = _open({"shape": "400x500", "dtype": "float16"})
    assert not at.exception and not at.error
    answer = " ".join(w.value for w in at.warning).replace("\\", "")  # markdown_literal's escapes
    assert "beyond float16's largest value, 65504" in answer
    assert "torch.sum" in answer and "inf" in answer


def test_an_emulated_dtype_in_the_url_falls_back_to_the_default():
    at = _open({"dtype": "float8_e4m3fn (emulated)"})
    assert not at.exception and not at.error
    assert at.session_state["dtype"] == "float32"


def test_the_check_s_differences_are_whole_multiples_of_the_quantum():
    from gradlab.labs.summed.differences import sampled_differences
    from gradlab.labs.summed.loss import SummedLossSettings

    table = sampled_differences(SummedLossSettings())
    quantum = float(np.spacing(np.float32(math.fsum(_terms())))) / 1e-3  # ulp(L) / h
    k = np.round(table["difference"] / quantum)
    assert np.allclose(table["difference"], k * quantum, rtol=2 ** -22, atol=0)
    assert (k == table["k"]).all() and (k == 0).sum() > len(k) / 2  # most steps are rounded away
    assert np.median(np.abs(table["gradient"])) > quantum / 4  # yet the gradient is not small


# ------------------------------------------------------------------ the CLI


def test_cli_json_against_the_exact_sum(capsys):
    assert main(["sum", "--shape", "30x20", "--dtype", "float32", "--reduction", "mean", "--h", "1e-2",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    terms = _terms((30, 20))
    exact = sum(map(Fraction, terms)) / 600
    assert Fraction(*map(int, data["exact_fraction"].split("/"))) == exact
    assert data["ulp"] == float(np.spacing(np.float32(float(exact))))
    assert data["quantum"] == pytest.approx(data["ulp"] / 1e-2, rel=1e-15)
    assert [r["method"] for r in data["rows"]] == [m.name for m in SUM_METHODS]
    rows = data["differences"]
    assert len(rows) == 40 and all(0 <= r["element"] < 600 for r in rows)
    for r in rows:  # the check's values: whole numbers of ulp(L), divided by h (rounded once)
        assert r["difference"] == pytest.approx(r["k"] * data["quantum"], rel=2 ** -22, abs=0)


def test_cli_table_prints_the_questions_quantum(capsys):
    assert main(["sum", "--shape", "140x120", "--dtype", "float32", "--reduction", "sum", "--h", "1e-3"]) == 0
    out = capsys.readouterr().out
    assert "1.95312" in out and "naive loop" in out  # 2**-9 / 1e-3
    assert re.search(r"the check prints at 40 elements: .*\d+ × 0, \d+ × 1\.95312", out)


@pytest.mark.parametrize("argv", [["--shape", "0x3"], ["--h", "0"], ["--reduction", "none"],
                                  ["--dtype", "float8_e4m3fn"], ["--shape", "1000x1000"]])
def test_cli_errors_are_one_line_and_exit_2(argv, capsys):
    try:
        status = main(["sum", *argv])
    except SystemExit as stop:  # argparse's own usage errors
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: ") and err.count("\n") == 1


# ------------------------------------------------------------- each preset's numbers agree


def _half_digit(printed: str) -> float:
    """Half a unit in the last digit ``printed`` shows ('25229.58' -> 0.005, '1.6e+04' -> 500)."""
    mantissa, _, exponent = printed.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def _near(printed: str, value: float) -> bool:
    """``printed`` is ``value`` to the digits it shows (and to the one before, rounded up)."""
    return abs(float(printed) - value) <= _half_digit(printed) * (1 + 1e-9)


_NUMBER = r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)"


def _spacing(x: float, dtype: str) -> float:
    """The gap above x rounded to ``dtype``: 2**e times its eps (torch.finfo), e the binade of the
    rounded x; numpy's spacing where numpy has the dtype (bfloat16 it has not)."""
    rounded = abs(float(torch.tensor(x, dtype=torch.float64).to(getattr(torch, dtype))))
    info = torch.finfo(getattr(torch, dtype))
    gap = max(2.0 ** math.floor(math.log2(rounded)) * info.eps, info.smallest_normal * info.eps)
    if dtype != "bfloat16":
        assert gap == float(np.spacing(np.array(x, dtype=dtype))), (x, dtype)
    return gap


@pytest.mark.parametrize("preset", presets_for("summed"), ids=lambda p: p.key)
def test_each_presets_answer_metrics_and_charts_say_the_same_numbers(preset):
    """issue 37: the answer's L is a value the dtype holds (float16 printed the exact 25229.96 as
    "L held to steps of 16"); its ulp, quantum, step and gradient are the metrics' and the charts',
    each to the digits it shows, and the ulp is numpy's spacing at the exact L."""
    at = _open(url_query(preset))
    dtype, h = preset.values["dtype"], float(preset.values["h"])
    answer = " ".join(w.value for w in (*at.warning, *at.info, *at.success)).replace("\\", "")
    loss, exactly, ulp, step, quantum, gradient = re.search(
        rf"L = {_NUMBER}(?: \(exactly {_NUMBER}\))? is held to steps of {_NUMBER} \(one ulp\); a forward "
        rf"difference at h = {_NUMBER} can only move in steps of {_NUMBER} \(ulp\(L\)/h\), while each "
        rf"gradient element is about {_NUMBER}", answer).groups()
    metrics = {m.label: m.value for m in at.metric}
    exact = float(metrics["exact L"])
    grid = _spacing(exact, dtype)  # the dtype's ulp at the exact L
    # the loss on the dtype's grid; the exact value the metric's
    assert abs(float(loss) / grid - round(float(loss) / grid)) * grid <= _half_digit(loss), (loss, grid)
    assert _near(exactly or loss, exact), (loss, exactly, exact)  # "(exactly …)" where the loss's digits differ
    for printed in (ulp, metrics[f"ulp(L) in {dtype}"]):
        assert _near(printed, grid), (printed, grid)
    for printed in (quantum, metrics["quantum ulp(L)/h"]):
        assert _near(printed, grid / h), (printed, grid / h)
    assert float(step) == h and _near(gradient, float(metrics["|dL/dxᵢ| (median)"])), (gradient, metrics)
    check, bars = (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
    assert check["layout"]["title"]["text"] == f"What the check prints at h = {step}"
    (lines,) = [t["name"] for t in check["data"] if t["name"].startswith("k · ")]
    assert _near(lines.removeprefix("k · "), grid / h), lines
    title = bars["layout"]["xaxis"]["title"]["text"]
    assert re.match(rf"exact L = {_NUMBER}, 1 ulp = {_NUMBER} \({dtype}\)", title), title
    shown_exact, shown_ulp = re.match(rf"exact L = {_NUMBER}, 1 ulp = {_NUMBER}", title).groups()
    assert _near(shown_exact, exact) and _near(shown_ulp, grid), title
