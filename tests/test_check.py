"""Tensor gradient checks: expected values come from calculus, not from the code's output."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch

import gradlab
from gradlab.check.running.batching import BatchedFn, FlatInputs
from gradlab.check.api import GradcheckError, gradcheck
from gradlab.check.lab.reduction_sweep import CHECK_SWEEP_ELEMENTS, check_sweep, reduction_sweep, sweep_settings_for
from gradlab.errors import GradLabError, LimitError
from gradlab.limits import LIMITS
from gradlab.check.lab.builtin_models import build_model_loss
from gradlab.check.lab.settings import CheckSettings, parse_shape, run_check
from gradlab.numerics.dtypes import DTYPES, facts

MSE_SUM_CHECK = dict(model="affine", shape=(140, 120), loss="mse", scheme="forward", eps=1e-3,
                mode="sampled", samples=5, seed=0)


def mse_sum_check(dtype: str, reduction: str, **kw) -> CheckSettings:
    return CheckSettings(**{**MSE_SUM_CHECK, "dtype": dtype, "reduction": reduction, **kw})


# ------------------------------------------------------------------ the float32 MSE-sum check


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_mse_sum_check_float32_fails_because_of_roundoff(reduction):
    r = run_check(mse_sum_check("float32", reduction))
    # At the question's step the hand-written check fails (the first step's columns); the
    # verdict, after re-estimating at better steps (or in float64), is that the gradient is right.
    assert not r.table["ok"].all() and r.verdict == "pass"
    assert (r.table["best_abs_error"] <= r.table["best_tolerance"]).all()
    d = r.summary.diagnosis
    assert d.kind == "roundoff" and d.level == "warning"  # not evidence of a wrong gradient
    # The relative perturbation sits at float32's machine epsilon (within a factor 10).
    assert 0.1 < r.summary.relative_perturbation / facts("float32").eps < 10
    assert "round-off" in d.headline and "float64" in d.text
    assert "mean" in d.details  # says why mean does not help
    assert "re-estimated" in r.summary.message


def test_mse_sum_check_sum_and_mean_have_the_same_relative_perturbation():
    # mean divides L and dL/dx_i by the same n.
    rho = [run_check(mse_sum_check("float32", red)).table["relative_perturbation"].to_numpy()
           for red in ("sum", "mean")]
    np.testing.assert_allclose(rho[0], rho[1], rtol=1e-5)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_mse_sum_check_float64_passes_with_central(reduction):
    r = run_check(mse_sum_check("float64", reduction, scheme="central"))
    assert r.verdict == "pass" and r.summary.diagnosis.kind == "ok"


@pytest.mark.parametrize("reduction, n", [("sum", 1), ("mean", 140 * 120)])
def test_mse_sum_check_float64_forward_error_is_the_truncation_h_over_4(reduction, n):
    # L = sum((x+1)/2 - t)^2: d2L/dx_i^2 = 1/2, so the forward difference is off by h/4 exactly.
    r = run_check(mse_sum_check("float64", reduction))
    roundoff = 4 * facts("float64").unit_roundoff * r.summary.loss / 1e-3  # a few ulp(L)/h
    np.testing.assert_allclose(r.table["numeric"] - r.table["autograd"], 1e-3 / 4 / n,
                               rtol=0, atol=roundoff)
    assert r.summary.diagnosis.kind == "truncation"


def test_mse_sum_check_gradient_and_relative_perturbation_from_the_formula():
    p = build_model_loss(mse_sum_check("float64", "sum"))
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(140, 120, generator=gen, dtype=torch.float64)
    t = torch.randn(140, 120, generator=gen, dtype=torch.float64)
    assert torch.equal(p.x, x)
    r = run_check(mse_sum_check("float64", "sum"))
    grad = ((x + 1) / 2 - t).reshape(-1)  # dL/dx_i = (x_i + 1)/2 - t_i
    loss = float((((x + 1) / 2 - t) ** 2).sum())
    flat = [i * 120 + j for i, j in r.table["index"]]
    np.testing.assert_allclose(r.table["autograd"], grad[flat].numpy(), rtol=1e-12)
    np.testing.assert_allclose(r.table["relative_perturbation"],
                               1e-3 * grad[flat].abs().numpy() / loss, rtol=1e-9)


def test_numeric_float64_rescues_the_float32_check():
    r = run_check(mse_sum_check("float32", "sum", numeric_float64=True, scheme="central"))
    assert r.verdict == "pass" and r.summary.numeric_dtype == "float64"


def test_reduction_none_rescues_the_float32_check():
    r = run_check(mse_sum_check("float32", "none"))
    assert r.verdict == "pass"


def test_sweep_shows_sum_swamped_and_none_clean_at_eps_1e_3():
    df = reduction_sweep(mse_sum_check("float32", "sum", samples=3), points_per_decade=1)
    at = df[np.isclose(df["eps"], 1e-3)].groupby("reduction")["rel_error"].median()
    assert at["sum"] > 0.1 and at["mean"] > 0.1 and at["none"] < 2e-3


SWEEP_CASES = [(model, dtype, scheme) for model in ("affine", "expression", "mlp")
               for dtype in ("float32", "float64") for scheme in ("forward", "central")]


def _reduced(y: torch.Tensor, reduction: str) -> torch.Tensor:
    # the check's loss with grad_outputs "ones": the sum or the mean of fn's outputs, or each output
    flat = y.reshape(-1)
    return flat.sum() if reduction == "sum" else flat.mean() if reduction == "mean" else flat


def _exact_gradient(problem, reduction: str) -> torch.Tensor:
    """dL/dx from autograd of fn's float64 twin: the dtype's gradient to float64's precision."""
    x64 = problem.x.to(torch.float64, copy=True).requires_grad_(True)
    return torch.autograd.grad(_reduced(problem.fn64(x64), reduction).sum(), x64)[0]


