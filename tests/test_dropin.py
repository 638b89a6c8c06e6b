"""gradlab.gradcheck as a drop-in checker: fn(*inputs) as the user calls it, whatever it takes and returns.

Independent references: torch.autograd.gradcheck (complex functions, wrong backwards),
closed forms (d|z|^2 = 2z in torch's convention), the corpus's own inputs (element counts).
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import gradlab
from gradlab.check.inputs.arguments import parameter_names
from gradlab.check.inputs.outputs import OutputLayout
from gradlab.errors import GradLabError
from gradlab.testing.corpus import by_name, corpus

CASES = corpus()
STATES = {"pass", "fail", "inconclusive", "not differentiable"}


def _required(args) -> int:
    return sum(a.numel() for a in args if isinstance(a, torch.Tensor) and a.requires_grad)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_corpus_case_is_checked_as_called_without_a_closure(case):
    args = case.inputs()
    r = gradlab.gradcheck(case.fn, *args, mode="full", taylor=False)
    assert r.verdict in STATES
    assert len(r.table) == _required(args)  # every element that requires grad, nothing else


@pytest.mark.parametrize("name", ["squeeze", "cholesky", "cholesky_solve_spd", "binary_cross_entropy",
                                  "gaussian_nll"])
def test_functions_that_were_refused_or_crashed_are_checked_and_pass(name):
    case = by_name(name)
    assert gradlab.gradcheck(case.fn, *case.inputs(), mode="full").verdict == "pass"


def test_fn_is_evaluated_only_at_the_input_and_its_stencil_points():
    x0 = torch.linspace(0.5, 1.5, 12, dtype=torch.float64).reshape(3, 4)
    deviations = []

    def fn(x):  # .item() is refused by vmap: every call, plain or direct, is seen here
        deviations.append((x - x0).abs().amax().item())
        return torch.exp(x)

    r = gradlab.gradcheck(fn, x0, mode="full", taylor=False)
    assert r.passed and deviations
    step = r.summary.step  # central differences: x +- h e_i, x + h rounded to float64
    assert max(deviations) <= step + 2 * torch.finfo(torch.float64).eps * float(x0.abs().max())
    assert max(deviations) >= step / 2  # the stencil points were seen


def test_inputs_of_several_dtypes_reach_fn_in_their_own_dtype():
    a = torch.linspace(-1, 1, 6, dtype=torch.float32).requires_grad_()
    b = torch.linspace(0.5, 2, 6, dtype=torch.float64).requires_grad_()
    seen = set()

    def fn(a, b):
        seen.add((a.dtype, b.dtype))
        return torch.sin(a) * b

    r = gradlab.gradcheck(fn, a, b, mode="full", taylor=False, grad_outputs="ones")
    # the check's own evaluations keep each input's dtype; the float64 witness (autograd's
    # rounding measured against float64 autograd) is the one call with both in float64
    assert (torch.float32, torch.float64) in seen and seen <= {(torch.float32, torch.float64),
                                                               (torch.float64, torch.float64)}
    assert r.verdict == "pass" and len(r.table) == 12
    assert r.summary.dtype == "float32"  # tolerances of the least precise input
    np.testing.assert_allclose(r.table["autograd"][:6], (torch.cos(a) * b).detach().double(), rtol=1e-6)


def test_integer_bool_and_python_arguments_pass_through_untouched():
    x = torch.linspace(-1, 1, 5, dtype=torch.float64).requires_grad_()
    index = torch.tensor([4, 0, 2])
    mask = torch.tensor([True, False, True])
    options = {"scale": 2.0}
    received = []

    def fn(x, n, index, mask, flag, options):
        received.append((n, index, mask, flag, options))
        return torch.where(mask, x[index] ** n, x[index]) * options["scale"] if flag else x

    r = gradlab.gradcheck(fn, x, 3, index, mask, True, options, mode="full", taylor=False, grad_outputs="ones")
    assert r.passed and len(r.table) == 5
    assert all(n == 3 and flag is True and opts is options and torch.equal(i, index) and torch.equal(m, mask)
               for n, i, m, flag, opts in received)
    expected = torch.zeros(5, dtype=torch.float64)  # d/dx_j of sum_k w_k: x[4]^3, x[0], x[2]^3
    expected[4], expected[0], expected[2] = 3 * x[4] ** 2 * 2, 2.0, 3 * x[2] ** 2 * 2
    np.testing.assert_allclose(r.table["numeric"], expected.detach(), rtol=1e-7, atol=1e-9)


def test_wrt_selects_inputs_by_name_or_position():
    x = torch.rand(3, dtype=torch.float64, requires_grad=True)
    y = torch.rand(4, dtype=torch.float64, requires_grad=True)
    fn = lambda x, y: x.sum() * y  # noqa: E731
    by_name_ = gradlab.gradcheck(fn, x, y, wrt="y", mode="full", taylor=False)
    by_position = gradlab.gradcheck(fn, x, y, wrt=[1], mode="full", taylor=False)
    assert list(by_name_.table["element"]) == list(by_position.table["element"]) == [f"y[{i}]" for i in range(4)]
    with pytest.raises(GradLabError, match="not one of fn's arguments"):
        gradlab.gradcheck(fn, x, y, wrt="z")


def test_a_list_of_tensors_means_several_inputs_as_in_torch_gradcheck():
    a, b = torch.rand(3, dtype=torch.float64), torch.rand(3, dtype=torch.float64)
    fn = lambda p, q: p * q.exp()  # noqa: E731
    legacy = gradlab.gradcheck(fn, [a, b], mode="full", taylor=False)
    new = gradlab.gradcheck(fn, a, b, mode="full", taylor=False)
    assert legacy.passed and legacy.table[["element", "numeric"]].equals(new.table[["element", "numeric"]])


def test_output_layout_names_every_part_and_element():
    out = {"logits": torch.zeros(3, 2), "pair": (torch.zeros(2), torch.zeros(1, dtype=torch.complex128)),
           "index": torch.tensor([0])}
    layout = OutputLayout.of(out)
    assert layout.names == ('out["logits"]', 'out["pair"][0]', 'out["pair"][1]')
    assert [layout.label(i) for i in (5, 6, 8, 9)] == [
        'out["logits"][2, 1]', 'out["pair"][0][0]', 'out["pair"][1][0].real', 'out["pair"][1][0].imag']


@pytest.mark.parametrize("reduction", ["sum", "none"])
def test_tuple_and_dict_outputs_are_checked_whole(reduction):
    x = torch.linspace(0.2, 1.0, 4, dtype=torch.float64).requires_grad_()
    tup = gradlab.gradcheck(lambda x: (x.sin(), x.exp()[1:], torch.argmax(x)), x, mode="full",
                            reduction=reduction, grad_outputs="ones", taylor=False)
    dct = gradlab.gradcheck(lambda x: {"a": x.sin(), "b": x.exp()[1:]}, x, mode="full",
                            reduction=reduction, grad_outputs="ones", taylor=False)
    assert tup.passed and dct.passed
    expected = (x.cos() + torch.where(torch.arange(4) > 0, x.exp(), 0)).detach()  # with ones as grad_outputs
    np.testing.assert_allclose(tup.table["numeric"], expected, rtol=1e-7)
    np.testing.assert_allclose(dct.table["numeric"], expected, rtol=1e-7)


class _WrongSquare(torch.autograd.Function):
    """z*z whose backward forgets the conjugate torch's convention needs: right only for real z."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return grad * 2 * z


