"""Finite-difference schemes: stencils, orders, and the error model behind the V curve.

A real stencil estimates ``f'(x) ~ sum(w_k * f(x + c_k*h)) / h``. Its error is
modelled as truncation plus round-off (README, "The mathematics"):

    error(h) ~ C_t * |f^(k)| * h**p  +  C_r * u * (|f| + |x*f'|) / h  +  u * |f'|

where p is the order, k = p + 1 the derivative the truncation needs, u the
dtype's unit round-off, ``C_r = sum |w_k|`` (rounding of each function value,
and of each shifted point ``x + c_k*h``, is amplified by the weights), and the
last term is the rounding of any result of size f'. The complex step has no
subtraction, so ``C_r = 0``.

Each scheme is one row of :data:`SCHEMES`: its stencil and error constants, and
how it is shown (a short label for widgets and the URL, a long label for prose,
a line dash and a marker symbol for figures, a one-line help). Adding a scheme is
that one row: the widgets (:mod:`gradlab.ui.controls`), the Explorer's URL
values, the figures' styles (:mod:`gradlab.figures.style`), the tables and the
CLI's choices all read the table (``tests/test_schemes.py`` checks every row).

>>> get_scheme("central").order
2
>>> round(default_step("central", "float64"), 8)  # (3u)**(1/3)
6.93e-06
>>> stencil_estimates(torch.exp, 0.0, np.array([1e-3]), "central", "float64").round(6)
array([1.])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import torch

from gradlab.errors import GradLabError
from gradlab.numerics.emulation import emulated, to_dtype
from gradlab.numerics.dtypes import facts

__all__ = [
    "Scheme",
    "SCHEMES",
    "SCHEME_NAMES",
    "get_scheme",
    "default_step",
    "predicted_error",
    "predicted_terms",
    "predicted_best_step",
    "not_applicable_reason",
    "stencil_estimates",
    "estimates_by_scheme",
    "step_taken",
]


@dataclass(frozen=True, kw_only=True)
class Scheme:
    """One finite-difference formula, the constants of its error model, and how it is shown."""

    name: str  # the engine's and the CLI's name: "five_point"
    label: str  # long label for prose and notes: "5-point central"
    short_label: str  # what widgets show and the URL carries: "5-point" (never change one)
    order: int  # p: truncation error shrinks like h**p
    offsets: tuple[float, ...]  # c_k: where f is evaluated, in units of h
    weights: tuple[float, ...]  # w_k: estimate = sum(w_k f(x + c_k h)) / h
    truncation_constant: float  # C_t in C_t * |f^(p+1)| * h**p
    dash: str  # Plotly line dash of its curves
    symbol: str  # Plotly marker symbol, so schemes stay apart where dashes are hard to see
    help: str  # one line for the widget's help
    complex_step: bool = False

    @property
    def truncation_derivative(self) -> int:
        """Which derivative of f sets the truncation error (p + 1)."""
        return self.order + 1

    @property
    def curve_label(self) -> str:
        """The long label without "difference" or a parenthesis: legends and tables.

        >>> [SCHEMES[n].curve_label for n in ("forward", "five_point", "richardson")]
        ['forward', '5-point central', 'Richardson']
        """
        return self.label.split(" (")[0].replace(" difference", "")

    @property
    def roundoff_constant(self) -> float:
        """C_r = sum |w_k|: how much the weights amplify rounding of f's values."""
        return float(sum(abs(w) for w in self.weights))


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme(name="forward", label="forward difference", short_label="Forward",
               order=1, offsets=(0.0, 1.0), weights=(-1.0, 1.0), truncation_constant=1 / 2,
               dash="dash", symbol="triangle-up", help="(f(x+h) − f(x))/h: error ∝ h, one-sided."),
        Scheme(name="backward", label="backward difference", short_label="Backward",
               order=1, offsets=(-1.0, 0.0), weights=(-1.0, 1.0), truncation_constant=1 / 2,
               dash="dashdot", symbol="triangle-down", help="(f(x) − f(x−h))/h: error ∝ h, one-sided."),
        Scheme(name="central", label="central difference", short_label="Central",
               order=2, offsets=(-1.0, 1.0), weights=(-1 / 2, 1 / 2), truncation_constant=1 / 6,
               dash="solid", symbol="circle", help="(f(x+h) − f(x−h))/2h: error ∝ h²."),
        Scheme(name="five_point", label="5-point central", short_label="5-point",
               order=4, offsets=(-2.0, -1.0, 1.0, 2.0), weights=(1 / 12, -8 / 12, 8 / 12, -1 / 12),
               truncation_constant=1 / 30, dash="longdash", symbol="square",
               help="four points around x: error ∝ h⁴."),
        # Im f(x + ih) / h: no subtraction, hence no cancellation.
        Scheme(name="complex_step", label="complex step", short_label="Complex step",
               order=2, offsets=(), weights=(), truncation_constant=1 / 6, complex_step=True,
               dash="longdashdot", symbol="diamond",
               help="Im f(x+ih)/h: no cancellation, so h can be tiny; needs a holomorphic function "
                    "(one with a complex derivative everywhere nearby, like sin, exp or a polynomial; "
                    "not abs or max)."),
        # (4 D(h/2) - D(h)) / 3 with D the central difference: the h**2 terms cancel.
        Scheme(name="richardson", label="Richardson (central)", short_label="Richardson",
               order=4, offsets=(-1.0, -0.5, 0.5, 1.0), weights=(1 / 6, -4 / 3, 4 / 3, -1 / 6),
               truncation_constant=1 / 480, dash="6px,3px,2px,3px", symbol="x",
               help="extrapolates two central differences: error ∝ h⁴."),
    )
}

