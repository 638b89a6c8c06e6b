"""Hostile calls of the public check API (issue 34): each ends in a result or one sentence, and
leaves the caller's modules and tensors exactly as they were.

- a module in training mode keeps its BatchNorm statistics and spectral_norm's power iteration
  (``gradlab.check.inputs.caller_state``), whether the check passes, fails, refuses or raises;
- any in-place op on an input, ``x.add_(0)`` included, is the same sentence;
- an fn that is not callable is a sentence;
- an fn writing to an argument it gets unchecked, or to a tensor it holds, is named as such,
  not blamed on randomness, and the caller's tensors are unchanged;
- fn NaN or inf at the given input is said plainly, naming the output values;
- no RuntimeWarning of the check's own leaks out (fn's own stay fn's);
- an fn that drops the imaginary part is a sentence under the complex-step scheme.

The expression language's parse from many threads is tests/test_expression_threads.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from torch import nn

import gradlab
from gradlab.check.inputs.validation import MODES
from gradlab.errors import GradLabError
from gradlab.testing import assert_gradients

F64 = torch.float64


def _state(module: nn.Module) -> dict[str, torch.Tensor]:
    """Every parameter and buffer, by name: the tensors themselves (not copies)."""
    return dict(module.state_dict(keep_vars=True))


def _copied(module: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in _state(module).items()}


def _bits(t: torch.Tensor) -> torch.Tensor:
    """A float tensor's bits as integers (torch.equal on them: a NaN equals itself, -0.0 is not 0.0)."""
    t = t.detach()
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]) if t.is_floating_point() else t


def _assert_as_it_was(module: nn.Module, objects: dict, values: dict) -> None:
    """The same tensor objects hold the same bits."""
    now = _state(module)
    assert now.keys() == objects.keys()
    for name, tensor in now.items():
        assert tensor is objects[name], f"{name} is another tensor"
        assert torch.equal(_bits(tensor), _bits(values[name])), f"{name} changed"


def _batchnorm1d():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh()).double().train()
    return model, (torch.randn(6, 3, dtype=F64),)


def _batchnorm2d():
    return nn.Sequential(nn.Conv2d(2, 3, 2), nn.BatchNorm2d(3)).double().train(), (torch.randn(3, 2, 4, 4, dtype=F64),)


def _spectral_old():
    return nn.utils.spectral_norm(nn.Linear(3, 4).double()).train(), (torch.randn(5, 3, dtype=F64),)


def _spectral_parametrized():
    return nn.utils.parametrizations.spectral_norm(nn.Linear(3, 4).double()).train(), (torch.randn(5, 3, dtype=F64),)


MODELS = {"BatchNorm1d": _batchnorm1d, "BatchNorm2d": _batchnorm2d, "spectral_norm": _spectral_old,
          "parametrizations.spectral_norm": _spectral_parametrized}


# ---------------------------------------------------------------- item 1: the caller's module


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("over", ["parameters", "inputs"])
@pytest.mark.parametrize("kind", list(MODELS))
def test_a_module_in_training_mode_is_left_exactly_as_it_was(kind, over, mode):
    torch.manual_seed(0)
    model, inputs = MODELS[kind]()
    objects, values = _state(model), _copied(model)
    weight = model.__dict__.get("weight")  # old-style spectral_norm's: set at every forward
    wrt = "parameters" if over == "parameters" else None
    try:
        r = gradlab.gradcheck(model, *inputs, wrt=wrt, mode=mode, samples=3)
    except GradLabError as err:  # spectral_norm in training mode: its power iteration moves at every call
        assert kind.endswith("spectral_norm"), err
        assert "at every call" in str(err) and "_u" in str(err) and "random" not in str(err), err
    else:
        assert r.verdict in ("pass", "inconclusive"), r.summary.text
    _assert_as_it_was(model, objects, values)
    if weight is not None:
        assert model.__dict__["weight"] is weight


def test_batchnorm_statistics_are_kept_by_assert_gradients_in_full_mode():
    torch.manual_seed(1)
    model, (x,) = _batchnorm1d()
    objects, values = _state(model), _copied(model)
    assert_gradients(model, x, wrt="parameters", mode="full")
    _assert_as_it_was(model, objects, values)
    assert int(model[1].num_batches_tracked) == 0


