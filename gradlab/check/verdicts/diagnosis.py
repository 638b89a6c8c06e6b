"""Why a gradient check passed or failed, in plain words, with the fix.

The key number is the relative perturbation ``rho = h·|dL/dx_i| / |L|``: how
much of the loss a step changes. The loss is stored with relative error about
u (the dtype's unit round-off), so a stencil with weights w_k has round-off
relative error about ``sum|w_k|·u / rho``. When that exceeds the tolerance,
the check measures rounding, not the gradient (the 140x120 question: rho ≈ 4e-8 in
float32, where eps = 1.2e-7). Reduction "mean" divides L and dL/dx_i by the
same n, so it leaves rho — and the failure — unchanged.

The diagnosis explains the check at the step it was asked for; the verdict
(:mod:`gradlab.check.verdicts.judging`) comes after re-estimating at better steps.
When round-off is not the cause, halving h tells truncation (the estimate
moves by the amount the scheme's order predicts) from a wrong gradient (the
estimate stays put while autograd disagrees).

>>> e = Evidence(passed=False, dtype="float32", scheme="forward", step=1e-3, reduction="sum",
...              rtol=2e-3, atol=1e-5, relative_perturbation=3.9e-8, loss=25200.0,
...              summed_elements=16800, grad_scale=1.0, checked=5, failed=4, below_atol=0)
>>> d = diagnose(e)
>>> d.kind, d.level  # a warning: the check is meaningless, the gradient not shown wrong
('roundoff', 'warning')
>>> round(d.predicted_roundoff, 1)  # 2·u / rho with u = 6e-8
3.1
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import get_scheme

__all__ = ["Evidence", "Diagnosis", "diagnose"]

# A pass whose predicted round-off is within this factor of rtol is luck, not evidence.
MARGINAL_FACTOR = 10.0
# Halving h moves a truncation-dominated estimate by (1 - 2^-p) of its error;
# accept this band around that ratio as "truncation".
TRUNCATION_BAND = (0.5, 2.0)
# Round-off is the diagnosis when it explains at least this share of the failures.
ROUNDOFF_MAJORITY = 0.5
# Suggested smaller steps (truncation) aim this far inside the tolerance.
STEP_SAFETY = 10.0


@dataclass(frozen=True)
class Evidence:
    """What a check measured, as plain values."""

    passed: bool
    dtype: str  # the dtype the finite differences were computed in
    scheme: str
    step: float
    reduction: str
    rtol: float
    atol: float
    relative_perturbation: float  # median of h·|g_i|/|L| over the checked elements
    loss: float  # |L|, or the per-element scale for reduction "none"
    summed_elements: int  # how many output elements the loss adds up
    grad_scale: float  # median |autograd| over the checked elements
    checked: int
    failed: int
    below_atol: int  # checked elements with both values under atol
    autograd_dtype: str = ""
    worst_label: str = ""
    worst_autograd: float = math.nan
    worst_numeric: float = math.nan
    worst_rel_error: float = math.nan
    roundoff_explained: float = 0.0  # share of failing values whose predicted round-off > tolerance
    nonfinite: int = 0  # values (or the loss) that are nan or inf
    truncation_share: float | None = None  # measured / predicted change on halving h
    quantum: float | None = None  # ulp(L)/h: the resolution of the finite difference


@dataclass(frozen=True)
class Diagnosis:
    """The verdict explained: a kind, a display level, words, and fixes."""

    kind: str  # ok | marginal | vacuous | nonfinite | roundoff | truncation | gradient
    level: str  # success | warning (check inconclusive or set up badly) | error (gradient wrong)
    headline: str
    details: str
    fixes: tuple[str, ...]
    relative_perturbation: float
    machine_eps: float
    predicted_roundoff: float  # relative error that round-off alone would cause
    suggested_step: float | None

    @property
    def text(self) -> str:
        fixes = "".join(f"\n- {f}" for f in self.fixes)
        return f"{self.headline} {self.details}" + (f"\nWhat helps:{fixes}" if fixes else "")


def predicted_roundoff(e: Evidence) -> float:
    """sum|w_k|·u / rho: the relative error rounding of L alone puts in the estimate."""
    s = get_scheme(e.scheme)
    if s.complex_step:
        return facts(e.dtype).unit_roundoff  # no subtraction: only the last rounding
    if not e.relative_perturbation > 0:
        return math.inf
    return s.roundoff_constant * facts(e.dtype).unit_roundoff / e.relative_perturbation


def diagnose(e: Evidence) -> Diagnosis:
    """Classify the check and explain it; see the module docstring."""
    pred = predicted_roundoff(e)
    if e.nonfinite:
        return _nonfinite(e, pred)
    if e.passed:
        if e.checked and e.below_atol == e.checked:
            return _vacuous(e, pred)
        if pred * MARGINAL_FACTOR >= e.rtol and not get_scheme(e.scheme).complex_step:
            return _marginal(e, pred)
        return _ok(e, pred)
    if pred >= e.rtol or e.roundoff_explained >= ROUNDOFF_MAJORITY:
        return _roundoff(e, pred)
    share = e.truncation_share
    if share is not None and TRUNCATION_BAND[0] <= share <= TRUNCATION_BAND[1]:
        return _truncation(e, pred)
    return _gradient(e, pred)


def _make(e, pred, kind, level, headline, details, fixes=(), step=None) -> Diagnosis:
    return Diagnosis(kind, level, headline, details, tuple(fixes), e.relative_perturbation,
                     facts(e.dtype).eps, pred, step)


def _rho_sentence(e: Evidence) -> str:
    eps = facts(e.dtype).eps
    what = "each output element it changes" if e.reduction == "none" else "the loss"
    return (f"A step of h = {e.step:.3g} changes {what} (|L| ≈ {e.loss:.3g}) by a fraction "
            f"ρ = h·|dL/dx_i|/|L| ≈ {e.relative_perturbation:.2g} (the relative perturbation, median over the checked "
            f"elements), {e.relative_perturbation / eps:.2g}× {e.dtype}'s machine epsilon "
            f"({eps:.3g}).")


def _below_atol_note(e: Evidence) -> str:
    if not e.below_atol:
        return ""
    return (f" {e.below_atol} of the {e.checked} checked elements have both values below "
            f"atol = {e.atol:g}: they pass whatever the gradient, so they prove nothing.")


def _ok(e: Evidence, pred: float) -> Diagnosis:
    details = (_rho_sentence(e) + f" Round-off alone predicts a relative error of about "
               f"{pred:.1g}, well under rtol = {e.rtol:g}, so the agreement is meaningful."
               + _below_atol_note(e))
    return _make(e, pred, "ok", "success",
                 f"Pass: autograd and finite differences agree on all {e.checked} checked values.",
                 details)


def _marginal(e: Evidence, pred: float) -> Diagnosis:
    details = (_rho_sentence(e) + f" Round-off alone predicts a relative error of about "
               f"{pred:.1g}, within a factor {MARGINAL_FACTOR:g} of rtol = {e.rtol:g}: "
               "a little more summing or a smaller step would make this check fail."
               + _below_atol_note(e))
    return _make(e, pred, "marginal", "warning",
                 "Pass, but only just: round-off is close to the tolerance.",
                 details, _roundoff_fixes(e, pred), _step_for_roundoff(e))


def _vacuous(e: Evidence, pred: float) -> Diagnosis:
    details = (f"Every checked gradient, autograd's and the finite difference's, is below the "
               f"absolute tolerance atol = {e.atol:g} (median |dL/dx_i| = {e.grad_scale:.2g}), "
               "so the check would pass for any gradient of that size, right or wrong.")
    fixes = (f"Set atol lower (atol=0 makes the check purely relative).",
             "Scale the loss up, or check elements where the gradient is large.",
             "Use the Taylor test: it needs no tolerance.")
    return _make(e, pred, "vacuous", "warning",
                 "Vacuous pass: the gradient is below the absolute tolerance.", details, fixes)


def _nonfinite(e: Evidence, pred: float) -> Diagnosis:
    details = (f"{e.nonfinite} value(s) — the loss, autograd's gradient or the finite difference — "
               "are nan or inf, so nothing can be compared there. The function is probably "
               "undefined at (or near) some inputs: a log or sqrt of a negative number, a division "
               "by zero, an overflow.")
    fixes = ("Pick a function defined on all inputs (e.g. sqrt(abs(x)) or log(1 + x**2)), or "
             "inputs inside its domain.",
             "With reduction 'sum' or 'mean' one bad element spoils the whole loss: try 'none'.")
    return _make(e, pred, "nonfinite", "error",
                 "The function is not finite at some of the inputs.", details, fixes)


def _roundoff(e: Evidence, pred: float) -> Diagnosis:
    details = _rho_sentence(e) + (
        f" The difference of two rounded losses is then mostly rounding: round-off alone "
        f"predicts a relative error of about {pred:.2g}{_percent(pred)}, against rtol = {e.rtol:g}.")
    if 0 < e.failed < e.checked:
        details += (f" Only {e.failed} of {e.checked} values fail: those with the smallest "
                    "|dL/dx_i|, where the same rounding is a larger fraction of the gradient.")
    if e.quantum:
        details += (f" The finite difference can only take values in steps of about "
                    f"ulp(L)/h = {e.quantum:.3g}.")
    if e.reduction == "mean":
        details += (f" Reduction 'mean' does not help: it divides L and every dL/dx_i by the same "
                    f"{e.summed_elements}, so the fraction is unchanged.")
    elif e.reduction == "sum" and e.summed_elements > 1:
        details += " Reduction 'mean' would not help: it scales L and dL/dx_i alike."
    details += (" The check is meaningless here; this is not evidence that the gradient is wrong "
                "(autograd does not use finite differences).")
    # A warning, not an error: the check failed, but that says nothing about the gradient.
    return _make(e, pred, "roundoff", "warning",
                 "At this step, round-off swamps the finite difference.",
                 details, _roundoff_fixes(e, pred), _step_for_roundoff(e))


def _percent(value: float) -> str:
    return f" ({value:.0%})" if value >= 0.01 and math.isfinite(value) else ""


def _step_for_roundoff(e: Evidence) -> float | None:
    """The step at which round-off falls to rtol (it scales like 1/h): a lower bound."""
    pred = predicted_roundoff(e)
    if not math.isfinite(pred) or get_scheme(e.scheme).complex_step or not e.rtol > 0:
        return None  # rtol 0: no step brings round-off under a relative tolerance
    return e.step * pred / e.rtol


def _roundoff_fixes(e: Evidence, pred: float) -> list[str]:
    fixes = []
    if e.dtype != "float64":
        gain = facts(e.dtype).eps / facts("float64").eps
        fixes.append(f"Compute the finite differences in float64 (keep autograd in "
                     f"{e.autograd_dtype or e.dtype}): round-off drops by a factor {gain:.2g}.")
    if e.reduction in ("sum", "mean") and e.summed_elements > 1:
        keep = max(1, int(e.summed_elements * e.rtol / pred))  # rho grows like 1/n
        fixes.append(f"Sum fewer elements: |L| grows with the {e.summed_elements} summed ones, "
                     f"so ρ shrinks like 1/n; at most about {keep} would bring round-off "
                     "under the tolerance.")
        fixes.append("Check per element: reduction 'none' with grad_outputs takes each "
                     "difference of a single output element, of size ~|y_i| instead of |L|.")
    step = _step_for_roundoff(e)
    if step is not None:
        p = get_scheme(e.scheme).order
        fixes.append(f"Use a larger step: round-off falls like 1/h, so it needs h ≥ {step:.2g}, "
                     f"but truncation grows like h^{p} — look at the error-vs-eps chart.")
    return fixes


def _truncation(e: Evidence, pred: float) -> Diagnosis:
    s = get_scheme(e.scheme)
    details = (f"Halving h moved the finite difference by about what a scheme of order {s.order} "
               f"predicts (ratio {e.truncation_share:.2f} of the prediction), and round-off "
               f"predicts only {pred:.1g}: the error ~ h^{s.order} is truncation. "
               f"Worst: {e.worst_label}, autograd {e.worst_autograd:.6g}, finite difference "
               f"{e.worst_numeric:.6g} (relative error {e.worst_rel_error:.2g}).")
    step = None
    if e.worst_rel_error > 0 and math.isfinite(e.worst_rel_error):
        step = e.step * (e.rtol / (STEP_SAFETY * e.worst_rel_error)) ** (1 / s.order)
    fixes = []
    if step is not None:
        fixes.append(f"Use a smaller step, about h ≈ {step:.2g} (but not below where round-off "
                     "takes over).")
    if s.order < 4:
        fixes.append("Use a higher-order scheme: central (h²) or five_point (h⁴).")
    return _make(e, pred, "truncation", "warning",
                 "The step is too large: truncation error, not a wrong gradient.",
                 details, fixes, step)


def _gradient(e: Evidence, pred: float) -> Diagnosis:
    stable = ("Halving h leaves the finite difference where it was, "
              if e.truncation_share is not None else "")
    details = (f"{stable}round-off predicts a relative error of only {pred:.1g}, yet at "
               f"{e.worst_label} autograd gives {e.worst_autograd:.6g} and the finite difference "
               f"{e.worst_numeric:.6g} (relative error {e.worst_rel_error:.2g}, "
               f"{e.failed} of {e.checked} checked values fail).")
    details = details[0].upper() + details[1:]
    fixes = ("Check the backward formula for that element (a custom autograd.Function, "
             "an in-place op, a detach).",
             "The Taylor test confirms it without any step or tolerance: slope 1 means wrong.")
    return _make(e, pred, "gradient", "error",
                 f"The gradient looks wrong at {e.worst_label}.", details, fixes)
