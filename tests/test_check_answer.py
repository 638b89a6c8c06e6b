"""The Grad check page's answer sentence, from real checks: right, wrong, a kink, a vacuous pass."""

from __future__ import annotations

import torch

from gradlab.check.api import gradcheck
from gradlab.check.settings import CheckSettings, run_check
from gradlab.teaching.check_answer import check_answer


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
    assert "6 of 6 checked values disagree" in answer.text


def test_a_kink_is_named_not_differentiable():
    # relu at an exact 0: left slope 0, right slope 1
    x = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    answer = check_answer(gradcheck(torch.relu, x, mode="full", taylor=False).summary)
    assert answer.level == "warning"
    assert answer.text.startswith("Not differentiable at input 0[0]: 1 of 3 values sit on a kink")


def test_a_gradient_below_atol_passes_but_is_said_to_prove_little():
    # d/dx (1e-12·x) = 1e-12, far below float64's atol: any gradient near 0 would pass
    x = torch.linspace(1.0, 2.0, 4, dtype=torch.float64)
    answer = check_answer(gradcheck(lambda t: 1e-12 * t, x, mode="full", taylor=False).summary)
    assert answer.level == "warning" and "proves little" in answer.text and "atol" in answer.text


def test_the_questions_check_is_right_and_its_hand_written_version_fails_on_round_off():
    # float32, forward, eps 1e-3 on a 16,800-element sum: rho ~ 4e-8, below float32's eps
    s = CheckSettings(model="affine", shape=(140, 120), dtype="float32", scheme="forward", eps=1e-3)
    answer = check_answer(run_check(s).summary)
    assert answer.level == "success"
    assert answer.text.startswith("The gradient is right: all 5 checked values agree with autograd once")
    assert answer.text.endswith("A hand-written check that stops at this step, eps = 0.001, says FAIL "
                                "because round-off swamps "
                                "that step.")
