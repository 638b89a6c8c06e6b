"""A network's input gradient: autograd against a central difference, and why the latter is quantised.

The network question compares ``torch.autograd.grad`` of a network's scalar output with
respect to its input against ``scipy.misc.derivative(fun, x0, dx=1e-6)`` in
float32 and gets -0.00952 against -0.0149. The finite difference divides the
difference of two float32 outputs by ``2*dx``. Floats are integer multiples of
their ulp, so that difference is ``k`` times the smaller ulp of the two outputs
and the estimate can only be ``k * q`` with ``q = ulp(y) / (2*dx)``. Near
y ~ 0.3, ``q = 2**-25 / 2e-6 = 0.0149``: the question's value is ``k = -1``, the
closest multiple the float32 outputs allow. Autograd was right.

The network itself and its settings are in :mod:`gradlab.labs.network.model`;
their names are importable from here too.

>>> s = NetworkSettings()
>>> fd = finite_difference(s)
>>> fd.k * fd.quantum == fd.estimate
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from gradlab.labs.network.model import (ACTIVATIONS, QUESTION_SEED, ActivationSpec, NetworkSettings, Network,
                                        autograd_gradient, build_network, network_input, parse_hidden)
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import default_step, predicted_best_step
from gradlab.numerics.ulp import ulp

__all__ = [
    "ActivationSpec",
    "ACTIVATIONS",
    "NetworkSettings",
    "QUESTION_SEED",
    "Network",
    "build_network",
    "network_input",
    "autograd_gradient",
    "FiniteDifference",
    "finite_difference",
    "StepSweep",
    "step_sweep",
    "NetworkExperiment",
    "network_experiment",
    "SCIPY_NOTE",
    "parse_hidden",
    "scipy_derivative",
]

#: Shown on the page for readers of the question, who used scipy.
SCIPY_NOTE = (
    "scipy.misc.derivative, used in the question, was deprecated in SciPy 1.10 and removed in "
    "SciPy 1.12. Its successor is scipy.differentiate.derivative (SciPy 1.15+), which chooses "
    "the step adaptively and reports an error estimate. With dx=1e-6 scipy.misc.derivative "
    "computed (f(x0+dx) - f(x0-dx)) / (2*dx), which is what GradLab reproduces here; GradLab "
    "itself does not need SciPy."
)


# ---------------------------------------------------------------- central differences


def _perturbed_outputs(net: Network, x: torch.Tensor, index: int, steps: np.ndarray):
    """f at x with x[index] replaced by fl(x[index] + h) and fl(x[index] - h), for every h.

    As the question's ``fun`` did: x0 + h computed in float64, assigned into the
    dtype's input (rounded once). One batched pass of :meth:`Network.output`, whose
    arithmetic gives each row the bits it would get alone, on any CPU.
    """
    x0 = float(x[index])
    h = torch.as_tensor(steps, dtype=torch.float64)
    shifted = torch.cat([x0 + h, x0 - h]).to(x.dtype)
    batch = x.detach().repeat(len(shifted), 1)
    batch[:, index] = shifted
    y = net.output(batch).to(torch.float64).numpy()
    n = len(steps)
    taken = (shifted[:n].to(torch.float64) - shifted[n:].to(torch.float64)).numpy() / 2
    return y[:n], y[n:], taken


def _output_at(net: Network, x: torch.Tensor, index: int, value: float) -> float:
    """The question's ``fun(value)``: x with x[index] = value (rounded to the dtype), f as a Python float."""
    shifted = x.detach().clone()
    shifted[index] = value
    return float(net.output(shifted))


def scipy_derivative(fun, x0: float, dx: float) -> float:
    """``scipy.misc.derivative(fun, x0, dx)`` (n=1, order=3), in SciPy's own order of operations.

    SciPy <= 1.11 summed ``weights[k] * fun(x0 + (k - 1) * dx)`` with weights
    ``[-1, 0, 1] / 2.0`` in float64 and divided by ``dx``; it evaluated
    ``fun(x0)`` too, with weight 0.

    >>> scipy_derivative(lambda t: t * t, 3.0, 0.5)
    6.0
    """
    weights = (-0.5, 0.0, 0.5)
    val = 0.0
    for k, weight in enumerate(weights):
        val += weight * fun(x0 + (k - 1) * dx)
    return val / dx


