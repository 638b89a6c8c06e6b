"""Network input gradients (the network question, scipy.misc.derivative against autograd): quantised finite differences, checked against arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from gradlab.errors import GradLabError, LimitError
from gradlab.limits import LIMITS
from gradlab.labs.network.engine import (
    ACTIVATIONS,
    SCIPY_NOTE,
    NetworkSettings,
    autograd_gradient,
    build_network,
    finite_difference,
    network_experiment,
    network_input,
    scipy_derivative,
    step_sweep,
)
from gradlab.numerics.dtypes import DTYPE_NAMES, facts
from gradlab.numerics.ulp import ulp

SMALL = dict(input_size=6, hidden=(12, 12), index=2)


def test_seed_value_is_one_quantum():
    # The question's scipy value -0.014901161193847656 is -1 * ulp(y)/(2 dx) for a float32
    # output y in [0.25, 0.5): ulp = 2**-25, dx = 1e-6.
    assert 2.0**-25 / (2 * 1e-6) == 0.014901161193847656
    assert ulp(0.3, "float32") == 2.0**-25


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_estimate_is_an_integer_multiple_of_the_quantum(activation, seed):
    fd = finite_difference(NetworkSettings(activation=activation, seed=seed, **SMALL))
    # Floats are integer multiples of their ulp: y+ - y- = k * min(ulp(y+), ulp(y-)).
    assert (fd.y_plus - fd.y_minus) == fd.k * fd.ulp_y
    assert fd.estimate == pytest.approx(fd.k * fd.quantum, rel=1e-15)
    assert fd.quantum == fd.ulp_y / (2 * fd.step)
    if fd.same_binade:
        assert fd.ulp_y == ulp(fd.y_plus, "float32") == ulp(fd.y_minus, "float32")


def test_float32_at_1e_6_is_coarse_but_autograd_is_right():
    fd = finite_difference(NetworkSettings())
    # The quantum is far bigger than float32 autograd's error against the float64 reference.
    assert abs(fd.autograd - fd.reference) <= 1e-5 * abs(fd.reference)
    assert fd.quantum > 100 * abs(fd.autograd - fd.reference)
    # The best a 1e-6 step can do is the multiple of q nearest the true derivative.
    assert abs(fd.estimate - fd.reference) >= abs(fd.nearest_multiple_of_reference * fd.quantum - fd.reference)


def test_step_taken_is_what_the_dtype_can_represent():
    # In float16 ulp(x0)/2 > 1e-6 for |x0| > 2**-13, so x0 +- 1e-6 rounds back to x0.
    fd = finite_difference(NetworkSettings(dtype="float16", **SMALL))
    assert abs(fd.x0) > 2.0**-13
    assert fd.step_taken == 0.0 and fd.estimate == 0.0 and fd.k == 0
    # In float32 the step taken is a multiple of ulp(x0) (half-multiple after the /2).
    fd32 = finite_difference(NetworkSettings(**SMALL))
    spacing = ulp(fd32.x0, "float32")
    assert (2 * fd32.step_taken / spacing) == round(2 * fd32.step_taken / spacing)


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "softplus", "gelu"])
def test_float64_near_the_optimal_step_agrees_with_autograd(activation):
    settings = NetworkSettings(activation=activation, dtype="float64", **SMALL)
    sweep = step_sweep(settings)
    fd = finite_difference(NetworkSettings(activation=activation, dtype="float64", step=sweep.predicted_step, **SMALL))
    assert abs(fd.estimate - fd.autograd) <= 1e-9 * abs(fd.autograd)


def test_float32_sweep_best_step_is_near_the_prediction_and_beats_1e_6():
    sweep = step_sweep(NetworkSettings(points=81))
    best = sweep.best_row()
    # The theory's optimum (3u|f/f'''|)^(1/3) is within a decade of the measured one.
    assert 0.1 < best["step"] / sweep.predicted_step < 10
    fd = finite_difference(NetworkSettings())
    assert best["ref_error"] < abs(fd.estimate - fd.reference) / 100
    # And at the optimum, float32 gets about eps**(2/3) relative accuracy.
    assert best["ref_error"] < 10 * facts("float32").eps ** (2 / 3) * max(abs(sweep.reference), 1)


def test_sweep_table_is_tidy_and_consistent():
    sweep = step_sweep(NetworkSettings(points=41))
    t = sweep.table
    assert list(t.columns) == ["step", "step_taken", "estimate", "autograd", "reference", "abs_error",
                               "ref_error", "quantum", "k", "y_plus", "y_minus"]
    assert len(t) == 41 and np.all(np.diff(t["step"]) > 0)
    assert np.allclose(t["estimate"], t["k"] * t["quantum"], rtol=1e-15, atol=0)
    # Batched and single evaluations use the same arithmetic: the question's step matches its own row.
    single = step_sweep(NetworkSettings(step_min=1e-6, step_max=1e-5, points=2)).table.iloc[0]
    assert single["step"] == pytest.approx(1e-6)


def test_relu_has_no_third_derivative():
    sweep = step_sweep(NetworkSettings(activation="relu", **SMALL))
    assert sweep.third_derivative == 0.0 and math.isnan(sweep.predicted_step)
    assert sweep.notes


def test_network_is_deterministic_and_rounded_once():
    s = NetworkSettings(**SMALL)
    a, b = build_network(s), build_network(s)
    assert all(torch.equal(x, y) for x, y in zip(a.weights, b.weights))
    assert torch.equal(network_input(s), network_input(s))
    other = build_network(NetworkSettings(seed=1, **SMALL))
    assert not torch.equal(a.weights[0], other.weights[0])
    wide = build_network(NetworkSettings(dtype="float64", **SMALL))
    assert all(torch.equal(w64.to(torch.float32), w32) for w64, w32 in zip(wide.weights, a.weights))
    # Init like torch.nn.Linear: |w| <= 1/sqrt(fan_in).
    assert float(a.weights[0].abs().max()) <= 1 / math.sqrt(SMALL["input_size"])


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_autograd_runs_in_every_dtype(dtype):
    s = NetworkSettings(dtype=dtype, **SMALL)
    g = autograd_gradient(build_network(s), network_input(s))
    assert g.dtype == facts(dtype).torch_dtype and g.shape == (SMALL["input_size"],)


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"hidden": (LIMITS.network_width + 1,)}, LimitError, "units"),
        ({"hidden": (4,) * (LIMITS.network_depth + 1)}, LimitError, "hidden layers"),
        ({"index": 10}, GradLabError, "between 0 and 9"),
        ({"activation": "swish"}, GradLabError, "Unknown activation"),
        ({"step": 0.0}, GradLabError, "positive"),
        ({"step_min": 1.0, "step_max": 1e-3}, GradLabError, "smallest < largest"),
        ({"hidden": (0,)}, GradLabError, "at least one unit"),
    ],
)
def test_misuse_gives_a_sentence(kwargs, error, match):
    with pytest.raises(error, match=match):
        NetworkSettings(**kwargs).validated()


def test_scipy_note_names_the_removal_and_the_successor():
    assert "1.12" in SCIPY_NOTE and "scipy.differentiate.derivative" in SCIPY_NOTE


def test_one_experiment_is_the_difference_and_the_sweep_of_the_same_network():
    s = NetworkSettings(points=7, **SMALL)
    e = network_experiment(s)
    fd, sweep = finite_difference(s), step_sweep(s)
    assert (e.difference.estimate, e.difference.reference) == (fd.estimate, fd.reference)
    assert e.sweep.table["step"].tolist() == sweep.table["step"].tolist()
    # Its parts are what the page shows: errors against the float64 reference, signed.
    assert e.difference.autograd_error == e.difference.autograd - e.difference.reference
    assert e.difference.estimate_error == e.difference.estimate - e.difference.reference


def test_a_step_below_half_an_ulp_of_x_vanishes():
    # float16 has 11 significant bits: x0 +- dx rounds back to x0 once dx < ulp(x0)/2.
    s = NetworkSettings(dtype="float16", **SMALL)
    x0 = float(network_input(s.validated())[SMALL["index"]])
    tiny = ulp(x0, "float16") / 4
    assert finite_difference(NetworkSettings(dtype="float16", step=tiny, **SMALL)).step_vanished
    assert not finite_difference(NetworkSettings(dtype="float16", step=4 * ulp(x0, "float16"), **SMALL)).step_vanished


# ---------------------------------------------------------------- the question, to the digit


def _preset_settings() -> NetworkSettings:
    """The settings the page builds from the 'scipy_derivative' preset's widget values."""
    from gradlab.labs.network.engine import parse_hidden
    from gradlab.teaching.presets import preset

    v = preset("network", "scipy_derivative").values
    return NetworkSettings(v["inputs"], parse_hidden(v["hidden"]), v["act"], v["dtype"], v["seed"], v["idx"],
                           v["dx"], *v["range"])