def _difference_here(problem, settings: CheckSettings, index: tuple[int, ...]) -> tuple[float, float]:
    """At one element, with plain torch and numpy (none of the check's code): the finite difference
    taken in the dtype (x_i moved by ±eps, rounded; the change of the reduced values over the step
    taken) and its round-off quantum (numpy.spacing of the reduced value, or of each output the
    element moves, over that step)."""
    x = problem.x

    def moved(delta: float) -> torch.Tensor:
        t = x.clone()
        t[index] = t[index] + delta  # rounded to the dtype: the point the difference really takes
        return t

    plus, minus = moved(settings.eps), (moved(-settings.eps) if settings.scheme == "central" else x)
    step = float(plus[index]) - float(minus[index])
    with torch.no_grad():
        base, high, low = (_reduced(problem.fn(t), settings.reduction) for t in (x, plus, minus))
    moves = ((high != base) | (low != base)).numpy() if settings.reduction == "none" else True
    quantum = float(np.spacing(np.abs(np.atleast_1d(base.numpy())))[moves].sum())
    return float((high.double() - low.double()).sum()) / step, quantum / step


@pytest.mark.parametrize("model, dtype, scheme", SWEEP_CASES)
@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
def test_sweep_passes_through_the_checks_own_estimate(model, dtype, scheme, reduction):
    # The sweep evaluates fn once for the three reductions; each curve must still hold what a
    # check with that reduction and step computes, at the same elements: both are held to the
    # values computed here (_exact_gradient, _difference_here), not to each other.
    settings = CheckSettings(model=model, shape=(20, 30), loss="mse", dtype=dtype, scheme=scheme,
                             mode="sampled", samples=3, seed=4, reduction=reduction, eps=1e-2)
    assert settings.grad_outputs == "ones"  # what _reduced computes
    df = reduction_sweep(settings, points_per_decade=1)
    at = df[(df["reduction"] == reduction) & np.isclose(df["eps"], 1e-2)]
    table = run_check(settings).table
    assert list(at["element"]) == list(table["element"]) and len(table) == 3
    problem = build_model_loss(settings)
    gradient = _exact_gradient(problem, reduction)
    for k, label in enumerate(table["element"]):
        index = tuple(int(i) for i in label.removeprefix("x[").removesuffix("]").split(", "))
        # autograd in the dtype: a few of its roundings from the float64 gradient, at the gradient's scale
        for got in (at["autograd"].iloc[k], table["autograd"].iloc[k]):
            assert abs(got - float(gradient[index])) <= 16 * facts(dtype).eps * float(gradient.abs().max()), label
        # The sweep perturbs many elements in one batched call, the check a few, this test one:
        # fn's matmuls may take other BLAS kernels (1 ulp apart on some CPUs), and a few ulps of
        # each value move a difference by a few of its quanta, no more.
        estimate, quantum = _difference_here(problem, settings, index)
        for got in (at["estimate"].iloc[k], table["numeric"].iloc[k]):
            assert abs(got - estimate) <= 4 * quantum, (label, got, estimate, quantum)


def _none_scale(fn, x):
    r = gradcheck(fn, x, mode="full", reduction="none", grad_outputs="ones", scheme="central", eps=1e-3,
                  taylor=False)
    return 1e-3 * r.table["autograd"].abs().to_numpy() / r.table["relative_perturbation"].to_numpy()


def test_none_roundoff_scale_counts_only_the_perturbed_output():
    # elementwise: perturbing x_i moves y_i alone, so the scale is |y_i| = |x_i|^3
    x = torch.tensor([0.5, -2.0, 3.0, 1.5], dtype=torch.float64)
    np.testing.assert_allclose(_none_scale(lambda t: t ** 3, x), x.abs().numpy() ** 3, rtol=1e-12)


