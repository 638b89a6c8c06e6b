"""order=2 and check_forward take what first order takes, held to torch's own checkers.

The reference is torch on the same function and inputs: ``torch.autograd.gradgradcheck``
for ``order=2`` and ``torch.autograd.gradcheck(check_forward_ad=True)`` for
``check_forward=True``. GradLab must pass where torch passes (tuple outputs, outputs
that need no gradient, real->complex and complex->real functions, pass-through
arguments) and fail where a planted wrong double backward or JVP makes torch fail.
The operator corpus is the first float64 sample of operators in PyTorch's own OpInfo
database (``op_db``); the names below are those whose torch check passes and that
finish in a few seconds each on 2 cores (measured over all of op_db: sin's and fft.fft's
samples take 10-45 s, so are left out; the slow tier runs about a minute on 2 workers,
the fast tier a handful of tuple-output and complex ones).
"""

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import gradlab
from gradlab.check.differences.error_bounds import bound_of, roundoff_bound
from gradlab.errors import GradLabError
from gradlab.numerics.schemes import get_scheme

common = pytest.importorskip("torch.testing._internal.common_methods_invocations",
                             reason="op_db needs the expecttest package (requirements-dev.txt)")

# Tuple outputs, outputs without a gradient (indices, saved statistics), real<->complex; ops that
# read their input's storage (as_strided*) or need its memory format (native_group_norm).
STORAGE_OPS = ["as_strided", "as_strided_copy", "as_strided_scatter", "native_group_norm"]
SECOND_FAST = ["chunk", "var_mean", "aminmax", "kthvalue", "view_as_complex", "complex", *STORAGE_OPS]
FORWARD_FAST = ["view_as_complex", "complex", "native_batch_norm", "var_mean", "chunk", *STORAGE_OPS]
SECOND_SLOW = [
    "unsafe_chunk", "cummax", "cummin", "var_mean.unbiased", "std_mean", "std_mean.unbiased",
    "max.reduction_with_dim", "min.reduction_with_dim", "native_layer_norm", "native_batch_norm",
    "lu_unpack", "topk", "mode", "split", "split_with_sizes", "tensor_split", "unbind", "polar",
    "fft.rfft", "fft.ifft", "linalg.eigh", "linalg.qr", "linalg.cholesky_ex",
    "nn.functional.max_pool1d", "frexp", "broadcast_tensors", "abs", "mul", "addmm", "sinc",
]
FORWARD_SLOW = [
    "unsafe_chunk", "cummax", "std_mean", "max.reduction_with_dim", "native_layer_norm", "lu_unpack",
    "topk", "split", "unbind", "polar", "fft.rfft", "fft.ifft", "linalg.eigh", "linalg.qr",
    "frexp", "abs", "addmm", "sinc",
]


def _op(name: str):
    for op in common.op_db:
        if op.name + ("." + op.variant_test_name if op.variant_test_name else "") == name:
            return op
    raise LookupError(name)


def _case(name: str, dtype=torch.float64):
    """(fn, args) of the op's first sample: args as fn takes them (tensors that require grad
    are the checked ones; the others, and Python values, pass through)."""
    op = _op(name)
    sample = next(iter(op.sample_inputs("cpu", dtype, requires_grad=True)))

    def fn(*args):
        return sample.output_process_fn_grad(op.gradcheck_wrapper(op.get_op(), *args, **sample.kwargs))

    return fn, [sample.input, *sample.args]


def _cases(name: str, dtype=torch.float64):
    """(fn, args, keyword arguments) of every sample of the op, as :func:`_case` gives the first."""
    op = _op(name)
    for sample in op.sample_inputs("cpu", dtype, requires_grad=True):
        def fn(*args, sample=sample):
            return sample.output_process_fn_grad(op.gradcheck_wrapper(op.get_op(), *args, **sample.kwargs))

        yield fn, [sample.input, *sample.args], sample.kwargs


def _passes(part) -> bool:
    """A pass, or nothing to test: fn does not change with the inputs (native_group_norm over groups of one
    element: the normalised output is its bias), which GradLab calls inconclusive and torch a pass."""
    return part.verdict == "pass" or (part.verdict == "inconclusive" and part.summary.vacuous)


def _torch_second(fn, args) -> bool:
    return torch.autograd.gradgradcheck(fn, tuple(args), raise_exception=False)


def _torch_forward(fn, args) -> bool:
    return torch.autograd.gradcheck(fn, tuple(args), check_forward_ad=True, check_backward_ad=False,
                                    check_undefined_grad=False, check_batched_grad=False, raise_exception=False)