SCHEME_NAMES: tuple[str, ...] = tuple(SCHEMES)


def get_scheme(scheme: str | Scheme) -> Scheme:
    """Look a scheme up by name; its short label ("5-point", "Complex step") works too.

    >>> get_scheme("5-point").name, get_scheme("complex").name
    ('five_point', 'complex_step')
    """
    if isinstance(scheme, Scheme):
        return scheme
    key = _key(scheme)
    key = {"complex": "complex_step", "fivepoint": "five_point"}.get(key, key)
    if key not in SCHEMES:
        key = next((s.name for s in SCHEMES.values() if _key(s.short_label) == key), key)
    if key not in SCHEMES:
        raise GradLabError(f"Unknown scheme {scheme!r}; GradLab knows: {', '.join(SCHEMES)}.")
    return SCHEMES[key]


def _key(text: str) -> str:
    return str(text).strip().lower().replace("-", "_").replace(" ", "_")


# ---------------------------------------------------------------- error model


def _scale(derivatives: Mapping[int, float], x: float) -> float:
    """|f| + |x f'|: the size of what rounding perturbs when f and x + c h are rounded."""
    return abs(float(derivatives[0])) + abs(x * float(derivatives[1]))


def predicted_terms(
    scheme: str | Scheme, dtype, h, derivatives: Mapping[int, float], x: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(truncation, round-off) absolute errors predicted for steps ``h``.

    ``derivatives`` maps order -> value at x: it needs 0, 1 and the scheme's
    truncation derivative (2, 3 or 5).

    >>> t, r = predicted_terms("forward", "float64", np.array([1e-8]), {0: 1.0, 1: 1.0, 2: 1.0})
    >>> float(t[0]), float(r[0]) > 0
    (5e-09, True)
    """
    s = get_scheme(scheme)
    u = facts(dtype).unit_roundoff
    h = np.abs(np.asarray(h, dtype=np.float64))
    fk = abs(float(derivatives[s.truncation_derivative]))
    truncation = s.truncation_constant * fk * h**s.order
    with np.errstate(divide="ignore"):
        roundoff = s.roundoff_constant * u * _scale(derivatives, x) / h + u * abs(float(derivatives[1]))
    return truncation, roundoff


def predicted_error(scheme, dtype, h, derivatives: Mapping[int, float], x: float = 0.0) -> np.ndarray:
    """Truncation plus round-off: the theory's V-shaped curve."""
    truncation, roundoff = predicted_terms(scheme, dtype, h, derivatives, x)
    return truncation + roundoff


def predicted_best_step(scheme, dtype, derivatives: Mapping[int, float], x: float = 0.0) -> float | None:
    """The step where the predicted error is smallest; None when the model has no minimum.

    Minimising C_t F_k h**p + C_r u S / h gives h* = (C_r u S / (p C_t F_k))**(1/(p+1)).
    For the complex step (no round-off term growing as 1/h) it is the step below
    which truncation is under the round-off floor u |f'|.

    >>> round(predicted_best_step("forward", "float64", {0: 1.0, 1: 1.0, 2: 1.0}), 10)  # 2 sqrt(u)
    2.11e-08
    """
    s = get_scheme(scheme)
    u = facts(dtype).unit_roundoff
    fk = abs(float(derivatives[s.truncation_derivative]))
    if fk == 0 or not np.isfinite(fk):
        return None
    if s.complex_step:
        floor = u * abs(float(derivatives[1]))
        return float((floor / (s.truncation_constant * fk)) ** (1 / s.order)) if floor > 0 else None
    scale = _scale(derivatives, x)
    if scale == 0 or not np.isfinite(scale):
        return None
    return float((s.roundoff_constant * u * scale / (s.order * s.truncation_constant * fk)) ** (1 / (s.order + 1)))


def default_step(scheme: str | Scheme, dtype, x: float = 0.0) -> float:
    """A step from the dtype's unit round-off, assuming |f/f^(k)| ~ 1 and scaled by max(1, |x|).

    Never a fixed 1e-6: the right step depends on the working precision.

    >>> round(default_step("forward", "float32") / facts("float32").sqrt_eps, 3)  # 2 sqrt(u) = sqrt(2 eps)
    1.414
    """
    s = get_scheme(scheme)
    size = max(1.0, abs(float(x)))
    u = facts(dtype).unit_roundoff
    if s.complex_step:
        return u * size  # far below sqrt(6u), the truncation threshold, and far above underflow
    return size * (s.roundoff_constant * u / (s.order * s.truncation_constant)) ** (1 / (s.order + 1))


def not_applicable_reason(scheme: str | Scheme, dtype, expression=None) -> str | None:
    """Why a scheme cannot be used here, in words; None when it can.

    >>> not_applicable_reason("complex_step", "bfloat16")
    'The complex step needs a complex dtype, and torch has no complex partner of bfloat16.'
    """
    s = get_scheme(scheme)
    if not s.complex_step:
        return None
    info = facts(dtype)
    if info.complex_partner is None:
        return f"The complex step needs a complex dtype, and torch has no complex partner of {info.name}."
    if expression is not None and not getattr(expression, "holomorphic", True):
        return "The complex step needs a holomorphic function; abs and relu have a kink and are not."
    if expression is not None and not getattr(expression, "complex_ok", True):
        return "The complex step needs complex arithmetic, which torch does not provide for erf."
    return None


# ---------------------------------------------------------------- estimates


def _as_dtype(values, dtype) -> torch.Tensor:
    """``values`` as the dtype holds them (an emulated 8-bit dtype: in float32, rounded to it)."""
    return to_dtype(values, dtype)


def step_taken(x: float, h, dtype) -> np.ndarray:
    """The step actually taken, ``(x + h) - x`` computed in the dtype (not h itself).

    >>> step_taken(1.0, np.array([1e-9]), "float32")  # below eps/2: x + h rounds back to x
    array([0.])
    """
    xd = _as_dtype(x, dtype)
    with emulated(dtype):
        taken = (xd + _as_dtype(h, dtype)) - xd
    return taken.to(torch.float64).numpy()


def stencil_estimates(
    fn: Callable[[torch.Tensor], torch.Tensor], x: float, h, scheme: str | Scheme, dtype
) -> np.ndarray:
    """Estimates of f'(x) for every nominal step in ``h``, vectorised over h.

    Function values are computed in the dtype, as a user would; the weighted
    sum and the division by the nominal h are done in float64, so what the
    curve shows is the rounding of f and of x + c h, not an artefact of
    dividing by an h the dtype cannot hold.
    """
    return estimates_by_scheme(fn, x, h, (scheme,), dtype)[get_scheme(scheme).name]


def estimates_by_scheme(
    fn: Callable[[torch.Tensor], torch.Tensor], x: float, h, schemes, dtype
) -> dict[str, np.ndarray]:
    """Estimates for several schemes at once: every real stencil point of every
    scheme and every step goes through ``fn`` in ONE call (plus one complex call).

    >>> est = estimates_by_scheme(torch.sin, 0.0, np.array([1e-4]), ("forward", "central"), "float64")
    >>> [round(float(v[0]), 6) for v in est.values()]
    [1.0, 1.0]
    """
    chosen = [get_scheme(s) for s in schemes]
    h64 = torch.as_tensor(np.asarray(h, dtype=np.float64))
    results: dict[str, np.ndarray] = {}
    with torch.no_grad():
        real = [s for s in chosen if not s.complex_step]
        if real:
            results.update(_real_stencils(fn, x, h64, real, dtype))
        if any(s.complex_step for s in chosen):
            results["complex_step"] = _complex_step(fn, x, h64, dtype)
    return {s.name: results[s.name] for s in chosen}


def _real_stencils(fn, x: float, h64: torch.Tensor, schemes: list[Scheme], dtype) -> dict[str, np.ndarray]:
    xd = _as_dtype(x, dtype)
    offsets = torch.tensor([c for s in schemes for c in s.offsets], dtype=torch.float64)[:, None]
    moves = _as_dtype((offsets * h64).numpy(), dtype)  # each c·h as the dtype holds it
    with emulated(dtype):  # an emulated dtype rounds x + c·h and every value of fn
        values = fn(xd + moves).to(torch.float64)  # shape (all stencil points, steps)
    results, start = {}, 0
    for s in schemes:
        rows = values[start : start + len(s.offsets)]
        start += len(s.offsets)
        weights = torch.tensor(s.weights, dtype=torch.float64)[:, None]
        # The weights sum to zero, so subtracting one value changes nothing in exact
        # arithmetic, and makes equal values (a step too small for the dtype) give
        # exactly 0 instead of float64 dust from weights like 1/6 and 4/3.
        results[s.name] = ((weights * (rows - rows[:1])).sum(dim=0) / h64).numpy()
    return results


def _complex_step(fn, x: float, h64: torch.Tensor, dtype) -> np.ndarray:
    partner = facts(dtype).complex_partner
    if partner is None:
        raise GradLabError(not_applicable_reason("complex_step", dtype))
    real_dtype = facts(dtype).torch_dtype
    xd = _as_dtype(x, dtype).expand(h64.shape)
    z = torch.complex(xd, h64.to(real_dtype)).to(partner)
    return (fn(z).imag.to(torch.float64) / h64).numpy()