class _WrongAfterBatchNorm(nn.Module):
    """A BatchNorm in training mode, then an op whose gradient is wrong (detach drops a term)."""

    def __init__(self):
        super().__init__()
        self.lin, self.bn = nn.Linear(3, 4), nn.BatchNorm1d(4)

    def forward(self, x):
        y = self.bn(self.lin(x))
        return y.detach() ** 2 + y


@pytest.mark.parametrize("how", ["result", "raise_on_fail", "assert_gradients"])
def test_the_module_is_kept_when_the_check_fails_or_raises(how):
    torch.manual_seed(2)
    model, x = _WrongAfterBatchNorm().double().train(), torch.randn(6, 3, dtype=F64)
    objects, values = _state(model), _copied(model)
    if how == "result":
        assert gradlab.gradcheck(model, x, wrt="parameters").verdict == "fail"
    elif how == "raise_on_fail":
        with pytest.raises(gradlab.GradcheckError):
            gradlab.gradcheck(model, x, wrt="parameters", raise_on_fail=True)
    else:
        with pytest.raises(AssertionError, match="failed"):
            assert_gradients(model, x, wrt="parameters")
    _assert_as_it_was(model, objects, values)


def test_a_module_an_fn_uses_or_is_given_is_kept_too():
    torch.manual_seed(3)
    model, (x,) = _batchnorm1d()
    objects, values = _state(model), _copied(model)
    assert gradlab.gradcheck(lambda t: model(t).sum(), x).verdict == "pass"  # held in the closure
    assert gradlab.gradcheck(lambda t, m: m(t), x, model, wrt=0).verdict == "pass"  # an argument
    _assert_as_it_was(model, objects, values)


def test_a_check_refused_before_fn_runs_keeps_the_module():
    model, (x,) = _spectral_old()
    objects, values = _state(model), _copied(model)
    with pytest.raises(GradLabError, match="Unknown mode"):
        gradlab.gradcheck(model, x, wrt="parameters", mode="everything")
    _assert_as_it_was(model, objects, values)


def test_spectral_norm_in_eval_mode_passes_and_is_kept():
    model, (x,) = _spectral_old()
    model.eval()
    objects, values = _state(model), _copied(model)
    assert gradlab.gradcheck(model, x, wrt="parameters").verdict == "pass"
    _assert_as_it_was(model, objects, values)


# ---------------------------------------------------------------- item 2: every in-place op on an input


def _no_grad_add(t):
    with torch.no_grad():
        t.add_(1)
    return t.sin()


def _setitem(t):
    t[0] = t[0]
    return t.sin()


IN_PLACE = {
    "add_(0)": lambda t: t.add_(0).sin(),
    "add_(1)": lambda t: t.add_(1).sin(),
    "mul_(1)": lambda t: t.mul_(1).sin(),
    "sub_": lambda t: t.sub_(0.5).sin(),
    "clamp_ that changes nothing": lambda t: t.clamp_(min=-math.inf).sin(),
    "relu(inplace=True) on a positive input": lambda t: torch.relu_(t).sin(),
    "t[0] = t[0]": _setitem,
    "copy_ of itself": lambda t: t.copy_(t.detach().clone()).sin(),
    "t.data.add_(1)": lambda t: (t.data.add_(1), t.sin())[1],
    "add_ under no_grad": _no_grad_add,
}


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("op", list(IN_PLACE))
def test_every_in_place_op_on_an_input_is_the_same_sentence(op, requires_grad):
    x = torch.tensor([0.5, 1.0, 2.0], dtype=F64, requires_grad=requires_grad)
    before, version = x.detach().clone(), x._version

    def fn(t):
        return IN_PLACE[op](t)

    with pytest.raises(GradLabError, match=r"^fn changed its input in place \(t, by an op such as t\.add_\(1\)"):
        gradlab.gradcheck(fn, x)
    assert torch.equal(x.detach(), before) and x._version == version and x.grad is None


def test_an_in_place_op_only_with_grad_is_the_same_sentence_not_torchs_error():
    def fn(t):
        if torch.is_grad_enabled():
            t.add_(0)
        return t.sin()

    with pytest.raises(GradLabError, match=r"^fn changed its input in place \(by an op such as x\.add_\(1\)"):
        gradlab.gradcheck(fn, torch.ones(3, dtype=F64, requires_grad=True))


# ---------------------------------------------------------------- item 3: fn not callable