def _second(fn, args, **kw):
    return gradlab.gradcheck(fn, *args, mode="full", order=2, **kw).second_order


def _forward(fn, args, **kw):
    return gradlab.gradcheck(fn, *args, mode="full", check_forward=True, **kw).forward


def _agree_second(name):
    fn, args = _case(name)
    assert _torch_second(fn, args), f"{name}: torch's gradgradcheck is the reference and must pass"
    result = _second(fn, args)
    assert result.verdict == "pass", (name, result.summary.text)


def _agree_forward(name):
    fn, args = _case(name)
    assert _torch_forward(fn, args), f"{name}: torch's forward-AD gradcheck is the reference and must pass"
    result = _forward(fn, args)
    assert result.verdict == "pass", (name, result.summary.text)


@pytest.mark.parametrize("name", SECOND_FAST)
def test_second_order_passes_where_gradgradcheck_passes(name):
    _agree_second(name)


@pytest.mark.parametrize("name", FORWARD_FAST)
def test_forward_mode_passes_where_torchs_forward_check_passes(name):
    _agree_forward(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SECOND_SLOW)
def test_second_order_passes_on_the_op_corpus(name):
    _agree_second(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", FORWARD_SLOW)
def test_forward_mode_passes_on_the_op_corpus(name):
    _agree_forward(name)


# --- ops that read the storage under their input (as_strided: its strides and offset count from
# --- the storage's start) or refuse an input in another memory format (native_group_norm): the
# --- perturbed copies fn gets must be laid out as the input, in storage of their own.

@pytest.mark.parametrize("name", STORAGE_OPS)
def test_storage_and_memory_format_ops_agree_with_torch_on_every_sample_in_every_order(name):
    """Every op_db sample, first order, forward mode and second order, default and full modes.
    Before, a looped row was a view deep into the stacked rows (as_strided read the first row
    there: a right gradient failed, or was inconclusive) and native_group_norm's batching rule
    refused a stack of rows of several inputs ("Expected X.is_contiguous(memory_format)").

    Two ops' first order are torch's own xfails in op_db (TestBwdGradients.test_fn_grad).
    as_strided_scatter's backward passes the gradient on to the input elements the scatter
    overwrites (their true derivative is 0: the output does not depend on them), so GradLab
    fails it as torch does, naming such an element, where the finite difference is 0 and
    autograd is not. native_group_norm's backward drops the gradients of its mean and rstd
    outputs when the normalised output's is undefined, which torch's output-by-output Jacobian
    hits (on most samples), while a loss over every output (what GradLab checks) has the right
    gradient: it passes."""
    for k, (fn, args, kwargs) in enumerate(_cases(name)):
        if name != "native_group_norm" or k == 0:  # torch's checks take 1.6 s a sample there (GradLab's 0.15 s)
            assert _torch_forward(fn, args) and _torch_second(fn, args), (name, k)
        if name != "native_group_norm":
            first_by_torch = torch.autograd.gradcheck(fn, tuple(args), raise_exception=False)
            assert first_by_torch is (name != "as_strided_scatter"), (name, k)
        for mode in ("blocks", "full"):
            r = gradlab.gradcheck(fn, *args, mode=mode, check_forward=True, order=2)
            assert _passes(r.forward), (name, k, mode, r.forward.summary.text)
            assert _passes(r.second_order), (name, k, mode, r.second_order.summary.text)
            if name != "as_strided_scatter":
                assert _passes(r.first_order), (name, k, mode, r.summary.text)
                continue
            assert r.first_order.verdict == "fail", (name, k, mode, r.summary.text)
            named = r.summary.located or r.summary.worst
            base, size, stride = args[0], args[2], args[3]  # (input, src, size, stride): the input is contiguous
            overwritten = torch.arange(base.numel()).as_strided(size, stride, kwargs.get("storage_offset", 0))
            assert named.flat_index in overwritten.reshape(-1).tolist(), (k, named)  # an input element overwritten
            assert named.numeric == 0.0 and named.autograd != 0.0, (k, named)


def _reads_storage(t):
    """Elements 1..4 of t's storage, as a 2x2 column-major matrix: what is there depends on t's layout."""
    return torch.as_strided(t, (2, 2), (1, 2), 1).exp()


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "channels_last"])
def test_as_strided_reads_the_storage_of_an_input_in_its_own_layout(layout):
    """torch's check perturbs the input itself, so as_strided reads the input's own storage order;
    GradLab's perturbed copies keep the input's strides (a copy of it keeps them: torch.empty_like),
    in every mode and in each of fn's ways of being called (vmap, a direct call, a loop)."""
    g = torch.Generator().manual_seed(0)
    x = {"contiguous": lambda: torch.randn(3, 3, dtype=torch.float64, generator=g),
         "transposed": lambda: torch.randn(3, 3, dtype=torch.float64, generator=g).t(),
         "channels_last": lambda: torch.randn(1, 2, 2, 2, dtype=torch.float64, generator=g).to(
             memory_format=torch.channels_last)}[layout]().requires_grad_()
    assert torch.autograd.gradcheck(_reads_storage, (x,)) and torch.autograd.gradgradcheck(_reads_storage, (x,))

    def looped(t):  # data-dependent control flow: neither vmap nor a direct call, a loop over the rows
        return _reads_storage(t) if bool(t.sum() > -1e9) else t

    for fn in (_reads_storage, looped):
        for mode in ("blocks", "sampled", "full", "directional"):
            r = gradlab.gradcheck(fn, x, mode=mode, samples=8, check_forward=True, order=2)
            assert [p.verdict for _, p in r.parts] == ["pass"] * 3, (fn.__name__, mode, r.summary.text)