def test_the_network_preset_prints_the_questions_scipy_value():
    fd = finite_difference(_preset_settings())
    assert (fd.dtype, fd.index, fd.step) == ("float32", 3, 1e-6)  # the question's settings
    assert repr(fd.estimate) == "-0.014901161193847656"
    # autograd: the question's -0.009522666223347187, to 2 (and 3) significant digits
    assert f"{fd.autograd:.2g}" == f"{-0.009522666223347187:.2g}" == "-0.0095"
    assert f"{fd.autograd:.3g}" == f"{-0.009522666223347187:.3g}"


def test_why_the_question_printed_that_value():
    fd = finite_difference(_preset_settings())
    # y lies in [0.25, 0.5), where float32's spacing is 2**-23 * 2**-2 = 2**-25.
    assert 0.25 <= fd.y_plus < 0.5 and 0.25 <= fd.y_minus < 0.5
    assert float(np.spacing(np.float32(fd.y))) == 2.0**-25 == fd.ulp_y
    assert math.ulp(0.25) * 2.0**29 == 2.0**-25  # float64's spacing there, 29 bits finer
    # f(x+dx) - f(x-dx) is exactly one float32 ulp down ...
    assert Fraction(fd.y_plus) - Fraction(fd.y_minus) == Fraction(-1, 2**25)
    # ... and scipy's 0.5*f(x+dx) - 0.5*f(x-dx) = -2**-26, divided by dx in float64, is the
    # correctly rounded -2**-26 / fl(1e-6): what Fraction -> float gives.
    assert fd.estimate == float(Fraction(-1, 2**26) / Fraction(1e-6))
    # the quantum ulp(y)/(2 dx) against autograd: autograd lies between 0 and one quantum down
    assert fd.quantum == 2.0**-25 / 2e-6 and f"{fd.quantum:.6g}" == "0.0149012"
    assert -fd.quantum < fd.autograd < 0 and fd.k == -1 == fd.nearest_multiple_of_reference
    # autograd itself is right: within a few float32 roundings of the float64 reference
    assert abs(fd.autograd - fd.reference) < 1e-6 * abs(fd.reference)


