"""assert_gradients (gradlab.testing) as a pytest assertion, and the README's example test suite."""

import importlib
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import gradlab
import gradlab.testing
from gradlab.testing import assertions
from gradlab.testing.assertions import assert_gradients

ROOT = Path(__file__).resolve().parents[1]


def _x(*shape):
    return torch.linspace(-1.5, 2.0, int(torch.Size(shape).numel()), dtype=torch.float64).reshape(shape)


def test_the_public_names_are_the_same_function():
    from gradlab.step_sweep.api import sweep

    assert gradlab.assert_gradients is gradlab.testing.assert_gradients is assert_gradients
    assert gradlab.sweep is sweep  # the function, not a package


def test_gradlab_sweep_is_the_sweep_function_whatever_is_imported():
    from gradlab import sweep
    from gradlab.step_sweep.api import sweep as direct_sweep

    called = sweep("x**3", at=2.0, dtypes="float64", schemes="central", points=5)
    direct = direct_sweep("x**3", at=2.0, dtypes="float64", schemes="central", points=5)
    assert float(called.autograd.loc[0, "value"]) == 12.0  # d/dx x**3 = 3x**2 at 2
    assert called.table.equals(direct.table)
    # importing the sweep's package and its modules binds gradlab.step_sweep, never gradlab.sweep
    importlib.import_module("gradlab.step_sweep.step_range")
    assert gradlab.sweep is direct_sweep and "gradlab.sweep" not in sys.modules
    assert type(sys.modules["gradlab.step_sweep"]) is type(sys)  # a plain module: no class swapped in
    assert gradlab.step_sweep.SweepSettings.__module__ == "gradlab.step_sweep.engine"


def test_a_right_gradient_passes_silently():
    assert assert_gradients(torch.sin, _x(4, 3).requires_grad_()) is None


def test_a_wrong_gradient_raises_with_the_checks_message():
    x = _x(6)  # autograd of x.detach()·x is x, the truth is 2x: wrong wherever x != 0
    expected = gradlab.gradcheck(lambda t: t.detach() * t, x, mode="full", taylor=False).summary.text
    with pytest.raises(AssertionError) as caught:
        assert_gradients(lambda t: t.detach() * t, x.requires_grad_(), mode="full", taylor=False)
    assert str(caught.value) == expected


def test_only_the_tensors_that_require_grad_are_checked_and_the_rest_pass_through():
    x, w = _x(3, 4).requires_grad_(), _x(4, 2)
    seen = []

    def fn(x, w, power, name):
        seen.append((w.requires_grad, power, name))
        return (x @ w) ** power

    assert_gradients(fn, x, w, 2, "layer", mode="full", taylor=False)
    assert {s[1:] for s in seen} == {(2, "layer")} and not any(s[0] for s in seen)

    def wrong_in_w(x, w):  # the error is in w's gradient, which is not checked unless w requires grad
        return x @ w.detach()

    assert_gradients(wrong_in_w, x, w, taylor=False)
    with pytest.raises(AssertionError):
        assert_gradients(wrong_in_w, x.detach().requires_grad_(), w.requires_grad_(), mode="full", taylor=False)


class _WrongJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x.exp()

    @staticmethod
    def backward(ctx, g):
        return g * ctx.saved_tensors[0].exp()

    @staticmethod
    def jvp(ctx, t):
        return 2 * t * ctx.saved_tensors[0].exp()


class _DetachedBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    def backward(ctx, g):
        return g * ctx.saved_tensors[0].detach().exp()


@pytest.mark.parametrize("fn, option, what", [
    (_WrongJvp.apply, {"check_forward": True}, "[forward mode]"),
    (_DetachedBackward.apply, {"order": 2}, "[second order]"),
])
def test_forward_mode_and_second_order_are_asked_for_by_option(fn, option, what):
    x = _x(5).requires_grad_()
    assert_gradients(fn, x, taylor=False)  # the first-order gradient is right
    with pytest.raises(AssertionError) as caught:
        assert_gradients(fn, x, taylor=False, **option)
    assert str(caught.value).startswith(what)


@pytest.mark.parametrize("verdict, option", [("inconclusive", "allow_inconclusive"),
                                             ("not_differentiable", "allow_not_differentiable")])
def test_cannot_tell_raises_unless_allowed(monkeypatch, verdict, option):
    # Today's gradcheck has no such verdicts: a stand-in result carries one.
    stand_in = SimpleNamespace(verdict=verdict, summary=SimpleNamespace(text="the bound exceeds the tolerance"))
    monkeypatch.setattr(assertions, "_checks", lambda *a: iter([("gradient", stand_in)]))
    with pytest.raises(AssertionError, match=f"verdict {verdict}; pass {option}=True"):
        assert_gradients(torch.sin, _x(2))
    assert assert_gradients(torch.sin, _x(2), **{option: True}) is None
    other = "allow_not_differentiable" if option == "allow_inconclusive" else "allow_inconclusive"
    with pytest.raises(AssertionError):
        assert_gradients(torch.sin, _x(2), **{other: True})


def _readme_block(heading: str) -> str:
    text = (ROOT / "README.md").read_text()
    after = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", after, re.S).group(1)


@pytest.mark.server  # starts a process
def test_the_readme_example_test_suite_runs_and_passes(tmp_path):
    code = _readme_block("### In a test suite")
    tests = re.findall(r"^def (test_\w+)", code, re.M)
    assert len(tests) >= 3
    (tmp_path / "test_readme_example.py").write_text(code)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{len(tests)} passed" in run.stdout