def test_none_roundoff_scale_counts_every_output_the_element_moves():
    # cumsum: x_i moves y_i..y_n, so the scale is sum_{j >= i} |y_j|
    x = torch.tensor([1.0, -4.0, 2.0, 0.5], dtype=torch.float64)
    y = torch.cumsum(x, 0).abs().numpy()
    np.testing.assert_allclose(_none_scale(lambda t: torch.cumsum(t, 0), x),
                               np.cumsum(y[::-1])[::-1], rtol=1e-12)


# ------------------------------------------------------------------ wrong backward


class WrongSquare(torch.autograd.Function):
    """x**2 whose backward is 3x too large on rows 0-1, columns 0-1."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        factor = torch.ones_like(x)
        factor[:2, :2] = 3.0
        return 2 * x * grad * factor


def wrong(x):
    return WrongSquare.apply(x)


X8 = torch.linspace(0.5, 2.0, 64, dtype=torch.float64).reshape(8, 8)
IN_REGION = {f"x[{i}, {j}]" for i in range(2) for j in range(2)}


@pytest.mark.parametrize("mode, samples", [("sampled", 64), ("full", 5), ("directional", 4)])
def test_wrong_backward_is_caught_and_named(mode, samples):
    r = gradcheck(wrong, X8, mode=mode, samples=samples, seed=1)
    assert r.verdict == "fail"
    named = r.summary.located if mode == "directional" else r.summary.worst
    assert named.label in IN_REGION
    assert named.label in r.summary.message
    assert r.summary.diagnosis.kind == "gradient"


def test_raise_on_fail_names_the_element():
    with pytest.raises(GradcheckError, match=r"x\[[01], [01]\]"):
        gradlab.gradcheck(wrong, X8, mode="full", raise_on_fail=True)


@pytest.mark.parametrize("mode", ["sampled", "full", "directional"])
def test_correct_function_passes(mode):
    r = gradcheck(lambda x: x**2, X8, mode=mode, samples=8)
    assert r.verdict == "pass"


# ------------------------------------------------------------------ against torch


def _matmul(x):
    return x @ x.T


def _softmax(x):
    return torch.softmax(x, dim=-1) * torch.arange(x.shape[-1], dtype=x.dtype)


SPECS = [
    ("sin", torch.sin),
    ("cube", lambda x: x**3),
    ("exp_mean", lambda x: torch.exp(x).mean()),
    ("matmul", _matmul),
    ("softmax", _softmax),
    ("log1p_sq", lambda x: torch.log1p(x**2)),
    ("wrong", wrong),
]


@pytest.mark.parametrize("name, fn", SPECS, ids=[s[0] for s in SPECS])
def test_full_mode_agrees_with_torch_gradcheck(name, fn):
    x = X8[:3, :4].clone() - 1.0 if name != "wrong" else X8[:4, :4].clone()
    ours = gradcheck(fn, x, mode="full", eps=1e-6, rtol=1e-3, atol=1e-5, taylor=False)
    theirs = torch.autograd.gradcheck(lambda t: fn(t).sum(), (x.clone().requires_grad_(),),
                                      eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=False,
                                      raise_exception=False)
    assert ours.passed == theirs


def test_several_inputs_and_vector_jacobian_product():
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    b = torch.tensor([[0.5, -1.0, 2.0]], dtype=torch.float64)
    v = torch.tensor([[1.0, -2.0, 0.5]], dtype=torch.float64)
    r = gradcheck(lambda p, q: p * q, a, b, mode="full", reduction="none", grad_outputs=v)
    assert r.verdict == "pass"
    # d/da_i sum_j v_j a_j b_j = v_i b_i ; d/db_i = v_i a_i
    expected = np.concatenate([(v * b).reshape(-1).numpy(), (v * a).reshape(-1).numpy()])
    np.testing.assert_allclose(r.table["numeric"], expected, rtol=1e-8)
    assert list(r.table["element"])[-1] == "q[0, 2]"  # named as fn names its arguments


# ------------------------------------------------------------------ Taylor, vacuous, misc


def test_taylor_slope_two_for_right_and_one_for_wrong_gradient():
    right = gradcheck(lambda x: x**2, X8, samples=1, taylor=True).taylor
    bad = gradcheck(wrong, X8, samples=1, taylor=True).taylor
    assert right.verdict == "right" and abs(right.slope - 2) < 0.1
    assert bad.verdict == "wrong" and abs(bad.slope - 1) < 0.1
    assert {"h", "remainder"} <= set(right.table.columns)


def test_vacuous_pass_is_detected():
    # A wrong backward (3x on a region) that passes only because |grad| < atol.
    r = gradcheck(lambda x: 1e-12 * wrong(x), X8, mode="full")
    assert r.verdict == "pass" and r.summary.vacuous
    assert r.summary.diagnosis.kind == "vacuous" and r.summary.diagnosis.level == "warning"
    assert "atol" in r.summary.diagnosis.text


def test_full_mode_error_map_and_progress():
    calls = []
    r = gradcheck(lambda x: x**2, X8[:4, :6], mode="full", progress=lambda d, t: calls.append((d, t)))
    assert r.error_map.shape == (4, 6)
    assert calls[-1] == (24, 24) and all(d <= t for d, t in calls)


def test_complex_step_where_applicable_and_refused_elsewhere():
    assert gradcheck(torch.sin, X8, scheme="complex_step").passed
    with pytest.raises(GradLabError, match="complex"):
        gradcheck(torch.sin, X8.to(torch.bfloat16), scheme="complex_step")
    with pytest.raises(GradLabError, match="holomorphic"):
        run_check(CheckSettings(shape=(3, 3), loss="l1", scheme="complex_step", dtype="float64"))


def test_full_mode_refuses_too_many_elements_naming_the_limit():
    side = int(math.isqrt(LIMITS.full_check_elements)) + 1
    with pytest.raises(LimitError, match="at most 65,536"):
        run_check(CheckSettings(shape=(side, side), mode="full"))


@pytest.mark.parametrize("bad", ["0x3", "axb", "1x2x3x4x5"])
def test_bad_shapes_are_refused(bad):
    with pytest.raises(GradLabError):
        parse_shape(bad)


def test_nonfinite_function_is_diagnosed():
    r = gradcheck(torch.log, torch.tensor([-1.0, 2.0], dtype=torch.float64), mode="full")
    # log(-1) is NaN: no finite difference there, so no evidence either way (not a fail)
    assert r.verdict == "inconclusive" and r.summary.diagnosis.kind == "nonfinite"
    # the summed loss is NaN, so every finite difference is
    assert r.table["state"].tolist() == ["inconclusive", "inconclusive"]


def test_batching_strategy_is_chosen_by_probing():
    flat = FlatInputs.of([X8])
    rows = flat.values.expand(3, -1).clone()
    strategies = {}
    for name, fn in (("elementwise", lambda x: x**2), ("scalar", lambda x: (x**2).sum()),
                     ("custom", lambda x: wrong(x).sum())):
        batched = BatchedFn(fn, flat)
        batched(rows)
        strategies[name] = batched.strategy[torch.float64]
    assert strategies == {"elementwise": "direct", "scalar": "vmap", "custom": "loop"}


def test_a_function_that_mixes_distinct_rows_is_not_called_directly():
    # t * t.max() broadcasts over a leading batch dimension and gives fn(x) on stacked copies
    # of x, but on a batch of perturbed rows its max is the batch's: the rows that did not move
    # the largest element see the one that did. The proof of the direct call catches it.
    x = torch.linspace(-1, 2, 12, dtype=torch.float64)
    flat = FlatInputs.of([x])
    batched = BatchedFn(lambda t: t * t.max(), flat)
    rows = flat.values.expand(16, -1).clone()
    rows[torch.arange(12), torch.arange(12)] += 0.5  # row 11 moves the largest element
    out = batched(rows)
    assert batched.strategy[torch.float64] != "direct"
    expected = torch.stack([r * r.max() for r in rows])
    assert torch.allclose(out, expected, rtol=1e-15, atol=0)
    r = gradcheck(lambda t: t * t.max(), x, mode="full", taylor=False)
    assert r.verdict == "pass"  # d/dt_j = max + [j = argmax]·sum(t)


@pytest.mark.parametrize("name", [n for n in DTYPES if facts(n).complex_partner is not None and not facts(n).emulated])
def test_complex_step_rows_reach_fn_in_the_dtype_tables_complex_partner(name):
    row = facts(name)
    flat = FlatInputs.of([torch.ones(3, dtype=row.torch_dtype)])
    (part,) = flat.cast(flat.split(flat.values.to(torch.complex128)[None] + 1e-3j))
    assert part.dtype == row.complex_partner


def test_a_check_of_few_rows_loops_without_probing():
    flat = FlatInputs.of([X8])
    calls = []

    def fn(x):
        calls.append(x.shape)
        return x ** 2

    batched = BatchedFn(fn, flat, few_rows=True)
    out = batched(flat.values.expand(3, -1).clone())
    assert batched.strategy[torch.float64] == "loop"
    assert calls == [X8.shape] * 4  # fn at x once, then one call per row: no vmap, no direct attempts
    assert torch.equal(out, (flat.values ** 2).expand(3, -1))


class _ParameterView(torch.nn.Module):
    """Returns a view of its parameter: a loop row's output aliases the tensor the next row overwrites."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64))

    def forward(self, x):
        return self.w[1:]  # x unused: the output is the view itself


