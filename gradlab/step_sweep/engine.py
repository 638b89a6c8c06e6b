"""The error-vs-eps sweep: every estimate over a log-spaced range of steps, per dtype and scheme.

Estimates are vectorised over eps (one torch call per dtype and scheme, all
stencil points and steps at once), measured against the exact derivative at the
dtype-rounded point, and returned as tidy tables together with autograd's own
error, the theory's predicted best step, the estimates at each stop of the chart's
step slider when the settings ask (``frames``, :mod:`gradlab.step_sweep.step_frames`: computed
in the same call of f; a chart draws them, the CLI, the API and a notebook do not) and notes
(:class:`gradlab.notes.Note`) whose level the engine sets: a page never reads the words to decide.

>>> result = run_sweep(SweepSettings("1/x", 0.3, dtypes=("float64",), schemes=("central",), points=17))
>>> sorted(result.table.columns)[:4]
['abs_error', 'dtype', 'eps', 'estimate']
>>> bool(result.best.loc[0, "rel_error"] < 1e-9)
True
>>> [n.level for n in run_sweep(SweepSettings("exp(x)", 100.0, ("float16",), ("central",), points=5)).notes]
['warning', 'info', 'info']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import torch

from gradlab.errors import GradLabError
from gradlab.numerics.expressions import Expression, parse
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import DTYPE_NAMES, facts
from gradlab.numerics.emulation import emulated, to_dtype
from gradlab.numerics.exact_derivatives import Reference, exact_derivatives, reference_at
from gradlab.notes import Note
from gradlab.notebook_html import ShownInNotebook
from gradlab.step_sweep.notes import (EMULATION_NOTE, FP8_CHECKING_NOTE, emulation_notes, gap_notes, no_reference_note,
                                  zero_step_notes)
from gradlab.step_sweep.step_frames import StepFrames, frame_block, slider_steps
from gradlab.numerics.schemes import (
    SCHEME_NAMES,
    get_scheme,
    not_applicable_reason,
    predicted_best_step,
    predicted_error,
    predicted_terms,
    estimates_by_scheme,
    step_taken,
)

__all__ = ["SweepSettings", "SweepResult", "run_sweep", "autograd_derivative", "TABLE_COLUMNS",
           "BEST_COLUMNS", "AROUND_BEST", "robust_best", "emulation_notes", "EMULATION_NOTE",
           "FP8_CHECKING_NOTE", "no_reference_note"]

TABLE_COLUMNS = (
    "dtype", "scheme", "eps", "step", "estimate", "reference", "abs_error", "rel_error",
    "finite", "truncation", "roundoff", "predicted",
)

#: The best-step table's columns: the best sample (eps, its errors), the step whose neighbourhood
#: does best with the median error there (:func:`robust_best`), the theory's best step and error.
BEST_COLUMNS = ("dtype", "scheme", "eps", "abs_error", "rel_error", "robust_eps", "robust_rel_error",
                "predicted_eps", "predicted_rel_error")

#: Steps within this factor of a best step count as "around" it (about a decade in all).
AROUND_BEST = 3.0


@dataclass(frozen=True)
class SweepSettings:
    """Everything a sweep depends on, as plain values (so it can key a cache or a URL)."""

    expression: str
    x: float
    dtypes: tuple[str, ...] = DTYPE_NAMES
    schemes: tuple[str, ...] = SCHEME_NAMES
    eps_min: float = 1e-16
    eps_max: float = 1.0
    points: int = 61
    #: Whether to compute the step slider's frames too (:attr:`SweepResult.frames`): a chart with the
    #: slider asks; the CLI, the API and a notebook draw none and skip f at the slider's stops.
    frames: bool = False

    def validated(self) -> "SweepSettings":
        """Normalised names, or a GradLabError that says what to fix."""
        if not isinstance(self.x, (int, float)) or not math.isfinite(self.x):
            raise GradLabError(f"The point x must be a finite number; got {self.x!r}.")
        for label, value in (("eps-min", self.eps_min), ("eps-max", self.eps_max)):
            if not math.isfinite(value) or value <= 0:
                raise GradLabError(f"{label} must be a positive finite number; got {value!r}.")
        if self.eps_min >= self.eps_max:
            raise GradLabError(
                f"eps-min ({self.eps_min:g}) must be smaller than eps-max ({self.eps_max:g})."
            )
        if self.eps_min < LIMITS.eps_smallest or self.eps_max > LIMITS.eps_largest:
            raise GradLabError(
                f"The eps range must lie within [{LIMITS.eps_smallest:g}, {LIMITS.eps_largest:g}]."
            )
        if int(self.points) != self.points or self.points < 2:
            raise GradLabError(f"The number of points must be a whole number of at least 2; got {self.points!r}.")
        within_limit("sweep points", int(self.points), LIMITS.sweep_points)
        if not self.dtypes:
            raise GradLabError("Choose at least one dtype.")
        if not self.schemes:
            raise GradLabError("Choose at least one scheme.")
        dtypes = tuple(dict.fromkeys(facts(d).name for d in self.dtypes))
        schemes = tuple(dict.fromkeys(get_scheme(s).name for s in self.schemes))
        return SweepSettings(parse(self.expression).text, float(self.x), dtypes, schemes,
                             float(self.eps_min), float(self.eps_max), int(self.points), bool(self.frames))

    def eps_values(self) -> np.ndarray:
        return np.logspace(math.log10(self.eps_min), math.log10(self.eps_max), int(self.points))


@dataclass(frozen=True)
class SweepResult(ShownInNotebook):
    """The sweep's tidy tables and what is needed to explain them."""

    settings: SweepSettings
    table: pd.DataFrame  # one row per (dtype, scheme, eps): TABLE_COLUMNS
    autograd: pd.DataFrame  # one row per dtype: dtype value reference abs_error rel_error
    best: pd.DataFrame  # one row per (dtype, scheme): observed and predicted best step
    references: dict[str, Reference]  # per dtype, at x rounded to that dtype
    rounded_x: dict[str, float]
    derivative_text: str
    reference: Reference  # at x as typed (float64)
    notes: tuple[Note, ...] = field(default=())
    #: The estimates at each stop of the step slider (:mod:`gradlab.step_sweep.step_frames`) as numpy
    #: columns, one row per (dtype, scheme, h), so a drag in the browser only switches frames; no
    #: rows unless ``settings.frames``. ``frames.table()`` is them as a DataFrame.
    frames: StepFrames = field(default_factory=lambda: StepFrames.joined(()))

    def figure(self):
        """The error-vs-eps figure (:func:`gradlab.step_sweep.display.sweep_figure`)."""
        from gradlab.step_sweep.display import sweep_figure  # plotly: only when a figure is drawn

        return sweep_figure(self)

    def _notebook_block(self):
        """What Jupyter shows: the best steps, the notes, and the figure through Plotly's renderer
        (:func:`gradlab.step_sweep.display.sweep_block`)."""
        from gradlab.step_sweep.display import sweep_block

        return sweep_block(self)

    @cached_property
    def best_rows(self) -> tuple[dict, ...]:
        """The best-step table's rows as plain dicts, read once: the figures and the answer take a few
        of its values on every new view, where pandas filters and rows cost more than the work."""
        columns = {name: self.best[name].tolist() for name in self.best.columns}
        return tuple(dict(zip(columns, values)) for values in zip(*columns.values()))

    @property
    def warnings(self) -> tuple[Note, ...]:
        return tuple(n for n in self.notes if n.is_warning)

    @property
    def infos(self) -> tuple[Note, ...]:
        return tuple(n for n in self.notes if not n.is_warning)


