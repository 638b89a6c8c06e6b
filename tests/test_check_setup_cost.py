"""What a check's set-up costs, counted: evaluations of fn, backward passes, copies, threads.

The default mode's fixed cost on a small module is its set-up, so each evaluation there must
earn its place: fn runs with grad once (its output parts that need no gradient are found on
that pass, and the backward runs twice on its graph for its nondeterminism, as torch's
gradcheck checks reentrance), the float64 witness is only built for a check in a lower
precision, the numeric side's value at x is the one the batching strategy's choice computed,
and every evaluation runs with torch on one thread. Counts, not times.
"""

from __future__ import annotations

import copy

import pytest
import torch

import gradlab
from gradlab.check.running.engine import check_gradient, checked_function
from gradlab.check.running.problem import autograd_gradient, autograd_side, numeric_problem
from gradlab.numerics.schemes import get_scheme


class _Counting:
    """fn = sin(x)·x summed with a constant second output, counting its calls by grad mode."""

    def __init__(self):
        self.with_grad = 0
        self.without_grad = 0
        self.threads: set[int] = set()

    def __call__(self, x):
        if torch.is_grad_enabled() and x.requires_grad:
            self.with_grad += 1
        else:
            self.without_grad += 1
        self.threads.add(torch.get_num_threads())
        return (x.sin() * x, x.detach().cos())  # the second part needs no gradient


def test_autograd_side_is_one_forward_pass_and_two_backwards_with_the_constant_part_left_out():
    fn = _Counting()
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    backwards = []
    hook = lambda grad: backwards.append(grad.clone())  # noqa: E731

    def traced(t):
        out = fn(t)
        if out[0].requires_grad:
            out[0].register_hook(hook)
        return out

    side = autograd_side(traced, [x], "sum", "ones", 0)
    assert fn.with_grad == 1 and len(backwards) == 2
    expected = (x.sin() + x * x.cos()).tolist()  # d/dx (x sin x)
    assert side.gradient.tolist() == pytest.approx(expected, rel=1e-15)
    assert side.again.tolist() == pytest.approx(expected, rel=1e-15)
    assert side.call.left_out == frozenset({"out[1]"})
    assert side.output.tolist() == pytest.approx((x.sin() * x).tolist(), rel=1e-15)
    # the same as the one-pass-per-question path it replaces
    g, y, _ = autograd_gradient(side.call, [x], "sum", "ones", 0)
    assert torch.equal(g, side.gradient) and torch.equal(y, side.output)


def test_a_float64_check_runs_fn_with_grad_once_and_on_one_thread():
    fn = _Counting()
    x = torch.linspace(-1, 1, 24, dtype=torch.float64)
    r = check_gradient(fn, x)
    assert r.verdict == "pass"
    assert fn.with_grad == 1  # was 3: output parts, gradient, gradient again
    assert fn.threads == {1}


def test_a_small_default_check_evaluates_fn_at_x_only_for_its_repeatability():
    fn = _Counting()
    x = torch.linspace(-1, 1, 24, dtype=torch.float64)  # 24 elements: 3 blocks of 8, 2 points each
    assert check_gradient(fn, x).verdict == "pass"
    # fn once at x without grad (reused as fn at x), its forward pass with grad as the second
    # call that shows it repeatable, then the 6 stencil rows one by one (too few to pay for
    # probing vmap or direct calls); the left-out constant part is dropped from the reused
    # output as from every row's
    assert (fn.without_grad, fn.with_grad) == (1 + 6, 1)


def test_the_threads_setting_is_restored_after_a_check():
    before = torch.get_num_threads()
    check_gradient(torch.sin, torch.ones(4, dtype=torch.float64))
    assert torch.get_num_threads() == before


class _NoCopy(torch.nn.Linear):
    """A module that refuses to be deep-copied (its float64 twin would be a copy)."""

    copies = 0

    def __deepcopy__(self, memo):
        type(self).copies += 1
        return copy.deepcopy(torch.nn.Linear(self.in_features, self.out_features), memo)


def test_a_float64_module_is_not_copied_for_a_float64_witness():
    torch.manual_seed(0)
    m = _NoCopy(3, 2).double()
    x = torch.randn(4, 3, dtype=torch.float64)
    _NoCopy.copies = 0
    assert gradlab.gradcheck(m, x, wrt="parameters").verdict == "pass"
    assert _NoCopy.copies == 0
    m32, x32 = m.float(), x.float()
    gradlab.gradcheck(m32, x32, wrt="parameters")
    assert _NoCopy.copies == 1  # a float32 check has its float64 witness


