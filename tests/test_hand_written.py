"""What a hand-written check prints (gradlab.check.verdicts.hand_written) is what the question's code prints.

The oracle is the float32 grad-check question's own loop (tests/question_check.py): torch's
MSELoss in float32, one element moved by eps, the difference divided by eps. The same torch ops
on the same tensors in the same process: equal bit for bit by construction.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from gradlab.labs.gradcheck.answer import hand_written_words, printed
from gradlab.check.running.engine import check_gradient
from gradlab.check.lab.settings import CheckSettings, run_check
from gradlab.teaching.presets import preset

from question_check import page_data, questions_grad_check

QUESTION = CheckSettings(shape=(140, 120), dtype="float32", scheme="forward", eps=1e-3, mode="sampled",
                         samples=5, seed=0, reduction="sum")


def _elements(result) -> list[tuple[int, ...]]:
    return [tuple(i) for i in result.table["index"]]


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_the_hand_written_column_is_what_the_questions_code_prints(reduction):
    settings = CheckSettings(**{**vars(QUESTION), "reduction": reduction})
    result = run_check(settings)
    data, target = page_data((140, 120), torch.float32)
    expected = questions_grad_check(data, target, reduction, 1e-3, _elements(result))
    assert result.columns["hand_written"].tolist() == expected
    # the question's point: the loss of 16,800 elements moves in steps of ulp(L)/eps, so some
    # printed values are 0 where autograd's are not
    assert expected.count(0.0) >= 1 and all(result.columns["autograd"] != 0)


def test_the_gradcheck_preset_is_the_question():
    """The page's first preset is the settings this file checks against the question's code."""
    values = preset("gradcheck", "float32_check_fails").values
    assert (values["shape"], values["dtype"], values["scheme"], float(values["eps"]), values["mode"]) == \
        ("140x120", "float32", "forward", QUESTION.eps, "sampled")


def test_a_hand_written_check_in_float64_prints_what_gradlabs_own_difference_says_to_many_digits():
    result = run_check(CheckSettings(**{**vars(QUESTION), "dtype": "float64"}))
    hw, numeric = result.columns["hand_written"], result.columns["numeric"]
    # one rounding of L ~ 2.5e4 in float64 over eps: 2.5e4 · 2^-53 / 1e-3 ~ 3e-9 apart at most, times a few
    assert np.allclose(hw, numeric, rtol=0, atol=1e-7)


def test_the_step_verdict_a_hand_written_check_gives_counts_its_own_printed_values():
    result = run_check(QUESTION)
    s = result.summary
    hw, a = result.columns["hand_written"], result.columns["autograd"]
    over = np.abs(a - hw) > s.atol + s.rtol * np.abs(hw)
    assert s.fixed_step_failed == int(over.sum()) == 5  # 0 and ±1.95 against autograd's ±0.2..2.5


@pytest.mark.parametrize("change", [dict(mode="full", shape=(6, 5)), dict(numeric_float64=True),
                                    dict(reduction="none"), dict(scheme="complex"),
                                    dict(grad_outputs="random")])
def test_no_hand_written_column_where_no_hand_written_check_moves_one_element_of_a_loss(change):
    settings = CheckSettings(**{**vars(QUESTION), "shape": (6, 5), "dtype": "float64", **change})
    assert "hand_written" not in run_check(settings).columns


@pytest.mark.parametrize("scheme, formula", [("forward", lambda f, x, h: (f(x + h) - f(x)) / h),
                                             ("backward", lambda f, x, h: (f(x) - f(x - h)) / h),
                                             ("central", lambda f, x, h: (f(x + h) - f(x - h)) / (2 * h))])
def test_each_scheme_is_written_as_a_person_writes_it(scheme, formula):
    """One element of a float32 loss of 3 elements: the printed value is the formula's, op for op."""
    x = torch.tensor([0.3, -1.7, 2.2], dtype=torch.float32)
    result = check_gradient(lambda t: torch.sin(t) * 3, x, mode="sampled", samples=3, scheme=scheme, eps=1e-2,
                            grad_outputs="ones")
    rows = result.columns["flat"].tolist()

    def loss_at(k, h):
        moved = x.clone()
        moved[k] = moved[k] + h
        return (torch.sin(moved) * 3).sum()

    expected = [float(formula(lambda h: loss_at(k, h), 0.0, 1e-2)) for k in rows]
    assert result.columns["hand_written"].tolist() == expected


def test_the_words_list_the_printed_values_as_python_prints_them():
    result = run_check(QUESTION)
    words = hand_written_words(result.summary, result.columns)
    data, target = page_data((140, 120), torch.float32)
    for value in questions_grad_check(data, target, "sum", 1e-3, _elements(result)):
        assert str(torch.tensor(value, dtype=torch.float32).numpy()) in words
    assert printed(value, "float32") == str(np.float32(value))


def test_the_cli_prints_the_column_and_json_carries_it(capsys):
    from gradlab.cli.check import result_json, _text
    result = run_check(QUESTION)
    text = _text(result)
    assert "hand_written" in text.splitlines()[2] and "numeric" in text.splitlines()[2]
    rows = json.loads(json.dumps(result_json(result)))["rows"]
    assert [r["hand_written"] for r in rows] == result.columns["hand_written"].tolist()
    assert all(math.isfinite(r["numeric"]) for r in rows)