def autograd_derivative(expression: Expression, x: float, dtype) -> float:
    """What ``torch.autograd`` gives for f'(x) in the dtype, as a float64 number.

    >>> autograd_derivative(parse("x**3"), 2.0, "float32")
    12.0
    """
    xd = to_dtype(float(x), dtype).requires_grad_(True)
    with emulated(dtype):  # an emulated dtype rounds every value, forward and backward
        (grad,) = torch.autograd.grad(expression(xd), xd)
    return float(to_dtype(grad.to(torch.float64).numpy(), dtype).to(torch.float64))  # x.grad is stored in the dtype


def run_sweep(settings: SweepSettings) -> SweepResult:
    """Run the sweep; bad settings raise GradLabError, odd numbers become NaN/inf rows."""
    settings = settings.validated()
    expr = parse(settings.expression)
    eps = settings.eps_values()
    notes: list[Note] = []
    tables, autograd_rows, best_rows, frames = [], [], [], []
    stops = np.array(slider_steps(settings.eps_min, settings.eps_max) if settings.frames else (), dtype=np.float64)
    references, rounded = {}, {}
    for dtype in settings.dtypes:
        ref, xr = _dtype_reference(expr, settings.x, dtype, notes)
        if ref is None:
            continue
        references[dtype], rounded[dtype] = ref, xr
        autograd_rows.append(_autograd_row(expr, xr, dtype, ref))
        usable = []
        for scheme in settings.schemes:
            reason = not_applicable_reason(scheme, dtype, expr)
            if reason:
                notes.append(Note.info(f"{get_scheme(scheme).label} in {dtype}: not applicable. {reason}"))
            else:
                usable.append(scheme)
        with np.errstate(all="ignore"):  # the sweep's steps and the slider's stops in one call of f
            both = estimates_by_scheme(expr, xr, np.concatenate([eps, stops]), usable, dtype)
        estimates = {s: v[:len(eps)] for s, v in both.items()}
        steps = step_taken(xr, eps, dtype)
        if any(not get_scheme(s).complex_step for s in usable):
            notes.extend(zero_step_notes(steps, xr, dtype))
        frames.extend(frame_block(ref, dtype, stops, {s: v[len(eps):] for s, v in both.items()}))
        for scheme in usable:
            columns = _scheme_columns(estimates[scheme], xr, dtype, scheme, eps, steps, ref)
            tables.append(columns)
            best_rows.append(_best_row(columns, dtype, scheme, xr, ref))
    reference = exact_derivatives(expr, settings.x)
    if not reference.defined:
        notes.insert(0, no_reference_note(reference))
    notes.extend(gap_notes(tables))
    notes[:0] = emulation_notes(settings.dtypes)
    return SweepResult(
        settings=settings,
        table=_concat(tables, TABLE_COLUMNS),
        autograd=pd.DataFrame(autograd_rows, columns=["dtype", "x", "value", "reference", "abs_error", "rel_error"]),
        best=pd.DataFrame(best_rows, columns=list(BEST_COLUMNS)),
        references=references,
        rounded_x=rounded,
        derivative_text=str(expr.derivative()),
        reference=reference,
        notes=tuple(notes),
        frames=StepFrames.joined(frames),
    )