# --- planted errors: the first derivative right (torch's gradcheck passes), the JVP or the
# --- double backward wrong; each with its right twin, which must pass.

from test_forward_second_order import CubeGradWrong  # noqa: E402  3x² whose own derivative is 5x, not 6x


def _cube_grad(x, wrong: bool):
    return CubeGradWrong.apply(x) if wrong else 3 * x ** 2


def _complex_pair(wrong: bool):
    class ComplexPair(torch.autograd.Function):
        """(a, b) -> a + ib (real -> complex); the JVP's imaginary part doubled when wrong."""

        @staticmethod
        def forward(ctx, a, b):
            return torch.complex(a, b)

        @staticmethod
        def backward(ctx, g):
            return g.real, g.imag

        @staticmethod
        def jvp(ctx, ta, tb):
            return torch.complex(ta, tb * (2.0 if wrong else 1.0))

    return ComplexPair.apply


def _squared_modulus(wrong: bool):
    class SquaredModulus(torch.autograd.Function):
        """z -> |z|² (complex -> real); the JVP's Im-part term 1.5x too large when wrong."""

        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            ctx.save_for_forward(z)
            return z.real ** 2 + z.imag ** 2  # a new tensor: a view of z would need a view tangent

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * 2 * z  # torch's convention: ∂L/∂Re z + i·∂L/∂Im z

        @staticmethod
        def jvp(ctx, t):
            (z,) = ctx.saved_tensors
            return 2 * (z.real * t.real + (1.5 if wrong else 1.0) * z.imag * t.imag)

    return SquaredModulus.apply


def _sin_cos(wrong: bool):
    class SinCos(torch.autograd.Function):
        """x -> (sin x, cos x) (a tuple); the second output's JVP 1.5x too large when wrong."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return g1 * x.cos() - g2 * x.sin()

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * x.cos(), -t * x.sin() * (1.5 if wrong else 1.0)

    return SinCos.apply


def _cube_square(wrong: bool):
    class CubeSquare(torch.autograd.Function):
        """x -> (x³, x²) (a tuple) whose backward is right and, when wrong, not rightly differentiable."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3, x ** 2

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return g1 * _cube_grad(x, wrong) + g2 * 2 * x

    return CubeSquare.apply


def _complex_cube(wrong: bool):
    class ComplexCube(torch.autograd.Function):
        """x -> x³ + ix (real -> complex); its backward's own derivative wrong when wrong."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.complex(x ** 3, x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g.real * _cube_grad(x, wrong) + g.imag

    return ComplexCube.apply


def _detached_grad_output(wrong: bool):
    class Sine(torch.autograd.Function):
        """sin, whose backward, when wrong, detaches its grad_output: right values, but its
        derivative in grad_output (what gradgradcheck also checks) is 0 to autograd."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return (g.detach() if wrong else g) * x.cos()

    return Sine.apply


def _square_complex(wrong: bool):
    class Square(torch.autograd.Function):
        """z -> z² (complex -> complex); backward g·conj(2z), from a detached z when wrong."""

        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * (2 * (z.detach() if wrong else z)).conj()

    return Square.apply


def _x(*shape, dtype=torch.float64, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype) + 0.5