def _quantum(y_plus: np.ndarray, y_minus: np.ndarray, steps: np.ndarray, dtype: str):
    """(spacing, q, k): spacing = min(ulp(y+), ulp(y-)), q = spacing / (2h), estimate = k q.

    A float is an integer multiple of its own ulp, and the larger of two ulps is a
    multiple of the smaller, so y+ - y- is an exact multiple of the smaller ulp.
    """
    spacing = np.minimum(ulp(y_plus, dtype), ulp(y_minus, dtype))
    k = np.rint((y_plus - y_minus) / spacing).astype(np.int64)
    return spacing, spacing / (2 * steps), k


@dataclass(frozen=True)
class FiniteDifference:
    """One central difference, taken apart."""

    dtype: str
    index: int
    x0: float  # x[index] in the dtype
    step: float  # dx, as asked for
    step_taken: float  # (fl(x0+dx) - fl(x0-dx)) / 2: what the dtype could actually do
    y: float  # f(x) in the dtype
    y_plus: float
    y_minus: float
    estimate: float  # (y+ - y-) / (2 dx), as scipy.misc.derivative computed it
    ulp_y: float  # the smaller ulp of y+ and y-
    quantum: float  # ulp_y / (2 dx): the estimate is a multiple of this
    k: int
    autograd: float  # autograd's partial derivative, in the dtype
    reference: float  # autograd of the same (dtype-rounded) network in float64

    @property
    def same_binade(self) -> bool:
        """y+ and y- share an exponent, so the quantum is exactly ulp(y)/(2 dx)."""
        return math.frexp(self.y_plus)[1] == math.frexp(self.y_minus)[1]

    @property
    def nearest_multiple_of_reference(self) -> int:
        """The integer k that would land closest to the true derivative."""
        return round(self.reference / self.quantum)

    @property
    def autograd_error(self) -> float:
        """Autograd (in the dtype) minus the float64 reference."""
        return self.autograd - self.reference

    @property
    def estimate_error(self) -> float:
        """The central difference minus the float64 reference."""
        return self.estimate - self.reference

    @property
    def step_vanished(self) -> bool:
        """x0 ± dx rounds back to x0 in the dtype: the difference is exactly 0, whatever f is."""
        return self.step_taken == 0


def _reference_gradient(net: Network, x: torch.Tensor) -> torch.Tensor:
    # The dtype-rounded weights and input are exact in float64, and a float64
    # forward/backward pass is ~1e-16 relative: far finer than float32's 6e-8.
    return autograd_gradient(net.to(torch.float64), x.to(torch.float64))


def finite_difference(settings: NetworkSettings) -> FiniteDifference:
    """The question's experiment: autograd and a central difference with step ``settings.step``.

    >>> fd = finite_difference(NetworkSettings(dtype="float64", step=6e-6))
    >>> abs(fd.estimate - fd.autograd) < 1e-8 * abs(fd.autograd)
    True
    """
    s = settings.validated()
    net, x = build_network(s), network_input(s)
    steps = np.array([s.step])
    y_plus, y_minus, taken = _perturbed_outputs(net, x, s.index, steps)
    spacing, quantum, k = _quantum(y_plus, y_minus, steps, s.dtype)
    y = float(net.output(x))
    x0 = float(x[s.index])
    return FiniteDifference(
        dtype=s.dtype, index=s.index, x0=x0, step=s.step, step_taken=float(taken[0]),
        y=y, y_plus=float(y_plus[0]), y_minus=float(y_minus[0]),
        estimate=scipy_derivative(lambda v: _output_at(net, x, s.index, v), x0, s.step),
        ulp_y=float(spacing[0]), quantum=float(quantum[0]), k=int(k[0]),
        autograd=float(autograd_gradient(net, x)[s.index]),
        reference=float(_reference_gradient(net, x)[s.index]),
    )


# ---------------------------------------------------------------- the sweep over steps


@dataclass(frozen=True, eq=False)
class StepSweep:
    """Central differences over log-spaced steps.

    ``table`` columns: step, step_taken, estimate, autograd, reference, abs_error
    (|estimate - autograd|), ref_error (|estimate - reference|), quantum, k, y_plus, y_minus.
    """

    dtype: str
    table: pd.DataFrame
    autograd: float
    reference: float
    predicted_step: float  # theory optimum for a central difference in this dtype
    default_step: float  # the same assuming |f/f'''| ~ 1
    third_derivative: float  # estimated in float64; 0 means no truncation error
    notes: tuple[str, ...]

    def best_row(self) -> pd.Series:
        """The sweep's row closest to the float64 reference."""
        return self.table.loc[self.table["ref_error"].idxmin()]