def test_the_numeric_value_at_x_is_the_strategy_choices_own_evaluation():
    calls = []

    def fn(t):
        calls.append(t.shape)
        return (t ** 3).sum(dim=-1)

    x = torch.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=torch.float64)
    p = numeric_problem(fn, [x], "sum", None, get_scheme("central"), 1e-3, torch.float64)
    assert p.loss == pytest.approx(float((x ** 3).sum()), rel=1e-15)
    # choosing the way of calling fn: fn at x, vmap at x, direct on one and on two stacked
    # copies; no further call for the value at x
    assert len(calls) == 4
    assert p.batched.strategy[torch.float64] == "direct"


def test_a_pass_builds_its_summary_on_first_read_and_a_fail_at_once(monkeypatch):
    import pickle

    from gradlab.check.running import engine

    built = []
    real = engine.summarize
    monkeypatch.setattr(engine, "summarize", lambda *a, **k: built.append(1) or real(*a, **k))
    x = torch.linspace(-1, 1, 6, dtype=torch.float64)
    r = check_gradient(torch.sin, x)
    assert r.verdict == "pass" and r.passed and not built  # the verdict needs no words
    sent = pickle.loads(pickle.dumps(r))  # a worker process sends it: the summary goes built
    assert built == [1] and sent.summary.verdict == "pass" and sent.summary.checked == r.summary.checked
    assert r.first_order.summary is r.summary and built == [1]  # built once for a result and its copies
    wrong = check_gradient(lambda t: t.detach() * t, x, mode="full")  # autograd says t, the truth is 2t
    assert wrong.verdict == "fail" and len(built) == 2  # a fail's words are built while fn is as it was


def test_the_tables_reader_columns_are_built_on_first_read_in_their_place():
    import pickle

    import numpy as np

    from gradlab.check.verdicts.columns import Columns, Later

    built = []
    t = Columns({"a": np.array([1.0, 2.0]), "b": Later(lambda: built.append("b") or np.array([3.0, 4.0])),
                 "c": np.array([5.0, 6.0])})
    joined = t.joined(d=np.zeros(2))
    assert not built and "b" in t and len(t) == 2
    assert list(joined.frame().columns) == ["a", "b", "c", "d"]  # the order the table was given in
    assert t["b"].tolist() == [3.0, 4.0] and built == ["b"]  # once for a table and its joined copies
    later = Columns({"x": Later(lambda: np.ones(2))}, 2)
    assert pickle.loads(pickle.dumps(later))["x"].tolist() == [1.0, 1.0]  # pickled computed
    x = torch.linspace(-1, 1, 6, dtype=torch.float64)
    r = check_gradient(lambda t: t ** 3, x, mode="full")
    assert r.table["element"].tolist() == [f"t[{k}]" for k in range(6)]  # fn's argument is named t
    assert r.table["rel_error"].tolist() == pytest.approx(
        (np.abs(r.table["autograd"] - r.table["numeric"]) / np.maximum(np.abs(r.table["autograd"]),
                                                                       np.abs(r.table["numeric"]))).tolist())



def test_a_module_over_its_parameters_is_not_probed_with_direct_calls():
    # stacked weights are a batch of weights no layer is written for: the choice is vmap or
    # the loop, after fn at x and one vmapped call (two direct calls more for a plain fn)
    model = torch.nn.Linear(8, 4).double()
    calls = []
    model.register_forward_pre_hook(lambda m, args: calls.append(args[0].shape))
    call, args = checked_function(model, (torch.randn(3, 8, dtype=torch.float64),), "parameters")
    p = numeric_problem(call, args.reals(), "sum", None, get_scheme("central"), 1e-3, torch.float64,
                        names=args.names)
    assert p.batched.strategy[torch.float64] == "vmap"
    assert len(calls) == 2

class _TiedWeight(torch.nn.Module):
    """One weight under two names (as a language model ties its embedding and output layer)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3, bias=False)
        self.register_parameter("again", self.lin.weight)

    def forward(self, x):
        return torch.tanh(self.lin(x) + x @ self.again)


def test_a_tied_weight_is_moved_under_both_its_names():
    # functional_call ties names only when asked: a check that moved one name of the weight
    # would check (and pass) the gradient of half the model's dependence on it
    torch.manual_seed(0)
    model, x = _TiedWeight().double(), torch.randn(4, 3, dtype=torch.float64)
    result = gradlab.gradcheck(model, x, wrt="parameters", mode="full", grad_outputs="ones")
    (weight,) = model.parameters()
    expected, = torch.autograd.grad(model(x).sum(), weight)  # through both names
    assert result.verdict == "pass"
    assert torch.allclose(torch.tensor(result.table["autograd"].to_numpy()), expected.reshape(-1))