def test_scipy_derivative_follows_scipys_order_of_operations():
    calls = []
    def fun(t):
        calls.append(t)
        return t**3
    # weights [-1, 0, 1] / 2 in float64, every point evaluated (the middle one with weight 0), / dx
    assert scipy_derivative(fun, 2.0, 0.5) == (-0.5 * 1.5**3 + 0.0 * 8.0 + 0.5 * 2.5**3) / 0.5 == 12.25
    assert calls == [1.5, 2.0, 2.5]


# ---------------------------------------------------------------- the same bits on every CPU


def _exact_model_output(net, x: torch.Tensor) -> float:
    """The network's output from exact arithmetic: every layer's dot product plus bias as a
    Fraction, rounded once to float32; every tanh at 80 bits (mpmath), rounded once. No
    torch kernel, no float64 sum: an independent witness of what the lab must compute."""
    import mpmath

    def to_float32(value) -> float:
        near = float(np.float32(float(value)))  # may be off by one float32 after double rounding
        options = [float(np.nextafter(np.float32(near), np.float32(-np.inf))), near,
                   float(np.nextafter(np.float32(near), np.float32(np.inf)))]
        return min(options, key=lambda c: abs(Fraction(c) - Fraction(value)) if isinstance(value, Fraction)
                   else abs(mpmath.mpf(c) - value))

    h = [Fraction(float(v)) for v in x]
    for i, (w, b) in enumerate(zip(net.weights, net.biases)):
        z = [to_float32(Fraction(float(b[r])) + sum(Fraction(float(w[r, j])) * h[j] for j in range(len(h))))
             for r in range(w.shape[0])]
        if i < len(net.weights) - 1:
            with mpmath.workprec(80):
                z = [to_float32(mpmath.tanh(mpmath.mpf(v))) for v in z]
        h = [Fraction(v) for v in z]
    return float(h[0])


def test_the_questions_outputs_are_the_exactly_rounded_network_on_any_cpu():
    # y(x3 + dx) and y(x3 - dx), whose difference is the question's number, equal a model
    # built from Fractions and mpmath alone: no matmul kernel or summation order decides them.
    s = _preset_settings().validated()
    net, x = build_network(s), network_input(s)
    fd = finite_difference(s)
    for value, lab in ((float(x[3]) + 1e-6, fd.y_plus), (float(x[3]) - 1e-6, fd.y_minus)):
        shifted = x.clone()
        shifted[3] = value
        assert _exact_model_output(net, shifted) == lab


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_the_labs_outputs_do_not_depend_on_the_batch_or_the_thread_count(activation, dtype):
    # The lab's forward pass gives a row the same bits alone, in a batch of 64, with 1 or 2
    # threads: identical arithmetic by construction (torch's matmul promises none of this).
    s = NetworkSettings(activation=activation, dtype=dtype, input_size=24, hidden=(48, 40), index=5)
    net, x = build_network(s), network_input(s)
    batch = x.repeat(64, 1)
    batch[:, 5] += torch.linspace(-0.01, 0.01, 64).to(batch.dtype)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one_thread = net.output(batch)
        torch.set_num_threads(max(2, threads))
        batched = net.output(batch)
        alone = torch.stack([net.output(row) for row in batch[::9]])
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one_thread, batched) and torch.equal(batched[::9], alone)
    # and it is the network torch computes, within the roundings of three layers of sums
    # of about unit size (an absolute bound: the output is a cancelling sum)
    with torch.no_grad():
        assert torch.allclose(net(batch).double(), batched.double(), rtol=0, atol=64 * facts(dtype).eps)


@pytest.mark.parametrize("text", ["3²", "٣٢", "32, ４"])
def test_digits_that_are_not_ascii_are_refused_in_one_sentence(text):
    # str.isdigit() accepts superscripts and other scripts' digits that int() refuses or reads
    from gradlab.labs.network.engine import parse_hidden

    with pytest.raises(GradLabError, match="is not a layer width"):
        parse_hidden(text)