def _dtype_reference(expr: Expression, x: float, dtype: str, notes: list[Note]):
    info = facts(dtype)
    if abs(x) > info.max:
        notes.append(Note.warning(f"{dtype}: x = {x:g} is beyond the largest {dtype} ({info.max:g}); skipped."))
        return None, None
    ref = reference_at(expr, x, dtype)
    if not ref.defined and ref.x != x:
        notes.append(Note.warning(
            f"{dtype}: x rounds to {ref.x:.17g}, where {ref.reason[0].lower()}{ref.reason[1:]}"))
    if ref.defined and abs(float(ref.f)) > info.max:
        notes.append(Note.warning(f"{dtype}: f(x) = {float(ref.f):.3g} overflows {dtype} (largest "
                                  f"{info.max:g}); its estimates are inf or NaN."))
    return ref, ref.x


def _autograd_row(expr: Expression, xr: float, dtype: str, ref: Reference) -> tuple:
    value = autograd_derivative(expr, xr, dtype)
    exact = float(ref.d1) if ref.defined else math.nan
    abs_error, rel_error = _errors(np.array([value]), exact)
    return (dtype, xr, value, exact, float(abs_error[0]), float(rel_error[0]))


def _errors(estimates: np.ndarray, exact: float) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore", divide="ignore"):
        abs_error = np.abs(estimates - exact)
        rel_error = abs_error / abs(exact) if exact != 0 else np.full_like(abs_error, math.nan)
    return abs_error, rel_error


def _scheme_columns(estimates: np.ndarray, xr, dtype, scheme, eps, steps, ref: Reference) -> dict:
    """One (dtype, scheme) block of the tidy table, as columns of equal length.

    ``steps`` are the real steps taken, ``(x + h) - x`` in the dtype; the complex
    step is taken along the imaginary axis, as the dtype holds h.
    """
    exact = float(ref.d1) if ref.defined else math.nan
    abs_error, rel_error = _errors(estimates, exact)
    truncation, roundoff = _theory(scheme, dtype, eps, ref, xr)
    steps = _as_cast(eps, dtype) if get_scheme(scheme).complex_step else steps
    n = len(eps)
    return {  # dtype and scheme hold one label for the whole block
        "dtype": (dtype,), "scheme": (get_scheme(scheme).name,), "eps": eps, "step": steps,
        "estimate": estimates, "reference": np.full(n, exact), "abs_error": abs_error,
        "rel_error": rel_error, "finite": np.isfinite(estimates), "truncation": truncation,
        "roundoff": roundoff, "predicted": truncation + roundoff,
    }


