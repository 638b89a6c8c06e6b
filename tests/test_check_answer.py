"""The Grad check page's answer sentence, from real checks: right, wrong, a kink, a vacuous pass."""

from __future__ import annotations

import torch

from gradlab.check.api import gradcheck
from gradlab.check.running.detector import sight
from gradlab.check.lab.settings import CheckSettings, run_check
from gradlab.labs.gradcheck.answer import check_answer


class _WrongSin(torch.autograd.Function):
    """sin with a backward off by a factor 2: the gradient a check must call wrong."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * torch.cos(x) * grad


def test_a_wrong_backward_is_called_wrong_and_shown_as_an_error():
    x = torch.linspace(0.1, 1.0, 6, dtype=torch.float64)  # cos(x) > 0.5: 2cos vs cos differ by >= 0.5
    answer = check_answer(gradcheck(_WrongSin.apply, x, mode="full", taylor=False).summary)
    assert answer.level == "error"
    assert answer.text.startswith("The gradient looks wrong at input 0[")
    assert "6 of 6 elements disagree" in answer.text


def test_a_kink_is_named_not_differentiable():
    # relu at an exact 0: left slope 0, right slope 1
    x = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    answer = check_answer(gradcheck(torch.relu, x, mode="full", taylor=False).summary)
    assert answer.level == "warning"
    assert answer.text.startswith("Not differentiable at input 0[0]: 1 of 3 elements sit on a kink")


def test_a_gradient_below_atol_passes_but_is_said_to_prove_little():
    # d/dx (1e-12·x) = 1e-12, far below float64's atol: any gradient near 0 would pass
    x = torch.linspace(1.0, 2.0, 4, dtype=torch.float64)
    answer = check_answer(gradcheck(lambda t: 1e-12 * t, x, mode="full", taylor=False).summary)
    assert answer.level == "warning" and "proves little" in answer.text and "atol" in answer.text


def test_the_questions_check_is_right_and_its_hand_written_version_fails_on_round_off():
    # float32, forward, eps 1e-3 on a 16,800-element sum: rho ~ 4e-8, below float32's eps
    s = CheckSettings(model="affine", shape=(140, 120), dtype="float32", scheme="forward", eps=1e-3,
                      mode="sampled")
    answer = check_answer(run_check(s).summary)
    assert answer.level == "success"
    assert answer.text.startswith("The gradient is right: all 5 sampled elements agree with autograd once")
    assert answer.text.endswith("A hand-written check that stops at this step, eps = 0.001, says FAIL "
                                "because round-off swamps "
                                "that step.")


# ------------------------------------------- the presets: no heading contradicts a line below it

import math  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from gradlab.check.lab.settings import parse_shape  # noqa: E402
from gradlab.labs.gradcheck.answer import QUESTION  # noqa: E402
from gradlab.teaching.presets import preset, presets_for  # noqa: E402

_LEVEL = {"pass": "success", "fail": "error", "inconclusive": "warning", "not_differentiable": "warning"}


def _settings(values) -> CheckSettings:
    """A preset's widget values as the page turns them into settings."""
    return CheckSettings(model=values["model"], shape=parse_shape(values["shape"]), loss=values["loss"],
                         reduction=values["reduction"], dtype=values["dtype"], scheme=values["scheme"],
                         eps=float(values["eps"]), mode=values["mode"], samples=int(values["samples"]),
                         seed=int(values["seed"]), numeric_float64=bool(values["numeric64"]))


_RUNS: dict[str, object] = {}


def _run(key: str):
    if key not in _RUNS:
        _RUNS[key] = run_check(_settings(preset("gradcheck", key).values))
    return _RUNS[key]


#: The page's function-check presets (its model presets check layers: tests/test_page_gradcheck.py).
FUNCTION_PRESETS = [p.key for p in presets_for("gradcheck") if "stack" not in p.values]


@pytest.mark.parametrize("key", FUNCTION_PRESETS)
def test_no_preset_answer_contradicts_its_own_lines(key):
    """The answer's level is GradLab's verdict; whatever it says a hand-written check concludes is
    what that check concludes (the page's FAIL/PASS line); and the page's question, the heading
    above every preset, claims of a dtype's check only what that dtype's preset shows."""
    result = _run(key)
    s = result.summary
    answer = check_answer(s, result.columns)
    assert answer.level == ("warning" if s.diagnosis.kind == "vacuous" else _LEVEL[s.verdict])
    said = re.findall(r"says (FAIL|PASS)", answer.text)
    assert all(v.lower() == s.fixed_step_verdict for v in said), (answer.text, s.fixed_step_verdict)
    if s.fixed_step_verdict != s.verdict:
        assert said, "a hand-written FAIL under a PASS must be explained in the answer"
    # The heading speaks of the question's check (float32_check_fails) in one dtype or another.
    values, question = dict(preset("gradcheck", key).values), preset("gradcheck", "float32_check_fails").values
    claims = dict(re.findall(r"(float\d+) (?:grad check )?(fails|passes|matches)", QUESTION))
    if {k: v for k, v in values.items() if k != "dtype"} == {k: v for k, v in question.items() if k != "dtype"}:
        claim = claims.get(values["dtype"])
        assert claim is not None, f"the heading says nothing of {values['dtype']}"
        if claim == "passes":
            assert s.fixed_step_verdict == "pass", f"the heading says {values['dtype']} passes; its check says FAIL"
        if claim == "fails":
            assert s.fixed_step_verdict == "fail"
        if claim == "matches":  # to 3–4 digits: the ratios finite difference / autograd
            deviations = np.abs(result.columns["numeric"] / result.columns["autograd"] - 1)
            assert np.all((deviations < 10**-2.5) & (deviations > 0)), deviations