COMPLEX_FUNCTIONS = {
    "z_times_conj": lambda z: z * z.conj(),
    "exp": torch.exp,
    "abs_squared": lambda z: z.abs() ** 2,
    "matmul": lambda a: a @ torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(3, 2).to(a.dtype),
}


def _z(*shape):
    gen = torch.Generator().manual_seed(3)
    return torch.randn(*shape, generator=gen, dtype=torch.complex128).requires_grad_()


@pytest.mark.parametrize("name", COMPLEX_FUNCTIONS)
def test_complex_functions_pass_where_torch_gradcheck_passes(name):
    fn, z = COMPLEX_FUNCTIONS[name], _z(2, 3)
    assert torch.autograd.gradcheck(fn, (z,))
    r = gradlab.gradcheck(fn, z, mode="full", taylor=False)
    assert r.verdict == "pass" and len(r.table) == 2 * z.numel()
    name = parameter_names(fn, 1)[0]  # fn's parameter name; "input 0" for a builtin
    assert list(r.table["element"][:2]) == [f"{name}[0, 0].real", f"{name}[0, 0].imag"]


def test_complex_gradient_is_torch_z_grad_split_into_real_and_imaginary_parts():
    z = _z(5)
    r = gradlab.gradcheck(lambda z: z.abs() ** 2, z, mode="full", taylor=False, grad_outputs="ones")  # L = sum |z|^2
    expected = torch.view_as_real(2 * z.detach()).reshape(-1)  # torch's z.grad = dL/dre + i dL/dim = 2z
    np.testing.assert_allclose(r.table["numeric"], expected, rtol=1e-7)
    np.testing.assert_allclose(r.table["autograd"], expected, rtol=1e-12)


def test_a_wrong_complex_backward_fails_as_in_torch_gradcheck():
    z = _z(4)
    with pytest.raises(RuntimeError):
        torch.autograd.gradcheck(_WrongSquare.apply, (z,))
    assert gradlab.gradcheck(_WrongSquare.apply, z, mode="full", taylor=False).verdict == "fail"


def test_the_complex_step_is_refused_for_complex_inputs():
    with pytest.raises(GradLabError, match="complex step needs real inputs"):
        gradlab.gradcheck(torch.exp, _z(3), scheme="complex_step")


class _WrongLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w.T

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w, 2 * grad.T @ x  # the weight's gradient is twice what it should be


