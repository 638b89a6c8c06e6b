"""Inputs holding ±inf or NaN (issue 35, item 3): those elements are skipped, every other one checked.

The reproducer is attention's causal mask: scores ``masked_fill(mask, -inf)``, then a softmax
over the last dim. ``x + h`` is ``x`` at -inf, so those elements cannot be perturbed; before,
the step taken from the inputs' size was infinite and every element, the finite ones too, was
inconclusive. Now the -inf elements are skipped, named and counted (``summary.skipped``), and the
finite ones are checked: the right softmax passes, a softmax whose backward sums over the wrong
dim fails, naming a finite element whose gradient really is wrong, in every mode.

The expected values are the softmax's own calculus: with y = softmax(x) along the last dim
(y = 0 where x = -inf) and output weights w, the gradient of Σ w·y is y·(w - Σ_k w_k y_k), the
sum over the same row; the wrong backward sums over the other dim (rows of a column).
"""

from __future__ import annotations

import math

import pytest
import torch

import gradlab
from gradlab.check.inputs.validation import MODES
from gradlab.errors import GradLabError
from gradlab.testing.functions_nonlinear import Softmax

F64 = torch.float64
MASKED = 4 * 28  # triu(ones(8, 8), 1) holds 28 ones; four such matrices


def _scores(dtype=F64):
    """The reproducer's input: causally masked attention scores (4, 8, 8), -inf above the diagonal."""
    scores = torch.randn(4, 8, 8, dtype=F64, generator=torch.Generator().manual_seed(0))
    mask = torch.triu(torch.ones(8, 8, dtype=torch.bool), 1)
    return scores.masked_fill(mask, float("-inf")).to(dtype).requires_grad_()


def _weights(dtype=F64):
    return torch.randn(4, 8, 8, dtype=F64, generator=torch.Generator().manual_seed(1)).to(dtype)


class WrongDimSoftmax(Softmax):
    """softmax over the last dim whose backward sums y·g over dim -2 instead of -1."""

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum(-2, keepdim=True))  # the softmax was over -1


def _exact(x: torch.Tensor, w: torch.Tensor, dim: int) -> torch.Tensor:
    """y·(w - Σ_dim w·y) in float64: the right gradient of Σ w·softmax(x, -1) for dim=-1, the
    wrong backward's for dim=-2."""
    y = torch.softmax(x.detach().to(F64), -1)
    w = w.to(F64)
    return y * (w - (w * y).sum(dim, keepdim=True))


def _check(fn, x, mode, **kw):
    samples = {"sampled": 24, "directional": 8}.get(mode, 5)
    return gradlab.gradcheck(fn, x, mode=mode, samples=samples, reduction="none", grad_outputs=_weights(x.dtype),
                             **kw)


def _finite_positions(x: torch.Tensor) -> set[int]:
    return set(torch.isfinite(x.detach()).reshape(-1).nonzero().reshape(-1).tolist())


@pytest.mark.parametrize("mode", MODES)
def test_the_masked_softmax_passes_on_every_finite_element_the_inf_ones_skipped(mode):
    x = _scores()
    r = _check(lambda t: torch.softmax(t, -1), x, mode)
    assert r.verdict == "pass", r.summary.text
    assert r.summary.skipped == r.summary.count("skipped") == MASKED
    assert sum(n for _, n in r.summary.counts) == len(r.table)  # the counts are of checked values only
    # what the input holds is said, and where; fn's output is finite, so no word of fn being NaN or inf
    assert "holds -inf at 112 of its 256 elements" in r.summary.hint, r.summary.hint
    assert "(t[0, 0, 1], t[0, 0, 2], t[0, 0, 3], t[0, 0, 4] and 108 more)" in r.summary.hint
    assert "112 of the 256 input elements were skipped: they hold -inf." in r.summary.message
    assert "fn returns NaN or inf" not in r.summary.text
    if mode in ("full", "sampled"):  # the elements checked are finite ones, each against the calculus
        flat = torch.tensor(r.table["flat"].tolist())
        assert set(flat.tolist()) <= _finite_positions(x)
        exact = _exact(x, _weights(), -1).reshape(-1)[flat]
        assert torch.allclose(torch.tensor(r.table["numeric"].to_numpy()), exact, rtol=1e-6, atol=1e-9)
        assert torch.allclose(torch.tensor(r.table["autograd"].to_numpy()), exact, rtol=1e-12, atol=1e-15)
    if mode == "full":
        assert len(r.table) == 256 - MASKED


@pytest.mark.parametrize("mode", MODES)
def test_a_softmax_backward_summing_over_the_wrong_dim_fails_naming_a_finite_wrong_element(mode):
    x = _scores()
    r = _check(WrongDimSoftmax.apply, x, mode)
    assert r.verdict == "fail", r.summary.text
    assert r.summary.skipped == MASKED
    named = r.summary.located or r.summary.worst
    k = named.flat_index
    assert k in _finite_positions(x), named.label
    right, wrong = _exact(x, _weights(), -1).reshape(-1)[k], _exact(x, _weights(), -2).reshape(-1)[k]
    assert named.autograd == pytest.approx(float(wrong), rel=1e-9, abs=1e-12)  # the wrong backward's value
    assert named.numeric == pytest.approx(float(right), rel=1e-5, abs=1e-8)  # the finite difference: the truth
    assert abs(float(wrong - right)) > 10 * named.tolerance