def _third_derivative(net: Network, x: torch.Tensor, index: int) -> tuple[float, float, float]:
    """(f, f', f''') along x[index], in float64 on the dtype-rounded network.

    A relu network is piecewise linear: f''' is 0 between kinks (and a stencil
    that straddles a kink would report a meaningless spike), so it is 0 here.
    Otherwise f''' comes from the 4-point stencil (f(x+2h) - 2f(x+h) + 2f(x-h) - f(x-2h)) / (2h**3),
    whose error balance in float64 is best near h ~ u**(1/5).
    """
    net64, x64 = net.to(torch.float64), x.to(torch.float64)
    h = facts("float64").unit_roundoff ** (1 / 5) * max(1.0, abs(float(x64[index])))
    offsets = torch.tensor([2.0, 1.0, -1.0, -2.0], dtype=torch.float64) * h
    batch = x64.repeat(4, 1)
    batch[:, index] += offsets
    with torch.no_grad():
        f2, f1, m1, m2 = net64.output(batch).tolist()
        f0 = float(net64.output(x64))
    d1 = float(_reference_gradient(net, x)[index])
    if not ACTIVATIONS[net.activation].smooth:
        return f0, d1, 0.0
    return f0, d1, (f2 - 2 * f1 + 2 * m1 - m2) / (2 * h**3)


def step_sweep(settings: NetworkSettings) -> StepSweep:
    """Estimates for log-spaced steps from ``step_min`` to ``step_max`` (one batched forward pass).

    >>> sw = step_sweep(NetworkSettings(points=5))
    >>> list(sw.table.columns)[:4]
    ['step', 'step_taken', 'estimate', 'autograd']
    """
    s = settings.validated()
    net, x = build_network(s), network_input(s)
    steps = np.logspace(math.log10(s.step_min), math.log10(s.step_max), s.points)
    y_plus, y_minus, taken = _perturbed_outputs(net, x, s.index, steps)
    _, quantum, k = _quantum(y_plus, y_minus, steps, s.dtype)
    estimate = (y_plus - y_minus) / (2 * steps)
    grad = float(autograd_gradient(net, x)[s.index])
    f0, d1, d3 = _third_derivative(net, x, s.index)
    reference = d1
    table = pd.DataFrame({
        "step": steps, "step_taken": taken, "estimate": estimate, "autograd": grad, "reference": reference,
        "abs_error": np.abs(estimate - grad), "ref_error": np.abs(estimate - reference),
        "quantum": quantum, "k": k, "y_plus": y_plus, "y_minus": y_minus,
    })
    x0 = float(x[s.index])
    predicted = predicted_best_step("central", s.dtype, {0: f0, 1: d1, 3: d3}, x0)
    notes = []
    if predicted is None:
        notes.append(
            "The estimated third derivative is zero, so a central difference has no truncation error "
            "here: any step above the round-off region works (until it crosses a relu kink)."
        )
    return StepSweep(
        dtype=s.dtype, table=table, autograd=grad, reference=reference,
        predicted_step=predicted if predicted is not None else float("nan"),
        default_step=default_step("central", s.dtype, x0), third_derivative=d3, notes=tuple(notes),
    )


# ---------------------------------------------------------------- one experiment, as a page shows it


@dataclass(frozen=True, eq=False)
class NetworkExperiment:
    """The question's central difference at ``settings.step`` and the sweep over steps, for one network."""

    difference: FiniteDifference
    sweep: StepSweep


def network_experiment(settings: NetworkSettings) -> NetworkExperiment:
    """:func:`finite_difference` and :func:`step_sweep` of the same settings, in one result.

    >>> e = network_experiment(NetworkSettings(points=5))
    >>> e.difference.autograd == e.sweep.autograd, len(e.sweep.table)
    (True, 5)
    >>> network_experiment(NetworkSettings(dtype="float16", step=1e-9)).difference.step_vanished
    True
    """
    s = settings.validated()
    return NetworkExperiment(finite_difference(s), step_sweep(s))
