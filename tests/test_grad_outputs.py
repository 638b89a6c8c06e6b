"""Issue 35, item 1: the check's default weights fn's outputs by seeded random values.

The loss a check differentiates is L = Σ_j v_j·y_j. With v all ones (the old default) a
backward that ignores, drops or mis-scales its incoming gradient passed in every mode, and a
LayerNorm at its fresh weights had a zero gradient for its input (its outputs add up to a
constant) and passed having tested nothing. Now ``grad_outputs="random"`` is the default
(each v_j a random sign times a size from WEIGHT_SIZES, seeded by ``seed``), and a gradient
that is zero by construction is "inconclusive", saying so.

Every expected gradient comes from mathematics: SiLU's derivative s(1 + x(1 - s)), the
weights' documented distribution, LayerNorm's outputs summing to its bias; none is read from
the checker's output.
"""

from __future__ import annotations

import pytest
import torch
from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError

import gradlab
from gradlab.check.api import WEIGHT_SIZES, gradcheck, random_weights
from gradlab.check.inputs.validation import GRAD_OUTPUTS, REDUCTIONS
from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import resolve_tolerances
from gradlab.testing import assert_gradients
from gradlab.testing.functions_nonlinear import SiLU

MODES = ("blocks", "sampled", "full", "directional")
DTYPES = (torch.float64, torch.float32)


def _silu_derivative(x: torch.Tensor) -> torch.Tensor:
    s = torch.sigmoid(x)
    return s * (1 + x * (1 - s))


class SiLUIgnoringG(SiLU):  # the right SiLU is the hand-written corpus's
    """The issue's reproducer: the backward forgot ``* g``."""

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return _silu_derivative(x)


class SiLUDoubled(SiLU):
    """A mis-scaled backward: ``2 * g``."""

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * g * _silu_derivative(x)