def test_a_modules_rows_are_evaluated_through_one_parameter_swap_with_the_same_values():
    from gradlab.check.running.engine import checked_function

    module = _ParameterView()
    call, args = checked_function(module, (torch.tensor([0.5, 1.0, -1.0], dtype=torch.float64),), "parameters")
    assert call.rows is not None  # a module's check has the cheap way over rows
    flat = FlatInputs.of(args.reals())
    rows = flat.values + torch.arange(4, dtype=torch.float64)[:, None]  # four different points
    swapped = BatchedFn(call, flat, few_rows=True)(rows)
    assert torch.equal(swapped, rows[:, 1:])
    assert torch.equal(module.w.detach(), torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64))  # restored


@pytest.mark.parametrize("model", ["affine", "expression", "mlp"])
def test_models_pass_in_float64(model):
    s = CheckSettings(model=model, shape=(6, 5), dtype="float64", expression="tanh(x)*x",
                      mode="full", eps=1e-4)
    assert run_check(s).verdict == "pass"


# ------------------------------------------------------------------ worker threads

X_THREADS = torch.linspace(-1.5, 2.0, 40 * 50, dtype=torch.float64).reshape(40, 50)  # many chunks
T_THREADS = torch.cos(torch.arange(40 * 50, dtype=torch.float64)).reshape(40, 50)