@pytest.mark.parametrize("fn", [42, None, "sin", torch.ones(3)])
def test_an_fn_that_cannot_be_called_is_a_sentence(fn):
    x = torch.ones(3, dtype=F64)
    pattern = r"^fn must be callable: a function or an nn\.Module that takes the inputs; got .* gradcheck\(fn, x"
    with pytest.raises(GradLabError, match=pattern):
        gradlab.gradcheck(fn, x)
    with pytest.raises(GradLabError, match=pattern):
        assert_gradients(fn, x)


def test_a_numeric_fn_that_cannot_be_called_is_a_sentence():
    with pytest.raises(GradLabError, match=r"^numeric_fn must be callable"):
        gradlab.gradcheck(torch.sin, torch.ones(3), numeric_float64=True, numeric_fn=3.0)


# ---------------------------------------------------------------- item 4: pass-through and held tensors


def test_an_fn_writing_to_an_argument_it_gets_unchecked_is_named_and_the_argument_kept():
    x = torch.tensor([0.5, 1.0, 2.0], dtype=F64, requires_grad=True)
    u = torch.ones(3, dtype=F64)
    before = u.clone()
    with pytest.raises(GradLabError, match=r"^fn changed its input in place \(u, which is passed through unchecked"):
        gradlab.gradcheck(lambda t, u: (t * u.add_(1)).sum(), x, u)
    assert torch.equal(u, before) and u._version == 0


def test_an_fn_writing_to_its_input_through_data_or_no_grad_leaves_the_callers_tensor():
    x = torch.tensor([0.5, 1.0, 2.0], dtype=F64, requires_grad=True)
    before = x.detach().clone()
    for fn in (IN_PLACE["t.data.add_(1)"], _no_grad_add):
        with pytest.raises(GradLabError, match="changed its input in place"):
            gradlab.gradcheck(fn, x)
        assert torch.equal(x.detach(), before)


def test_a_tensor_fn_holds_and_writes_to_is_named_not_blamed_on_randomness_and_kept():
    held = torch.ones(3, dtype=F64)
    before = held.clone()

    def fn(t):
        held.add_(1)
        return (t * held).sum()

    with pytest.raises(GradLabError) as caught:
        gradlab.gradcheck(fn, torch.tensor([0.5, 1.0, 2.0], dtype=F64))
    assert str(caught.value).startswith("fn changes held at every call") and "random" not in str(caught.value)
    assert torch.equal(held, before)


def test_a_held_tensor_fn_changes_without_changing_its_output_is_put_back():
    calls = torch.zeros((), dtype=torch.int64)

    def fn(t):
        calls.add_(1)  # a counter: the output does not depend on it, so the check passes
        return t.sin()

    assert gradlab.gradcheck(fn, torch.linspace(-1, 1, 5, dtype=F64)).verdict == "pass"
    assert int(calls) == 0


def test_randomness_is_still_called_randomness():
    with pytest.raises(GradLabError, match="different outputs on two calls.*random"):
        gradlab.gradcheck(lambda t: torch.nn.functional.dropout(t, 0.5, training=True), torch.ones(64, dtype=F64))


def test_a_strided_input_is_copied_with_its_layout():
    from gradlab.check.inputs.arguments import own_copy

    base = torch.arange(24, dtype=F64).reshape(4, 6)
    for view in (base[:, ::2], base.t(), base[1:3], torch.ones(3, dtype=F64).expand(4, 3)):
        copy = own_copy(view)
        assert copy.stride() == view.stride() and torch.equal(copy, view)
        assert copy.untyped_storage().data_ptr() != view.untyped_storage().data_ptr()


# ---------------------------------------------------------------- item 5: NaN or inf at the given input


def test_fn_nan_at_the_given_input_is_said_plainly_with_the_fix():
    x = torch.tensor([0.5, 2.0, 3.0], dtype=F64, requires_grad=True)
    r = gradlab.gradcheck(lambda t: torch.log(t - 1), x)
    assert r.verdict == "inconclusive" and r.summary.diagnosis.kind == "nonfinite"
    text = r.summary.text
    assert text.startswith("fn returns NaN or inf at the given input: out[0] = nan (1 of 3 output values)."), text
    assert "direction 0" not in text and "inside its domain" in r.summary.hint
    with pytest.raises(AssertionError, match=r"^fn returns NaN or inf at the given input: out\[0\] = nan"):
        assert_gradients(lambda t: torch.log(t - 1), x)