class _WrongLinear(torch.nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n_out, n_in, dtype=torch.float64))

    def forward(self, x):
        return _WrongLinearFn.apply(x, self.weight)


class _Net(torch.nn.Module):
    def __init__(self, middle: torch.nn.Module):
        super().__init__()
        torch.manual_seed(0)
        self.layers = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), middle).double()

    def forward(self, x):
        return self.layers(x)


def test_module_parameters_are_checked_and_named():
    net = _Net(torch.nn.Linear(4, 2).double())
    x = torch.randn(5, 3, dtype=torch.float64)
    r = gradlab.gradcheck(net, x, wrt="parameters", mode="full", taylor=False)
    assert r.verdict == "pass"
    assert len(r.table) == sum(p.numel() for p in net.parameters())
    assert "layers.0.weight[3, 1]" in set(r.table["element"])
    assert {e.split("[")[0] for e in r.table["element"]} == {n for n, _ in net.named_parameters()}
    assert all(p.grad is None for p in net.parameters())  # the module's own parameters are untouched


@pytest.mark.parametrize("seed", range(4))
def test_a_module_with_a_wrong_backward_in_one_layer_fails_at_that_parameter(seed):
    torch.manual_seed(seed)
    net = _Net(_WrongLinear(4, 2))
    # two worker threads: functional_call swaps parameters in place, so calls must not overlap
    r = gradlab.gradcheck(net, torch.randn(5, 3, dtype=torch.float64), wrt="parameters", mode="full",
                          taylor=False, workers=2)
    assert r.verdict == "fail"
    failing = {e.split("[")[0] for e in r.table.loc[~r.table["ok"], "element"]}
    assert failing == {"layers.2.weight"}
    assert "layers.2.weight[" in r.summary.message
    ratio = r.table.loc[~r.table["ok"], "ratio"].to_numpy()  # numeric / autograd = 1/2
    np.testing.assert_allclose(ratio, 0.5, rtol=1e-6)


def test_nothing_to_check_is_a_clear_error():
    with pytest.raises(GradLabError, match="No input to check"):
        gradlab.gradcheck(lambda n: torch.ones(1) * n, 3)
    with pytest.raises(GradLabError, match="floating-point or complex tensor"):
        gradlab.gradcheck(lambda i: i.double(), torch.arange(3), wrt=0)


def test_a_function_returning_no_tensor_is_a_clear_error():
    with pytest.raises(GradLabError, match="must return a floating-point or complex tensor"):
        gradlab.gradcheck(lambda x: math.pi, torch.ones(2, dtype=torch.float64))


def test_seed_style_mse_loss_with_a_target_argument():
    x = torch.randn(6, 5, dtype=torch.float64, requires_grad=True)
    t = torch.randn(6, 5, dtype=torch.float64)
    r = gradlab.gradcheck(F.mse_loss, x, t, mode="full", taylor=False, grad_outputs="ones")
    assert r.passed and len(r.table) == 30
    np.testing.assert_allclose(r.table["numeric"], (2 * (x - t) / 30).detach().reshape(-1), rtol=1e-7)


class _Doubling(torch.autograd.Function):
    """2·t forward, a backward that claims 3 where ``wrong`` is True (2 elsewhere)."""

    @staticmethod
    def forward(ctx, t, wrong):
        ctx.wrong = wrong
        return 2 * t

    @staticmethod
    def backward(ctx, g):
        return torch.where(ctx.wrong, 3 * g, 2 * g), None


def _one_wrong(n: int, at: int) -> torch.Tensor:
    return torch.arange(n) == at


@pytest.mark.parametrize("mode", ["full", "directional"])
@pytest.mark.parametrize("shape,outputs,culprit", [
    ("tuple", lambda x, w: (x.sin(), _Doubling.apply(x, w), x.exp()), "out[1]"),
    ("dict", lambda x, w: {"value": x.cos(), "scaled": _Doubling.apply(x, w)}, 'out["scaled"]'),
    ("nested", lambda x, w: (x.sin(), {"inner": [x * x, _Doubling.apply(x, w)]}), 'out[1]["inner"][1]'),
])
def test_a_fail_names_the_output_its_wrong_gradient_comes_through(shape, outputs, culprit, mode):
    x = torch.linspace(0.2, 1.4, 7, dtype=torch.float64)
    r = gradlab.gradcheck(outputs, x, _one_wrong(7, 4), mode=mode, taylor=False)
    assert r.verdict == "fail"
    named = r.summary.located if mode == "directional" else r.summary.worst
    assert named.label == "x[4]" and named.output == culprit
    assert f"x[4] (through {culprit})" in r.summary.message


def test_a_single_output_fail_names_no_output():
    x = torch.linspace(0.2, 1.4, 7, dtype=torch.float64)
    r = gradlab.gradcheck(lambda t, w: _Doubling.apply(t, w), x, _one_wrong(7, 2), mode="full", taylor=False)
    assert r.verdict == "fail" and r.summary.worst.output == "" and "through" not in r.summary.message