class SquaredNormIgnoringG(torch.autograd.Function):
    """A one-value output, Σ x², whose backward returns 2x whatever its grad_output."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x * x).sum()

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x


def _x(dtype, seed=0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(8, 16, generator=gen, dtype=torch.float64).to(dtype).requires_grad_()


def _named(result):
    """The element a failing check names: the one a direction was narrowed to, else the worst."""
    s = result.summary
    return s.located if s.located is not None else s.worst


def _really_wrong(result, x: torch.Tensor, backward_of, seed: int = 0) -> bool:
    """Whether the named element's backward value is off the true gradient v_k·silu'(x_k) by more
    than 10 tolerances of the dtype (v: the documented weights for this seed)."""
    element = _named(result)
    k = element.flat_index
    assert k >= 0, element
    x64 = x.detach().double().reshape(-1)
    v = random_weights(x64.numel(), seed)
    truth = v[k] * _silu_derivative(x64[k])
    claimed = backward_of(v[k], x64[k])
    rtol, atol = resolve_tolerances(x.dtype)
    return float((claimed - truth).abs()) > 10 * (atol + rtol * float(truth.abs()))


# ------------------------------------------------------------------ the default and its weights


def test_the_default_weights_are_random_and_the_cli_and_page_keep_ones():
    import inspect

    from gradlab.check.running.engine import check_gradient
    from gradlab.check.lab.settings import CheckSettings

    assert inspect.signature(gradcheck).parameters["grad_outputs"].default == "random"
    assert inspect.signature(gradcheck).parameters["reduction"].default == "sum"
    assert inspect.signature(check_gradient).parameters["grad_outputs"].default == "random"
    assert GRAD_OUTPUTS[0] == "random" and REDUCTIONS[0] == "sum"  # the first is the default
    assert CheckSettings().grad_outputs == "ones"  # the page's and the CLI's questions: the plain sum


def test_the_weights_are_seeded_signed_and_of_the_documented_sizes():
    v = random_weights(10_000, seed=3)
    assert torch.equal(v, random_weights(10_000, seed=3))  # same seed, same weights
    assert not torch.equal(v, random_weights(10_000, seed=4))
    assert set(v.abs().tolist()) == set(WEIGHT_SIZES)  # every documented size, nothing else
    # sizes in [1/2, 2], none within 1/4 of 1, each exact in every floating dtype down to float8
    assert min(WEIGHT_SIZES) == 0.5 and max(WEIGHT_SIZES) == 2.0
    assert all(abs(s - 1) >= 0.25 for s in WEIGHT_SIZES)
    for dtype in (torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2):
        assert torch.equal(torch.tensor(WEIGHT_SIZES).to(dtype).double(), torch.tensor(WEIGHT_SIZES).double())
    # random signs: about half negative
    assert 0.45 < float((v < 0).double().mean()) < 0.55


@pytest.mark.parametrize("reduction, scale", [("sum", 1.0), ("mean", 1 / 12), ("none", 1.0)])
def test_the_checked_gradient_is_the_weighted_one(reduction, scale):
    # L = Σ_j v_j sin(x_j) (divided by n for mean): dL/dx_j = v_j cos(x_j)
    x = torch.linspace(-2, 2, 12, dtype=torch.float64).reshape(3, 4)
    for seed in (0, 7):
        r = gradcheck(torch.sin, x, mode="full", reduction=reduction, seed=seed)
        expected = scale * random_weights(12, seed) * torch.cos(x).reshape(-1)
        assert r.verdict == "pass", r.summary.text
        assert r.table["autograd"].tolist() == pytest.approx(expected.tolist(), rel=1e-12)
        assert r.table["numeric"].tolist() == pytest.approx(expected.tolist(), rel=1e-8)


def test_the_same_seed_gives_the_same_check():
    x = _x(torch.float64)
    a = gradcheck(SiLU.apply, x, mode="full", seed=5)
    b = gradcheck(SiLU.apply, x, mode="full", seed=5)
    assert a.table["autograd"].tolist() == b.table["autograd"].tolist()
    assert a.table["numeric"].tolist() == b.table["numeric"].tolist()


def test_grad_outputs_ones_is_the_plain_sum():
    x = torch.linspace(-2, 2, 12, dtype=torch.float64)
    r = gradcheck(torch.sin, x, mode="full", grad_outputs="ones")
    assert r.table["autograd"].tolist() == pytest.approx(torch.cos(x).tolist(), rel=1e-12)


def test_a_tensor_of_grad_outputs_weights_the_sum():
    x = torch.linspace(-2, 2, 6, dtype=torch.float64)
    w = torch.tensor([3.0, -1.0, 0.5, 2.0, -4.0, 1.0], dtype=torch.float64)
    r = gradcheck(torch.sin, x, mode="full", grad_outputs=w)
    assert r.table["autograd"].tolist() == pytest.approx((w * torch.cos(x)).tolist(), rel=1e-12)
    with pytest.raises(GradLabError, match="grad_outputs has shape"):
        gradcheck(torch.sin, x, grad_outputs=torch.ones(5, dtype=torch.float64))


def test_several_outputs_each_get_their_own_weights():
    # fn returns (sin x, 2 exp x): v over both parts in order, L = Σ v_j sin x_j + Σ v_{n+j} 2 exp x_j
    x = torch.linspace(-1, 1, 5, dtype=torch.float64)
    r = gradcheck(lambda t: (t.sin(), 2 * t.exp()), x, mode="full")
    v = random_weights(10, 0)
    expected = v[:5] * torch.cos(x) + v[5:] * 2 * torch.exp(x)
    assert r.verdict == "pass"
    assert r.table["autograd"].tolist() == pytest.approx(expected.tolist(), rel=1e-12)


# ------------------------------------------------------------------ a backward that ignores its grad_output


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_a_backward_ignoring_grad_output_fails_in_every_mode(mode, dtype):
    x = _x(dtype)
    r = gradcheck(SiLUIgnoringG.apply, x, mode=mode)
    assert r.verdict == "fail", r.summary.text
    assert r.summary.text.startswith("Gradient check failed at")
    # the named element is really wrong: the backward says silu'(x_k), the truth is v_k·silu'(x_k)
    assert _really_wrong(r, x, lambda v, x: _silu_derivative(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_a_backward_doubling_grad_output_fails_in_every_mode(mode, dtype):
    x = _x(dtype)
    r = gradcheck(SiLUDoubled.apply, x, mode=mode)
    assert r.verdict == "fail", r.summary.text
    assert _really_wrong(r, x, lambda v, x: 2 * v * _silu_derivative(x))


@pytest.mark.parametrize("dtype", DTYPES + (torch.bfloat16,), ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_the_right_backward_passes_in_every_mode(mode, dtype):
    r = gradcheck(SiLU.apply, _x(dtype), mode=mode)
    assert r.verdict == "pass", r.summary.text


def test_the_issues_reproducer_passed_with_ones_and_fails_by_default():
    # with ones, g = 1 and the forgotten "* g" changes nothing: that is why it passed
    x = _x(torch.float64)
    assert gradcheck(SiLUIgnoringG.apply, x, grad_outputs="ones").verdict == "pass"
    assert gradcheck(SiLUIgnoringG.apply, x).verdict == "fail"
    with pytest.raises(TorchGradcheckError):  # torch's own check catches it
        torch.autograd.gradcheck(SiLUIgnoringG.apply, (x[:2, :4].detach().clone().requires_grad_(),))


@pytest.mark.parametrize("seed", range(10))
def test_a_one_value_output_gets_a_random_weight_too(seed):
    # L = v·Σx²: autograd's 2x is off by the factor v, |v| at least 1/4 away from 1
    x = torch.linspace(-1, 1, 6, dtype=torch.float64)
    assert gradcheck(SquaredNormIgnoringG.apply, x, seed=seed).verdict == "fail"
    assert gradcheck(SquaredNormIgnoringG.apply, x, seed=seed, grad_outputs="ones").verdict == "pass"


def test_assert_gradients_catches_the_ignored_grad_output():
    x = _x(torch.float64)
    with pytest.raises(AssertionError, match="Gradient check failed at"):
        assert_gradients(SiLUIgnoringG.apply, x)
    assert_gradients(SiLU.apply, x)  # silent on the right one


def test_check_layers_weights_each_module_by_random_values():
    # a model whose one custom layer ignores its grad_output: check_layers names it
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(16, 16)
            self.act = _Act()

        def forward(self, x):
            return self.act(self.linear(x))

    class _Act(torch.nn.Module):
        def forward(self, x):
            return SiLUIgnoringG.apply(x)

    torch.manual_seed(0)
    net = Net().double()
    result = gradlab.check_layers(net, torch.randn(8, 16, dtype=torch.float64))
    failing = {row.module for row in result.rows if row.verdict == "fail"}
    assert "act" in failing, result.answer


# ------------------------------------------------------------------ a gradient zero by construction


def _fresh_layer_norm(dtype):
    torch.manual_seed(0)
    return torch.nn.LayerNorm(16).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_ones_on_a_fresh_layer_norm_say_the_gradient_is_zero(mode, dtype):
    ln, x = _fresh_layer_norm(dtype), _x(dtype).detach()
    # mathematics: with w = 1, b = 0 each row of LN(x) sums to Σ b = 0, whatever x: the loss
    # Σ LN(x) is constant and its gradient is 0
    with torch.no_grad():
        rows = torch.nn.functional.layer_norm(x.double() * 3 + 1, (16,), ln.weight.double(), ln.bias.double())
    assert float(rows.sum(-1).abs().max()) < 1e-12 and float(ln.bias.detach().abs().max()) == 0.0
    r = gradcheck(ln, x, mode=mode, grad_outputs="ones")
    assert r.verdict == "inconclusive" and not r.passed, r.summary.text
    s = r.summary
    assert s.vacuous and s.diagnosis.kind == "vacuous" and s.diagnosis.level == "warning"
    assert "the gradient is zero at every element" in s.message and "nothing was tested" in s.message
    assert "grad_outputs='random'" in s.hint
    assert s.count("pass") == len(r.table)  # every value agreed: 0 with 0


def test_the_default_weights_test_the_same_layer_norm():
    ln, x = _fresh_layer_norm(torch.float64), _x(torch.float64).detach()
    r = gradcheck(ln, x)
    assert r.verdict == "pass" and not r.summary.vacuous, r.summary.text
    assert float(r.table["autograd"].abs().max()) > 0.1


def test_assert_gradients_does_not_pass_a_zero_gradient_silently():
    ln, x = _fresh_layer_norm(torch.float64), _x(torch.float64).detach()
    with pytest.raises(AssertionError, match="nothing was tested"):
        assert_gradients(ln, x, grad_outputs="ones")
    assert_gradients(ln, x, grad_outputs="ones", allow_inconclusive=True)  # asked for: accepted
    assert_gradients(ln, x)  # the default weights: a real pass


def test_softmax_with_ones_is_zero_by_construction():
    # Σ_j softmax(x)_j = 1 for every row: with ones the loss is constant
    x = _x(torch.float64).detach()
    r = gradcheck(lambda t: torch.softmax(t, -1), x, grad_outputs="ones", mode="full")
    assert r.verdict == "inconclusive" and "nothing was tested" in r.summary.text
    assert gradcheck(lambda t: torch.softmax(t, -1), x, mode="full").verdict == "pass"


def test_a_flat_function_says_nothing_was_tested():
    # floor is constant between integers: its gradient is 0 for any weights of the outputs
    x = torch.tensor([0.25, 1.5, -2.75, 3.1], dtype=torch.float64)
    r = gradcheck(torch.floor, x, mode="full")
    assert r.verdict == "inconclusive", r.summary.text
    assert "fn does not change with the checked inputs here" in r.summary.message


def test_a_backward_returning_zero_where_fn_changes_still_fails():
    # autograd's gradient 0 while the function moves: a wrong gradient, not "nothing tested"
    x = torch.linspace(0.5, 2, 6, dtype=torch.float64)
    r = gradcheck(lambda t: t.detach() ** 2 + 0 * t, x, mode="full")
    assert r.verdict == "fail", r.summary.text


def test_a_gradient_zero_on_some_elements_only_is_checked_as_usual():
    # relu at negative inputs has gradient 0 there, but not everywhere: a plain pass
    x = torch.tensor([-1.0, -0.5, 0.5, 2.0], dtype=torch.float64)
    assert gradcheck(torch.relu, x, mode="full", grad_outputs="ones").verdict == "pass"


def test_the_pages_answer_says_nothing_was_tested():
    from gradlab.labs.gradcheck.answer import check_answer
    from gradlab.check.lab.settings import CheckSettings, run_check

    # x - x is 0 whatever x: the Grad check page's answer must not blame the finite difference
    s = run_check(CheckSettings(model="expression", expression="x - x", shape=(4, 3), dtype="float64"),
                  taylor=False).summary
    answer = check_answer(s)
    assert s.verdict == "inconclusive" and answer.level == "warning"
    assert answer.text.startswith("Nothing was tested: fn does not change with the checked inputs here."), answer