def _elementwise(x):
    return ((x + 1) / 2 - T_THREADS) ** 2


def _scalar(x):  # through vmap
    return torch.nn.functional.mse_loss((x + 1) / 2, T_THREADS, reduction="sum")


def _gradlab_threads():
    import threading

    return [t for t in threading.enumerate() if t.name.startswith("gradlab-check")]


@pytest.mark.parametrize("fn, kw", [
    (_elementwise, dict(mode="full")),
    (_elementwise, dict(mode="full", reduction="mean", scheme="five_point")),
    (_scalar, dict(mode="full")),
    (_elementwise, dict(mode="sampled", samples=300)),
    (torch.sin, dict(mode="full", reduction="none", grad_outputs="random")),
    (torch.sin, dict(mode="full", scheme="complex_step")),
    (_elementwise, dict(mode="directional", samples=8)),
], ids=["sum", "mean-five-point", "vmap", "sampled", "none", "complex-step", "directional"])
def test_worker_threads_give_the_same_estimates(fn, kw):
    x = X_THREADS if kw.get("reduction") != "none" else X_THREADS[:6, :7]
    one = gradcheck(fn, x, workers=1, taylor=False, **kw)
    two = gradcheck(fn, x, workers=2, taylor=False, **kw)
    # Same chunks, same ops; but a kernel may pick another code path on another thread or
    # buffer, so compare within a few times the estimate's own round-off (the stencil's, and
    # the last rounding of the value itself: all the complex step has).
    numeric = one.table["numeric"].to_numpy()
    bound = 4 * (one.table["roundoff"].to_numpy() + facts("float64").unit_roundoff * np.abs(numeric))
    np.testing.assert_array_less(np.abs(numeric - two.table["numeric"].to_numpy()), bound + np.finfo(float).tiny)
    assert one.verdict == two.verdict == "pass"
    assert list(one.table["element"]) == list(two.table["element"])
    assert not _gradlab_threads()


def test_worker_threads_report_monotone_progress_to_the_total_from_the_calling_thread():
    import threading

    calls, callers = [], set()

    def progress(done, total):
        calls.append((done, total))
        callers.add(threading.current_thread())

    gradcheck(_elementwise, X_THREADS, mode="full", workers=2, taylor=False, progress=progress)
    done = [d for d, _ in calls]
    assert len(calls) > 2 and done == sorted(done) and len(set(done)) == len(done)
    assert calls[-1] == (X_THREADS.numel(), X_THREADS.numel())
    assert callers == {threading.current_thread()}


def test_an_error_in_fn_inside_a_worker_propagates_as_gradlab_error():
    def fails_on_chunks(x):  # fine at the input given; raises at every finite-difference point
        if x.shape == X_THREADS.shape and not torch.equal(x, X_THREADS):  # (vmap refuses torch.equal)
            raise ValueError("boom on a chunk")
        return _elementwise(x)

    with pytest.raises(GradLabError, match="boom on a chunk"):
        gradcheck(fails_on_chunks, X_THREADS, mode="full", workers=2, taylor=False)
    assert not _gradlab_threads()


class _Stop(BaseException):
    """Like Streamlit's StopException: a BaseException raised by the progress callback."""


