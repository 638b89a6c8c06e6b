"""Forward-mode and second-order checks, held to torch's own gradcheck(check_forward_ad) and gradgradcheck.

Every case is a spec row: a function, its inputs, and whether it is meant to be
caught. The verdict expected of GradLab is what torch's reference checker says
on the same function (torch.autograd.gradcheck with check_forward_ad=True, and
torch.autograd.gradgradcheck), so no value here is copied from GradLab's output.
"""

import pytest
import torch

import gradlab
from torch.autograd.gradcheck import GradcheckError

from gradlab.check.further import forward_mode
from gradlab.check.further.forward_mode import check_forward_mode, forward_mode_twin
from gradlab.check.further.second_order import check_second_order, gradient_function

MODES = ("full", "sampled", "directional")


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


class _SinRightBackwardWrongJvp:
    """The derivative of sin, right in backward and 1.5x too large in forward mode."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos()

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t * x.cos() * 1.5


class SinWrongJvp(_SinRightBackwardWrongJvp, torch.autograd.Function):
    """sin with a right backward and a forward-mode formula 1.5× too large (new style, vmappable)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.sin()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])



class SinWrongJvpOldStyle(_SinRightBackwardWrongJvp, torch.autograd.Function):
    """The same mistake in an old-style Function (no setup_context: vmap cannot run it)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x.sin()


class CubeDetachedBackward(torch.autograd.Function):
    """x**3 whose backward is right but built from detached values: not differentiable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x.detach() ** 2


class CubeGradWrong(torch.autograd.Function):
    """3x² whose own derivative is wrong (5x instead of 6x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 3 * x ** 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 5 * x


class CubeWrongDoubleBackward(torch.autograd.Function):
    """x**3 with a right backward whose derivative (the double backward) is wrong."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * CubeGradWrong.apply(x)


_W1, _W2 = _x(5, 6, seed=1), _x(6, 2, seed=2)

FORWARD_CASES = {  # name: (fn, inputs)
    "sin": (torch.sin, [_x(4, 5)]),
    "matmul": (torch.matmul, [_x(3, 4), _x(4, 2, seed=1)]),
    "softmax": (lambda t: torch.softmax(t, -1), [_x(4, 5)]),
    "wrong_jvp": (SinWrongJvp.apply, [_x(4, 5)]),
    "wrong_jvp_old_style": (SinWrongJvpOldStyle.apply, [_x(4, 5)]),
}

SECOND_ORDER_CASES = {
    "cube": (lambda t: t ** 3, [_x(4, 5)]),
    "exp": (torch.exp, [_x(4, 5)]),
    "tanh_mlp": (lambda t: torch.tanh(t @ _W1) @ _W2, [_x(4, 5)]),
    "detached_backward": (CubeDetachedBackward.apply, [_x(4, 5)]),
    "wrong_double_backward": (CubeWrongDoubleBackward.apply, [_x(4, 5)]),
}


def _torch_says(check, fn, xs, **kw) -> bool:
    leaves = [t.clone().requires_grad_(True) for t in xs]
    try:
        return check(fn, leaves, **kw)
    except GradcheckError:
        return False


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FORWARD_CASES)
def test_forward_mode_verdict_is_torchs(name, mode):
    fn, xs = FORWARD_CASES[name]
    expected = _torch_says(torch.autograd.gradcheck, fn, xs, check_forward_ad=True, check_backward_ad=False)
    assert check_forward_mode(fn, xs, mode=mode, taylor=False).passed == expected


@pytest.mark.parametrize("fn", [SinWrongJvp.apply, SinWrongJvpOldStyle.apply])
def test_a_wrong_jvp_is_caught_while_its_backward_passes(fn):
    x = _x(4, 5)
    assert _torch_says(torch.autograd.gradcheck, fn, [x])  # the backward is right (torch says so)
    from gradlab import gradcheck
    assert gradcheck(fn, x, mode="full", taylor=False).passed
    result = check_forward_mode(fn, x, mode="full", taylor=False, grad_outputs="ones")
    assert result.verdict == "fail"
    # forward mode's value is 1.5 × cos(x) at every element: the column GradLab compares
    assert torch.allclose(torch.tensor(result.table["autograd"].to_numpy()), 1.5 * x.cos().reshape(-1))


def test_the_twin_computes_fn_and_its_gradient_is_forward_modes():
    x = _x(3, 4)
    twin = forward_mode_twin(lambda t: {"a": t.sin(), "b": (t * t,)[0]})
    out = twin(x.clone().requires_grad_(True))
    assert torch.equal(out["a"].detach(), x.sin()) and torch.equal(out["b"].detach(), x * x)
    leaf = x.clone().requires_grad_(True)
    o = twin(leaf)
    (g,) = torch.autograd.grad(o["a"].sum() + o["b"].sum(), leaf)
    assert torch.allclose(g, x.cos() + 2 * x, rtol=1e-12, atol=0)  # d/dx (sin x + x²), closed form