PLANTED_FORWARD = {  # name: (maker, inputs)
    "real_to_complex": (_complex_pair, lambda: [_x(3, 2), _x(3, 2, seed=1)]),
    "complex_to_real": (_squared_modulus, lambda: [_x(4, dtype=torch.complex128)]),
    "tuple_outputs": (_sin_cos, lambda: [_x(2, 3)]),
}
PLANTED_SECOND = {
    "tuple_outputs": (_cube_square, lambda: [_x(2, 3)]),
    "real_to_complex": (_complex_cube, lambda: [_x(5)]),
    "detached_grad_output": (_detached_grad_output, lambda: [_x(5)]),
    "complex_to_complex": (_square_complex, lambda: [_x(4, dtype=torch.complex128)]),
}


@pytest.mark.parametrize("wrong", [False, True])
@pytest.mark.parametrize("name", PLANTED_FORWARD)
def test_forward_mode_fails_where_a_planted_jvp_makes_torch_fail(name, wrong):
    maker, inputs = PLANTED_FORWARD[name]
    fn, xs = maker(wrong), [t.requires_grad_(True) for t in inputs()]
    assert torch.autograd.gradcheck(fn, tuple(xs))  # the backward is right
    expected = _torch_forward(fn, xs)
    assert expected is not wrong  # the reference sees the planted error, and only it
    result = gradlab.gradcheck(fn, *xs, mode="full", check_forward=True)
    assert result.first_order.verdict == "pass"
    assert result.forward.verdict == ("fail" if wrong else "pass"), result.forward.summary.text


@pytest.mark.parametrize("wrong", [False, True])
@pytest.mark.parametrize("name", PLANTED_SECOND)
def test_second_order_fails_where_a_planted_double_backward_makes_gradgradcheck_fail(name, wrong):
    maker, inputs = PLANTED_SECOND[name]
    fn, xs = maker(wrong), [t.requires_grad_(True) for t in inputs()]
    assert torch.autograd.gradcheck(fn, tuple(xs))
    assert _torch_second(fn, xs) is not wrong
    result = gradlab.gradcheck(fn, *xs, mode="full", order=2)
    assert result.first_order.verdict == "pass"
    assert result.second_order.verdict == ("fail" if wrong else "pass"), result.second_order.summary.text


@pytest.mark.parametrize("mode", ["sampled", "directional"])
def test_a_planted_error_is_caught_in_the_cheaper_modes_too(mode):
    fn, x = _complex_pair(True), [_x(3, 2), _x(3, 2, seed=1)]
    assert gradlab.gradcheck(fn, *x, mode=mode, samples=12, check_forward=True).forward.verdict == "fail"
    fn2 = _cube_square(True)
    assert gradlab.gradcheck(fn2, _x(2, 3), mode=mode, samples=12, order=2).second_order.verdict == "fail"


def test_outputs_without_a_gradient_are_left_out_in_every_check():
    """A detached statistic and an index beside a differentiable output: torch's checkers skip
    them; a finite difference of the detached one moves while autograd says 0, so a check
    that compared it would fail."""
    def fn(x):
        return x.sin(), x.detach() * 2, x.argmax()

    x = _x(6).requires_grad_(True)
    assert torch.autograd.gradcheck(fn, (x,)) and _torch_second(fn, [x]) and _torch_forward(fn, [x])
    result = gradlab.gradcheck(fn, x, mode="full", check_forward=True, order=2)
    assert [p.verdict for _, p in result.parts] == ["pass"] * 3, result.summary.text
    assert set(result.table["element"]) == {f"x[{i}]" for i in range(6)}


def test_pass_through_arguments_and_names_reach_the_higher_checks():
    def fn(x, scale, power):
        return (x * scale) ** power

    x, scale = _x(4), torch.tensor(3.0, dtype=torch.float64)
    result = gradlab.gradcheck(fn, x.requires_grad_(True), scale, 3, mode="full", check_forward=True, order=2)
    assert result.verdict == "pass", result.summary.text
    assert result.forward.table["element"].tolist() == [f"x[{i}]" for i in range(4)]
    assert result.second_order.table["element"].tolist()[:4] == [f"x[{i}]" for i in range(4)]
    assert result.second_order.table["element"].tolist()[4:] == [f"grad_outputs[{i}]" for i in range(4)]


# --- tensors a check cannot take: one sentence each, in every check ---

UNUSABLE = {
    "sparse_coo": lambda: torch.eye(3, dtype=torch.float64).to_sparse(),
    "sparse_csr": lambda: torch.eye(3, dtype=torch.float64).to_sparse_csr(),
    "sparse_csr_complex": lambda: torch.eye(3, dtype=torch.complex128).to_sparse_csr(),
    "meta": lambda: torch.ones(3, dtype=torch.float64, device="meta"),
    "float8_e4m3fn": lambda: torch.ones(3).to(torch.float8_e4m3fn),
    "float8_e5m2": lambda: torch.ones(3).to(torch.float8_e5m2),
}
_SENTENCE_BREAK = re.compile(r"[.!?]\s+[A-Z]")