def test_torch_fails_the_wrong_softmax_and_passes_the_right_one_there_too():
    """The reference: torch's own check on the same input and weights agrees."""
    x, w = _scores(), _weights()
    assert torch.autograd.gradcheck(lambda t: torch.softmax(t, -1) * w, (x,))
    assert not torch.autograd.gradcheck(lambda t: WrongDimSoftmax.apply(t) * w, (x,), raise_exception=False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_in_low_precision_the_right_softmax_passes_and_the_wrong_one_fails(dtype):
    x = _scores(dtype)
    right = _check(lambda t: torch.softmax(t, -1), x, "blocks")
    assert right.verdict == "pass" and right.summary.skipped == MASKED, right.summary.text
    wrong = _check(WrongDimSoftmax.apply, x, "blocks")
    assert wrong.verdict == "fail", wrong.summary.text
    assert (wrong.summary.located or wrong.summary.worst).flat_index in _finite_positions(x)


def test_forward_mode_and_second_order_skip_the_same_elements():
    x = _scores()
    r = gradlab.gradcheck(lambda t: torch.softmax(t, -1), x, mode="full", reduction="none",
                          grad_outputs=_weights(), check_forward=True, order=2)
    assert [(name, part.verdict) for name, part in r.parts] == [
        ("gradient", "pass"), ("forward mode", "pass"), ("second order", "pass")], r.summary.text
    assert {part.summary.skipped for _, part in r.parts} == {MASKED}  # the weights w are finite: all checked
    sampled = gradlab.gradcheck(lambda t: torch.softmax(t, -1), x, mode="sampled", samples=24, reduction="none",
                                grad_outputs=_weights(), check_forward=True)
    assert sampled.forward.verdict == "pass", sampled.forward.summary.text
    flat = sampled.table["flat"].tolist()
    assert sampled.forward.table["flat"].tolist() == flat and set(flat) <= _finite_positions(x)  # the same draw


def test_nan_and_plus_inf_are_skipped_and_said():
    """Padding held as NaN and an overflowed +inf, which fn maps to 0 before tanh: fn is finite
    at x, its derivative at a finite element is 1 - tanh(x)²."""
    x = torch.tensor([0.3, math.nan, -1.2, math.inf, 0.7, 2.0], dtype=F64, requires_grad=True)
    r = gradlab.gradcheck(lambda t: torch.nan_to_num(t, nan=0.0, posinf=0.0, neginf=0.0).tanh(), x, mode="full",
                          reduction="none", grad_outputs=torch.ones(6, dtype=F64))
    assert r.verdict == "pass", r.summary.text
    assert r.summary.skipped == 2 and r.table["element"].tolist() == ["t[0]", "t[2]", "t[4]", "t[5]"]
    finite = x.detach()[[0, 2, 4, 5]]
    assert torch.allclose(torch.tensor(r.table["numeric"].to_numpy()), 1 - finite.tanh() ** 2, rtol=1e-7)
    assert "holds inf and NaN at 2 of its 6 elements (t[1] and t[3])" in r.summary.hint, r.summary.hint


def test_an_additive_mask_on_a_second_input_is_named_there():
    """The other way attention is masked: a bias of 0 and -inf added to the scores. The scores are
    all finite and all checked (where the bias is -inf their gradient is 0, as the finite
    difference finds); the bias's -inf elements are skipped and named as the bias's."""
    scores = torch.randn(8, 8, dtype=F64, generator=torch.Generator().manual_seed(2)).requires_grad_()
    bias = torch.zeros(8, 8, dtype=F64).masked_fill(torch.triu(torch.ones(8, 8, dtype=torch.bool), 1),
                                                    float("-inf")).requires_grad_()
    w = torch.randn(8, 8, dtype=F64, generator=torch.Generator().manual_seed(3))

    def attention_weights(scores, bias):
        return torch.softmax(scores + bias, -1)

    r = gradlab.gradcheck(attention_weights, scores, bias, mode="full", reduction="none", grad_outputs=w)
    assert r.verdict == "pass", r.summary.text
    assert r.summary.skipped == 28 and len(r.table) == 128 - 28
    assert "bias holds -inf at 28 of the 128 checked elements (bias[0, 1]," in r.summary.hint, r.summary.hint
    assert r.error_map is None  # the table has no row for the skipped elements: no map of every element


def test_a_step_given_is_judged_on_the_finite_elements():
    x = _scores()
    r = _check(lambda t: torch.softmax(t, -1), x, "sampled", eps=1e-6)
    assert r.verdict == "pass" and r.summary.step == 1e-6, r.summary.text


def test_an_input_with_no_finite_element_is_one_sentence():
    with pytest.raises(GradLabError, match=r"^Every element of the checked inputs is NaN or ±inf"):
        gradlab.gradcheck(lambda t: torch.nan_to_num(t).sin(), torch.tensor([math.inf, -math.inf, math.nan], dtype=F64))


def test_finite_inputs_skip_nothing():
    r = gradlab.gradcheck(torch.sin, torch.linspace(-1, 1, 9, dtype=F64), mode="full")
    assert r.verdict == "pass" and r.summary.skipped == 0 and r.summary.count("skipped") == 0
    assert "skipped" not in r.summary.text and r.error_map is not None