@pytest.mark.parametrize("workers", [1, 2])
def test_an_exception_from_progress_stops_the_workers_and_propagates(workers):
    calls = {"fn": 0, "at_stop": None}

    def counted(x):
        calls["fn"] += 1
        return _elementwise(x)

    def progress(done, total):
        if done >= total // 10:
            calls["at_stop"] = calls["fn"]
            raise _Stop()

    with pytest.raises(_Stop):
        gradcheck(counted, X_THREADS, mode="full", workers=workers, taylor=False, progress=progress)
    assert not _gradlab_threads()
    # each worker finishes the chunk it is on, and may have taken one more meanwhile
    assert calls["fn"] - calls["at_stop"] <= 2 * (workers - 1)
    stopped, calls["fn"] = calls["fn"], 0
    gradcheck(counted, X_THREADS, mode="full", workers=workers, taylor=False)
    # far from a full run (the stop came at 10 % of the values; relaying progress from the
    # worker threads may lag a few chunks on a loaded machine)
    assert stopped < 0.5 * calls["fn"]


def test_workers_wait_for_a_calling_thread_that_lags():
    # a calling thread scheduled late (a loaded machine; here a slow progress callback) sees
    # every report: the workers wait for it rather than run the check to its end unseen
    calls = {"fn": 0, "at_stop": None}

    def counted(x):
        calls["fn"] += 1
        time.sleep(0.001)  # chunks long enough for the worker threads to start
        return _elementwise(x)

    def progress(done, total):
        time.sleep(0.02)
        if done >= total // 10:
            calls["at_stop"] = calls["fn"]
            raise _Stop()

    with pytest.raises(_Stop):
        gradcheck(counted, X_THREADS, mode="full", workers=2, taylor=False, progress=progress)
    assert not _gradlab_threads()
    stopped, calls["fn"] = calls["fn"], 0
    gradcheck(counted, X_THREADS, mode="full", workers=2, taylor=False)
    # the stop came at 10 % of the values: the workers were at most the queue's 2 reports and
    # the 2 chunks in hand beyond it (without the wait they ran the whole check: 108 of 108)
    assert stopped < 0.5 * calls["fn"]


def test_workers_beyond_the_limit_are_refused():
    with pytest.raises(LimitError, match="check worker threads"):
        gradcheck(_elementwise, X8, mode="full", workers=LIMITS.check_workers + 1)
    with pytest.raises(GradLabError, match="workers"):
        gradcheck(_elementwise, X8, mode="full", workers=0)


def test_a_function_writing_into_its_input_is_refused():
    def mutating(x):
        x.mul_(1.0)  # allowed under no_grad, and would corrupt the reused perturbation buffer
        return x**2

    with pytest.raises(GradLabError, match="modified its input"):
        gradcheck(lambda x: x**2, X8, mode="full", numeric_float64=True, numeric_fn=mutating)


# ------------------------------------------------------------------ structured summary


def test_failing_summary_has_headline_message_and_hint_as_separate_fields():
    r = gradcheck(wrong, X8, mode="full", taylor=False)
    s, d = r.summary, r.summary.diagnosis
    worst = s.worst
    # the wrong backward is 3x too large: autograd 3 * 2x, the finite difference about 2x
    assert worst.label in IN_REGION and worst.autograd == pytest.approx(3 * worst.numeric, rel=1e-6)
    assert s.headline.startswith(f"Gradient check failed at {worst.label}")
    for part in (worst.label, f"{worst.autograd:.6g}", f"{worst.numeric:.6g}", f"{worst.abs_error:.3g}"):
        assert part in s.message
    assert "Hint" not in s.message and d.headline not in s.message
    assert s.hint == f"{d.headline} {d.fixes[0]}" if d.fixes else s.hint == d.headline
    assert s.text == " ".join((f"{s.message} Hint: {s.hint}", *s.notes))  # notes: what the bounds rest on


def test_passing_summary_has_no_hint():
    s = gradcheck(lambda x: x**2, X8, mode="full", taylor=False).summary
    assert s.passed and s.hint == "" and s.text == s.message
    assert f"{X8.numel()} of {X8.numel()}" in s.headline


# ------------------------------------------------------------------ one place for validation


@pytest.mark.parametrize("kw, words", [
    (dict(eps=-1.0), "positive finite"),
    (dict(eps=float("nan")), "positive finite"),
    (dict(samples=0), "samples"),
    (dict(rtol=-1e-3), "rtol"),
    (dict(atol=float("inf")), "atol"),
    (dict(mode="full", shape=(300, 300)), "at most 65,536 elements"),
    (dict(scheme="complex_step", dtype="bfloat16"), "complex"),
])
def test_settings_refuse_what_the_engine_cannot_run(kw, words):
    with pytest.raises(GradLabError, match=words):
        CheckSettings(**kw)