def test_the_nonfinite_output_values_are_named_in_their_parts():
    x = torch.tensor([1.0, 1000.0], dtype=F64)
    r = gradlab.gradcheck(lambda t: {"a": t.sin(), "b": t.exp()}, x, mode="full")
    assert r.summary.text.startswith('fn returns NaN or inf at the given input: out["b"][1] = inf (1 of 4'), \
        r.summary.text
    r = gradlab.gradcheck(torch.sin, torch.tensor([math.nan, 1.0], dtype=F64))
    assert "the input itself holds NaN or inf at [0] of input 0" in r.summary.text


# ---------------------------------------------------------------- item 6: no warning of the check's own


def _hostile_cases():
    t = lambda *v, dtype=F64: torch.tensor(v, dtype=dtype)  # noqa: E731
    huge, tiny = t(1e308, -1e308, 1.0), t(1e-320, 5e-324, 0.0)
    return {
        "sin": (torch.sin, t(0.3, -1.2, 2.0), {}),
        "exp overflowing": (torch.exp, t(1000.0, 1.0), {}),
        "log of a negative": (torch.log, t(-1.0, 2.0), {}),
        "1/x at 0": (lambda v: 1 / v, t(0.0, 1.0), {}),
        "sqrt at 0": (torch.sqrt, t(0.0, 1.0), {}),
        "huge inputs": (torch.abs, huge, {}),
        "huge inputs, five_point": (torch.exp, huge, {"scheme": "five_point"}),
        "huge inputs in float16": (torch.abs, t(6e4, -6e4, 1.0, dtype=torch.float16), {}),
        "subnormal inputs": (lambda v: v * 1e300 * 1e10, tiny, {"mode": "directional"}),
        "constant overflow": (lambda v: v * 1e300 * 1e10, t(1.0, 1.0), {}),
        "inf and nan inputs": (torch.sin, t(math.inf, math.nan, 1.0), {}),
        "float32 huge, numeric_float64": (torch.abs, t(3e38, 1.0, dtype=torch.float32), {"numeric_float64": True}),
        "floor at huge": (torch.floor, huge, {"reduction": "mean", "taylor": True}),
        "complex step at overflow": (lambda v: v * 1e300 * 1e10, t(700.0, 1.0), {"scheme": "complex_step"}),
        "forward and second order": (torch.sin, t(0.3, -1.2), {"check_forward": True, "order": 2}),
    }


@pytest.mark.parametrize("mode", ["blocks", "full"])
@pytest.mark.parametrize("case", list(_hostile_cases()))
def test_no_warning_of_the_checks_own_leaks(case, mode):
    fn, x, options = _hostile_cases()[case]
    options = {"mode": mode, **options}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            r = gradlab.gradcheck(fn, x, **options)
        except GradLabError:
            return
        for part in (r, r.forward, r.second_order):  # every column, the summary: built when read
            if part is not None:
                _ = part.summary.text, [part.table[c] for c in part.table.columns], part.error_map


def test_no_warning_leaks_from_assert_gradients_either(recwarn):
    with pytest.raises(AssertionError):
        assert_gradients(torch.exp, torch.tensor([1000.0, 1.0], dtype=F64), mode="full")
    assert [str(w.message) for w in recwarn] == []


def test_fns_own_numpy_warnings_are_still_its_own():
    def fn(t):
        np.float64(1.0) / np.float64(0.0)  # the caller's numpy warns here, as it would outside the check
        return t.sin()

    with pytest.warns(RuntimeWarning, match="divide by zero"):
        assert gradlab.gradcheck(fn, torch.linspace(-1, 1, 4, dtype=F64)).verdict == "pass"


# ---------------------------------------------------------------- the complex step on a real-valued fn


@pytest.mark.parametrize("mode", MODES)
def test_the_complex_step_on_an_fn_that_drops_the_imaginary_part_is_a_sentence(mode):
    # torch's own 'imag is not implemented for tensors with non-complex dtypes' came out raw
    with pytest.raises(GradLabError, match=r"^The complex-step scheme reads .* fn returned real numbers .* "
                                           r"pick another scheme, such as central\.$"):
        gradlab.gradcheck(torch.abs, torch.tensor([1.0, 2.0], dtype=F64), scheme="complex_step", mode=mode)