def test_the_float64_preset_shows_the_questions_ratios_and_names_truncation():
    # L = sum(((x+1)/2 - t)^2): d2L/dx_i^2 = 2 (1/2)^2 = 1/2 for every element, and L is quadratic in
    # x_i, so the forward difference is exactly g + h f''/2 = g + 1e-3 / 4: every value 2.5e-4 high.
    result = _run("float64_check")
    c = result.columns
    ratios = c["numeric"] / c["autograd"]
    # ... to within the round-off of a difference of L (|L| ~ 2.5e4) at h = 1e-3: 2u|L|/h.
    roundoff = 2 * 2.0**-53 * abs(result.summary.loss) / 1e-3
    np.testing.assert_allclose(c["numeric"] - c["autograd"], 2.5e-4, rtol=0, atol=roundoff)
    text = check_answer(result.summary, c).text
    assert f"{ratios.min():.4f}–{ratios.max():.4f}" in text
    digits = sorted({round(-math.log10(abs(r - 1))) for r in ratios})
    assert f"agreeing to {digits[0]}–{digits[-1]} digits" in text or f"agreeing to {digits[0]} digits" in text
    # The heading's "matches to 3–4 digits" is what these ratios show (the question's were 3.2–3.4).
    assert 3 <= digits[0] and digits[-1] <= 4 and "float64 matches to 3–4 digits" in QUESTION
    assert "2.5e-4 each" in text and "truncation h·f″/2" in text and "not round-off" in text
    assert "says FAIL" in text and "rtol = 1e-05" in text and "all 5 sampled elements agree" in text
    assert text.startswith("The gradient is right")  # GradLab's verdict, first
    assert "float64 passes" not in QUESTION


def test_the_page_shows_the_float64_presets_ratios_under_a_heading_that_does_not_say_it_passes():
    from streamlit.testing.v1 import AppTest

    from app_text import shown

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "pages" / "gradcheck.py"),
                           default_timeout=120).run()
    at.button(key="preset_float64_check").click().run()
    assert not at.exception
    heading = [shown(m.value) for m in at.markdown if m.value.startswith("**The question:**")]
    assert heading and "passes" not in heading[0] and "float64 matches to 3–4 digits" in heading[0]
    (answer,) = [shown(b.value) for b in at.success if b.value.startswith("The gradient is right")]
    table = at.dataframe[0].value
    frame = table.data if hasattr(table, "data") else table
    ratios = frame["numeric"].to_numpy() / frame["autograd"].to_numpy()
    assert f"{ratios.min():.4f}–{ratios.max():.4f}" in answer and "truncation" in answer
    lines = " ".join(shown(m.value) for m in at.markdown).replace("**", "")
    assert "A hand-written check" in lines and "says FAIL" in lines and "GradLab says PASS" in lines


def test_a_large_float64_pass_on_the_dense_directions_says_what_it_rests_on():
    # the question at 140x120 in float64: 16,800 elements, passed on the two dense directions
    # (gradlab.check.running.detector), whose steps are their own: no "at eps = <the check's step>"
    summary = run_check(CheckSettings(dtype="float64")).summary
    answer = check_answer(summary)
    assert summary.mode == "dense" and answer.level == "success"
    assert answer.text.startswith("The gradient is right: two dense random directions, each over every element, "
                                  "show no element 10 tolerances off"), answer.text
    assert "eps =" not in answer.text


def test_a_large_float32_pass_says_how_many_tolerances_its_directions_can_see():
    # the float32 question: differenced on its float64 twin, autograd's float32 rounding summed over
    # 16,800 elements along each direction; the words name the tolerances its bound supports, which
    # the table's direction rows bear out (tolerance = seen/2 >= bound + rounding)
    result = run_check(CheckSettings(dtype="float32"))
    summary, t = result.summary, result.table
    seen = summary.seen_tolerances
    assert summary.mode == "dense" and 10 <= seen <= sight(16_800)
    assert f"show no element {seen:.0f} tolerances off" in check_answer(summary).text
    assert (t["error_bound"] + t["autograd_rounding"] <= t["best_tolerance"]).all()