def test_full_check_limit_is_a_limit_error_naming_the_fix():
    with pytest.raises(LimitError) as err:
        CheckSettings(mode="full", shape=(300, 300))
    text = str(err.value)
    assert "90,000 elements" in text and "LIMITS.full_check_elements" in text and "sampled" in text


# ------------------------------------------------------------------ the sweep next to a check


def test_sweep_settings_are_the_engines_choice_and_ignore_mode_and_step():
    full = CheckSettings(shape=(12, 10), mode="full", eps=1e-2, reduction="mean", samples=9)
    sampled = CheckSettings(shape=(12, 10), mode="sampled", reduction="none", samples=5)
    assert sweep_settings_for(full) == sweep_settings_for(sampled)
    base = sweep_settings_for(full)
    assert (base.mode, base.eps, base.samples) == ("sampled", None, CHECK_SWEEP_ELEMENTS)
    assert sweep_settings_for(base) == base


def test_check_sweep_gives_the_table_and_the_dtypes_rtol():
    sweep = check_sweep(CheckSettings(shape=(12, 10), dtype="float32", samples=2))
    assert sweep.rtol == facts("float32").rtol
    assert set(sweep.table["reduction"]) == {"sum", "mean", "none"}
    assert sweep.table["element"].nunique() == 2


# ------------------------------------------------------------------ the pace forecast

#: The million-element complex-step Grad check: 16-30 s of one core before the check's first progress
#: report, so the pace limit (LIMITS.full_check_seconds) could only stop it after that.
HEAVY_EXPRESSION = "+".join(["x**sin(x)"] * 20)
HEAVY_CHECK = dict(model="expression", expression=HEAVY_EXPRESSION, shape=(1024, 1024), dtype="float64",
                   scheme="complex_step", mode="sampled", samples=1000, seed=7)


class _Forecasts:
    """A progress callback with a ``forecast``, recording both, and when fn had run how often."""

    def __init__(self, calls: list, stop_over: float = float("inf")):
        self.calls, self.stop_over, self.forecasts, self.reports = calls, stop_over, [], []

    def __call__(self, done, total):
        self.reports.append((done, len(self.calls)))

    def forecast(self, seconds, detail):
        self.forecasts.append((seconds, detail, len(self.calls)))
        if seconds > self.stop_over:
            raise LimitError(f"would take at least about {seconds:.0f} s ({detail})")


def _slow_fn(calls: list, seconds: float, complex_seconds: float | None = None):
    import time

    def fn(x):
        calls.append(x.dtype)
        # computes (spins) rather than sleeps: the forecast counts CPU time, as the limits do
        end = time.thread_time() + (complex_seconds if x.is_complex() and complex_seconds is not None else seconds)
        while time.thread_time() < end:
            pass
        return x * 2

    return fn


def test_the_forecast_comes_after_one_evaluation_before_any_set_up():
    """The limit's first say comes after one timed evaluation of fn, not after the autograd passes,
    the strategy trials and the first chunk (a dozen evaluations: 16-30 s for the million-element check)."""
    calls = []
    report = _Forecasts(calls, stop_over=5.0)
    x = torch.linspace(1, 2, 50, dtype=torch.float64)
    with pytest.raises(LimitError, match="at least about"):
        gradcheck(_slow_fn(calls, 0.06), x, mode="sampled", samples=50, scheme="central", progress=report,
                  workers=1)
    assert len(calls) == 1 and not report.reports, (calls, report.reports)  # stopped before the set-up
    seconds, detail, calls_then = report.forecasts[0]
    assert calls_then == 1 and seconds >= 50 * 2 * 0.06, report.forecasts  # 50 elements x 2 points
    assert "50 elements x 2 evaluations" in detail, detail


def test_a_complex_step_check_is_also_forecast_from_a_complex_evaluation():
    """Each perturbation of a complex-step check is an evaluation in complex numbers (several times
    the real cost): it is timed too, and the costlier forecast is kept, and told again after the set-up."""
    calls = []
    report = _Forecasts(calls)
    x = torch.linspace(1, 2, 4, dtype=torch.float64)
    r = gradcheck(_slow_fn(calls, 0.06, complex_seconds=0.5), x, mode="full", scheme="complex_step",
                  progress=report, workers=1)
    assert r.verdict == "pass"
    assert calls[:2] == [torch.float64, torch.complex128], calls  # timed in both, before anything else
    (real, _, after_real), (complex_, detail, after_complex), (again, last, after_setup) = report.forecasts
    assert (after_real, after_complex) == (1, 2) and after_setup > 2, report.forecasts
    assert real >= 4 * 0.06 and complex_ >= 4 * 0.5 and again == complex_, report.forecasts
    assert "in complex numbers" in detail and last.endswith("after the set-up"), report.forecasts
    assert report.reports and report.reports[0][1] > after_setup  # the first report comes later still