@pytest.mark.parametrize("extra", [{}, {"order": 2}, {"check_forward": True}])
@pytest.mark.parametrize("kind", UNUSABLE)
def test_sparse_meta_and_8_bit_inputs_are_refused_in_one_sentence(kind, extra):
    x = UNUSABLE[kind]()
    with pytest.raises(GradLabError) as err:
        gradlab.gradcheck(lambda t: t.sum(), x, mode="full", **extra)
    text = str(err.value)
    assert text.endswith(".") and "\n" not in text and not _SENTENCE_BREAK.search(text), text
    word = {"sparse": "sparse", "meta": "meta", "float8": "8-bit"}[kind.split("_")[0]]
    assert word in text and text.startswith("t "), text  # names the input and the cause


def test_a_sparse_output_is_refused_in_one_sentence():
    with pytest.raises(GradLabError, match=r"^The function returned out as a sparse or meta tensor; ") as err:
        gradlab.gradcheck(lambda t: t.diag().to_sparse(), _x(3), mode="full")
    assert str(err.value).endswith(".") and not _SENTENCE_BREAK.search(str(err.value))


# --- the Richardson bound counts what round-off can hide of the truncation ---

@settings(max_examples=200, deadline=None)
@given(c=st.floats(-1e3, 1e3), h=st.floats(1e-6, 1e-1), scale=st.floats(1e-3, 1e12),
       e1=st.floats(-1, 1), e2=st.floats(-1, 1))
def test_a_central_difference_error_is_within_its_bound(c, h, scale, e1, e2):
    """D(h) = f' + c·h² + e(h), D(h/2) = f' + c·h²/4 + e(h/2), each e within its round-off
    bound (R and 2R): the bound of D(h) holds its true error, however the e's fall (they may
    cancel the change from h to h/2 that Richardson reads the truncation from)."""
    s = get_scheme("central")
    r = float(roundoff_bound(s, torch.float64, np.array([1.0]), np.array([scale]), np.array([h]))[0])
    exact = 0.7
    d_h = exact + c * h * h + e1 * r
    d_half = exact + c * h * h / 4 + e2 * 2 * r
    b = bound_of(s, torch.float64, np.array([d_h]), np.array([d_half]), np.array([scale]), np.array([h]))
    # plus the rounding of this test's own sums (0.7 + c·h² carries u·0.7 = 8e-17; with scale 4e-3
    # the model's round-off is below it: c = 3.76e-6, h = 0.094 missed by 1.5e-9 relative)
    assert abs(d_h - exact) <= float(b.bound[0]) * (1 + 1e-9) + 4 * np.finfo(np.float64).eps * exact


def test_complex_sinc_summed_over_outputs_up_to_1e10_is_not_failed():
    """complex128 sinc at op_db's sample (|Im z| up to 10: outputs up to 1.2e10): its summed
    loss rounds by ~1e-6, more than the tolerance allows the finite difference; torch (per
    output, no sum) passes, and so must GradLab with reduction none; summed, never fail."""
    fn, (z,) = _case("sinc", torch.complex128)
    assert torch.autograd.gradcheck(fn, (z,))
    summed = gradlab.gradcheck(fn, z, mode="full")
    assert summed.verdict in ("pass", "inconclusive"), summed.summary.text
    assert gradlab.gradcheck(fn, z, mode="full", reduction="none").verdict == "pass"


def test_as_strided_past_its_inputs_own_elements_is_refused_in_one_sentence():
    """op_db's as_strided.partial_views, third sample: a storage offset of 10 on a 10-element input
    reads memory beyond it. Torch perturbs the input in place, so the read stays within the
    caller's storage (and the gradient is 0); GradLab's copy holds the input's elements only, so
    torch raised its raw 'setStorage: ... out of bounds for storage of size 80'."""
    x = torch.arange(20.0, dtype=torch.float64)[:10].requires_grad_()
    with pytest.raises(GradLabError, match="^fn reads memory beyond its input's own elements.*base of the view"):
        gradlab.gradcheck(lambda t: torch.as_strided(t, (2, 2), (1, 2), 10), x)
    # fn's own errors are still fn's own
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        gradlab.gradcheck(lambda t: t @ torch.ones(3, 3, dtype=torch.float64), x)