def test_vmap_and_dual_number_columns_agree(monkeypatch):
    fn, x = torch.tanh, _x(3, 3)
    v = [torch.ones(3, 3, dtype=torch.float64)]
    vmapped = forward_mode.forward_mode_gradient(fn, [x], [0], v)[0]

    def no_vmap(*args):
        raise RuntimeError("vmap unavailable")

    monkeypatch.setattr(forward_mode, "_vmapped_products", no_vmap)
    looped = forward_mode.forward_mode_gradient(fn, [x], [0], v)[0]
    closed_form = 1 - x.tanh() ** 2
    tol = 8 * torch.finfo(torch.float64).eps
    assert torch.allclose(vmapped, closed_form, rtol=tol, atol=0)
    assert torch.allclose(looped, closed_form, rtol=tol, atol=0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SECOND_ORDER_CASES)
def test_second_order_verdict_is_gradgradchecks(name, mode):
    fn, xs = SECOND_ORDER_CASES[name]
    expected = _torch_says(torch.autograd.gradgradcheck, fn, xs)
    assert check_second_order(fn, xs, mode=mode, taylor=False).passed == expected


@pytest.mark.parametrize("name", ["detached_backward", "wrong_double_backward"])
def test_a_wrong_double_backward_is_caught_while_the_backward_passes(name):
    fn, xs = SECOND_ORDER_CASES[name]
    assert _torch_says(torch.autograd.gradcheck, fn, xs)
    assert check_second_order(fn, xs, mode="full", taylor=False).verdict == "fail"


def test_the_gradient_function_is_the_weighted_gradient():
    x = _x(2, 3)
    g, w = gradient_function(lambda t: t ** 3, [x], grad_outputs="ones")
    assert torch.equal(w, torch.ones(6, dtype=torch.float64))
    assert torch.allclose(g(x, w), 3 * x.reshape(-1) ** 2, rtol=1e-15, atol=0)
    leaf, weights = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    h, dw = torch.autograd.grad(g(leaf, weights).sum(), [leaf, weights])  # differentiable in x and w
    assert torch.allclose(h, 6 * x, rtol=1e-15, atol=0)  # the Hessian's row sums
    assert torch.allclose(dw, 3 * x.reshape(-1) ** 2, rtol=1e-15, atol=0)  # g is linear in w


def test_a_sampled_forward_mode_check_computes_only_the_sampled_columns(monkeypatch):
    import gradlab.check.further.forward_mode as fm

    seen = []
    basis = fm._basis
    monkeypatch.setattr(fm, "_basis", lambda x, columns: seen.append(len(columns)) or basis(x, columns))
    x = torch.linspace(0.1, 2.0, 140 * 120, dtype=torch.float64).reshape(140, 120)
    r = gradlab.gradcheck(lambda t: (t.sin() ** 2).sum(), x, mode="sampled", samples=7, check_forward=True,
                          taylor=False)
    assert r.forward.verdict == "pass" and len(r.forward.table) == 7
    # 7 JVPs per backward pass (two passes: the nondeterminism rule), not one per each of 16,800 elements
    assert seen == [7, 7]


def test_a_wrong_jvp_at_a_sampled_element_is_caught():
    from gradlab.check.api import sample_indices

    x = torch.linspace(0.1, 2.0, 300, dtype=torch.float64)
    target = int(sample_indices(300, 5, 0)[2])
    r = gradlab.gradcheck(lambda t: _WrongJvpAt.apply(t, target), x, mode="sampled", samples=5,
                          check_forward=True, taylor=False)
    assert r.verdict == "fail" and r.forward.verdict == "fail" and r.first_order.verdict == "pass"
    assert f"x[{target}]" in r.forward.summary.message or f"[{target}]" in r.forward.summary.message


class _WrongJvpAt(torch.autograd.Function):
    """sin, with a right backward and a forward-mode derivative off by 2x at one element."""

    @staticmethod
    def forward(t, at):
        return t.sin()

    @staticmethod
    def setup_context(ctx, inputs, output):
        t, at = inputs
        ctx.save_for_backward(t)
        ctx.save_for_forward(t)
        ctx.at = at

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return g * t.cos(), None

    @staticmethod
    def jvp(ctx, dt, _):
        (t,) = ctx.saved_tensors
        scale = torch.ones_like(t)
        scale[ctx.at] = 2.0
        return dt * t.cos() * scale