def test_a_quick_evaluation_is_not_trusted_and_a_plain_callback_costs_no_evaluation():
    """Under TRUSTED_SECONDS an evaluation may be mostly per-call overhead, which batched chunks
    share: no forecast from it. A callback without ``forecast`` adds no evaluation at all."""
    calls = []
    report = _Forecasts(calls)
    x = torch.linspace(1, 2, 6, dtype=torch.float64)
    gradcheck(_slow_fn(calls, 0.0), x, mode="full", progress=report, workers=1)
    assert report.forecasts == [] and report.reports
    with_forecast = len(calls)
    calls.clear()
    gradcheck(_slow_fn(calls, 0.0), x, mode="full", progress=lambda d, t: None, workers=1)
    assert len(calls) == with_forecast - 1


def test_the_million_element_check_is_stopped_by_its_forecast():
    """The page's engine call (gradlab.labs.gradcheck.function_view, run here in-process) with the default
    limits: stopped after one evaluation of fn (~0.3-2 s on a loaded 2-core machine), with the
    sentence that names LIMITS.full_check_seconds. Before: the first report came after 16-30 s."""
    import time

    from cost import stopped_within

    from gradlab.labs.gradcheck import function_view

    start = time.monotonic()
    with pytest.raises(LimitError) as info:
        function_view(CheckSettings(**HEAVY_CHECK), workers=1)
    elapsed = time.monotonic() - start
    message = str(info.value)
    assert "would take at least about" in message and "1,000 elements x 1 evaluation" in message, message
    assert f"over {LIMITS.full_check_seconds:g} s" in message and "(LIMITS.full_check_seconds)" in message
    # the message names the forecast; this generous limit only catches a forecast that never stopped it
    assert elapsed < stopped_within(LIMITS.full_check_seconds), f"stopped after {elapsed:.1f} s: {message}"


def test_a_paced_check_within_the_limit_is_not_stopped_by_the_forecast():
    """A sampled check of 1,000 elements of the MLP (a real check the page runs) passes through the
    paced callback unhurt: its evaluations are milliseconds, under TRUSTED_SECONDS."""
    from gradlab.server.deadline import paced_progress

    paced = paced_progress(LIMITS.full_check_seconds, "this sampled check", limit_name="B", advice="")
    r = run_check(CheckSettings(model="mlp", shape=(140, 120), dtype="float64", scheme="central",
                                mode="sampled", samples=1000), progress=paced, workers=1, taylor=False)
    assert r.verdict == "pass" and len(r.table) == 1000


def test_a_modules_inputs_are_named_as_its_forward_names_them():
    lin = torch.nn.Linear(3, 1).double()
    r = gradcheck(lin, torch.ones(2, 3, dtype=torch.float64), mode="full", taylor=False)
    assert r.table["element"][0] == "input[0, 0]"  # Linear.forward(self, input); __call__ takes *args


def test_parameter_names_without_inspect_are_what_inspect_signature_gives():
    """A plain function's names are read from its code object and a builtin without a text
    signature has none, without calling inspect.signature: held to inspect.signature's own
    reading (positional parameters up to the first *args or keyword-only one) over every kind."""
    import functools
    import inspect

    from gradlab.check.inputs.arguments import parameter_names

    def by_signature(fn, count):
        try:
            params = list(inspect.signature(fn.forward if isinstance(fn, torch.nn.Module) else fn).parameters.values())
        except (TypeError, ValueError):
            params = []
        names = []
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            names.append(p.name)
        return [names[k] if k < len(names) else f"input {k}" for k in range(count)]

    def everything(a, /, b, c=2, *rest, d, **options):
        local = a + b  # locals follow the parameters in the code object's names
        return local

    def keyword_only(x, *, scale):
        return x * scale

    @functools.wraps(keyword_only)
    def wrapped(*args, **kwargs):
        return keyword_only(*args, **kwargs)

    def signed(*args):
        return args
    signed.__signature__ = inspect.Signature([inspect.Parameter("given", inspect.Parameter.POSITIONAL_ONLY)])

    functions = [everything, keyword_only, wrapped, signed, functools.partial(everything, 1), lambda: 0,
                 lambda t, n: t ** n, torch.sin, torch.linalg.matrix_norm, len, torch.Tensor.sin,
                 torch.nn.functional.relu, torch.nn.Linear(2, 2)]
    assert parameter_names(everything, 4) == ["a", "b", "c", "input 3"]  # the rule, written out once
    assert parameter_names(signed, 2) == ["given", "input 1"]
    for fn in functions:
        assert parameter_names(fn, 4) == by_signature(fn, 4), fn