def _as_cast(eps: np.ndarray, dtype: str) -> np.ndarray:
    return torch.as_tensor(eps).to(facts(dtype).torch_dtype).to(torch.float64).numpy()


def _theory(scheme, dtype, eps, ref: Reference, xr: float) -> tuple[np.ndarray, np.ndarray]:
    derivatives = ref.floats()
    needed = get_scheme(scheme).truncation_derivative
    if not ref.defined or needed not in derivatives:
        nan = np.full_like(eps, math.nan)
        return nan, nan
    with np.errstate(all="ignore"):
        return predicted_terms(scheme, dtype, eps, derivatives, xr)


def _best_row(columns: dict, dtype: str, scheme: str, xr: float, ref: Reference) -> tuple:
    errors = np.where(np.isfinite(columns["abs_error"]), columns["abs_error"], np.inf)
    if not np.isfinite(errors).any():
        observed = (math.nan,) * 5
    else:
        i = int(np.argmin(errors))  # the first (smallest eps) of equally good steps
        observed = (float(columns["eps"][i]), float(errors[i]), float(columns["rel_error"][i]),
                    *robust_best(columns["eps"], columns["rel_error"]))
    predicted_eps, predicted_rel = _predicted_best(scheme, dtype, xr, ref)
    return (dtype, get_scheme(scheme).name, *observed, predicted_eps, predicted_rel)


def robust_best(eps: np.ndarray, rel_error: np.ndarray) -> tuple[float, float]:
    """The step whose neighbourhood does best, and the upper median of the finite relative errors
    there (the steps within :data:`AROUND_BEST` of it, about a decade): what a difference does
    around its best step. Round-off makes the errors near the bottom of the V scatter by orders
    of magnitude, so the smallest single one says how lucky one sample was (the exact value sat
    near a rounded one), not what the dtype can do. ``eps`` is log-spaced, as a sweep's is.

    >>> robust_best(np.array([1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2]), np.array([3e-5, 1e-9, 5e-6, 1e-4, 1e-3]))
    (0.002, 5e-06)
    """
    errors = np.asarray(rel_error, dtype=float)
    if len(eps) < 2 or not np.isfinite(errors).any():
        finite = np.isfinite(errors)
        return (float(eps[finite][0]), float(errors[finite][0])) if finite.any() else (math.nan, math.nan)
    half = int(math.floor(math.log(AROUND_BEST) / math.log(eps[1] / eps[0]) + 1e-9))
    padded = np.pad(np.where(np.isfinite(errors), errors, np.nan), half, constant_values=np.nan)
    windows = np.sort(np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1), axis=1)  # NaN last
    counts = np.sum(np.isfinite(windows), axis=1)
    medians = np.where(counts > 0, windows[np.arange(len(windows)), counts // 2], np.inf)
    medians[~np.isfinite(errors)] = np.inf  # a window is centred on a finite estimate
    i = int(np.argmin(medians))  # the first (smallest eps) of equally good neighbourhoods
    return float(eps[i]), float(medians[i])


def _predicted_best(scheme, dtype, xr: float, ref: Reference) -> tuple[float, float]:
    derivatives = ref.floats()
    if not ref.defined or get_scheme(scheme).truncation_derivative not in derivatives:
        return math.nan, math.nan
    with np.errstate(all="ignore"):
        h = predicted_best_step(scheme, dtype, derivatives, xr)
        if h is None or not math.isfinite(h) or derivatives[1] == 0:
            return (math.nan if h is None else h), math.nan
        error = float(predicted_error(scheme, dtype, np.array([h]), derivatives, xr)[0])
    return h, error / abs(derivatives[1])


def _concat(tables: list[dict], columns) -> pd.DataFrame:
    if not tables:
        return pd.DataFrame({c: pd.Series(dtype=float) for c in columns})
    return pd.DataFrame({c: _column(tables, c) for c in columns})


def _column(tables: list[dict], name: str):
    if name in ("dtype", "scheme"):
        # Categoricals: pandas builds them from codes in microseconds, strings in milliseconds.
        labels = [t[name][0] for t in tables]
        categories = list(dict.fromkeys(labels))
        codes = np.concatenate([np.full(len(t["eps"]), categories.index(l)) for t, l in zip(tables, labels)])
        return pd.Categorical.from_codes(codes, categories=categories)
    return np.concatenate([np.asarray(t[name]) for t in tables])
