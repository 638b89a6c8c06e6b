"""The four states of a checked value, one row each, and the words of a check's verdict.

A value is **pass** when autograd and the finite difference agree within the
tolerance; **fail** when they disagree by more than the tolerance *and* the
finite difference's error bound (the finite difference cannot explain it);
**inconclusive** when the disagreement is within the bound and the bound
exceeds the tolerance (the finite difference is too inexact to decide); **not
differentiable** when the left and right one-sided differences disagree beyond
their bounds (a kink: relu or abs at 0, max with ties, round). The overall
verdict is fail if any value fails, else inconclusive or not differentiable if
any value is, else pass (:func:`overall`).

Each state is a row: label, colour, CLI marker, exit status, meaning. The colours come
from :data:`gradlab.figures.style.PALETTE`, each 3:1 on the light (#ffffff) and the dark
(#0e1117) background.

A verdict is worded by :func:`verdict_words`: a headline, a message naming the value, and
a hint, one function per verdict. A fail names the element, both values, the difference,
the tolerance and the finite difference's error bound (as torch's gradcheck does, with
the bound added); a kink names both one-sided slopes and the one autograd chose.
:func:`evidence_notes` and :func:`spread_note` say what the verdict rests on.

>>> STATES["fail"].marker, STATES["not_differentiable"].label
('FAIL', 'not differentiable')
>>> overall(["pass", "inconclusive", "pass"]), overall(["not_differentiable", "fail"])
('inconclusive', 'fail')
>>> print(spread_note(2.5e-9))  # doctest: +NORMALIZE_WHITESPACE
Two backward passes differ by up to 2.5e-09 (a nondeterministic backward):
the absolute tolerance was widened by that much.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from gradlab.check.verdicts.element import Element

if TYPE_CHECKING:  # only for the annotations
    from gradlab.check.verdicts.diagnosis import Diagnosis
    from gradlab.check.running.problem import NumericProblem

__all__ = ["State", "STATES", "STATE_NAMES", "overall", "EXIT_CODES", "verdict_words", "spread_note",
           "evidence_notes", "rounding_note"]


@dataclass(frozen=True)
class State:
    """One state of a checked value (and of a whole check)."""

    name: str
    label: str
    colour: str  # 3:1 on #ffffff and #0e1117
    marker: str  # the CLI's column value
    exit_code: int  # ``python -m gradlab check``'s status when this is the verdict
    meaning: str


_ROWS = (
    State("pass", "pass", "#2a9d5c", "ok", 0,
          "autograd and the finite difference agree within the tolerance"),
    State("fail", "fail", "#d1495b", "FAIL", 1,
          "they disagree by more than the tolerance and the finite difference's error bound: "
          "the finite difference cannot explain it, the gradient is wrong"),
    State("inconclusive", "inconclusive", "#d47500", "?", 3,
          "the finite difference's error bound exceeds the tolerance, even at the best step "
          "found: it cannot decide"),
    State("not_differentiable", "not differentiable", "#8e44ad", "kink", 4,
          "the left and right one-sided differences disagree beyond their bounds: the function "
          "has a kink here, and autograd picked one of the slopes (or a value between)"),
)
STATES: Mapping[str, State] = MappingProxyType({s.name: s for s in _ROWS})
STATE_NAMES: tuple[str, ...] = tuple(STATES)
#: Exit status of ``python -m gradlab check`` by verdict (2 is bad usage).
EXIT_CODES: Mapping[str, int] = MappingProxyType({s.name: s.exit_code for s in _ROWS})


def overall(states: Iterable[str]) -> str:
    """The verdict of a check from its values' states: fail > inconclusive > not differentiable > pass."""
    present = set(states)
    for name in ("fail", "inconclusive", "not_differentiable"):
        if name in present:
            return name
    return "pass"


_SIDES = {"left": "the left slope", "right": "the right slope",
          "between": "a value between the two (a subgradient)", "outside": "neither slope"}


_SOURCES = {"measured noise": "from fn's rounding noise, measured along this perturbation",
            "float64 witness": "taken in float64",
            "model": "round-off modelled as u·|L|, no larger noise measured",
            "not re-estimated": "at the check's step only: the check had already failed"}


def evidence_notes(table, dtype: str, rounding, twin_given: bool) -> tuple[str, ...]:
    """What the verdict rests on, one sentence each: how many bounds came from measured noise
    or the float64 witness, and how autograd's own rounding was allowed for (``rounding``:
    gradlab.check.running.float64_witness.AutogradRounding, None in float64)."""
    notes = []
    if "bound_source" in table:
        source = table["bound_source"]
        tally = Counter(source.tolist())  # one pass over the rows
        noisy, witness = tally["measured noise"], tally["float64 witness"]
        if noisy:
            notes.append(f"{noisy} of the {len(source)} error bounds come from fn's rounding noise, measured "
                         "along the perturbation (Moré and Wild's difference table), larger than u·|L|.")
        if witness:
            notes.append(f"{witness} values were re-estimated in float64 "
                         f"({'its float64 twin, given as numeric_fn' if twin_given else 'its float64 twin'}).")
        if tally["not re-estimated"]:
            notes.append(f"{tally['not re-estimated']} more directions beyond their tolerance at the check's step "
                         "were not re-estimated, as the check had already failed: they are inconclusive.")
    if dtype != "float64" and rounding is not None:
        notes.append(rounding_note(dtype, rounding))
    return tuple(notes)


def rounding_note(dtype: str, rounding) -> str:
    """How autograd's own rounding in ``dtype`` was allowed for, one sentence or two."""
    from gradlab.check.running.float64_witness import ROUNDING_RUNS, ROUNDING_SAFETY

    if rounding.measured == "unneeded":
        return f"Autograd's own rounding in {dtype} was not needed: every value agreed within the tolerance."
    distance, bound, beyond = rounding.largest()
    if rounding.measured == "no":
        if rounding.twin:
            return (f"Autograd's own rounding in {dtype} was measured against float64 autograd (up to "
                    f"{distance:.3g}) and allowed for: fn's backward could not be run again with its rounding "
                    f"perturbed to bound it, so a backward wrong only in {dtype} would pass too.")
        return (f"Autograd's own rounding in {dtype} could not be measured (fn does not run in float64, and its "
                "backward not with its rounding perturbed): it was taken as 8 ulps.")
    how = f"in float64, by {dtype}'s unit round-off" if rounding.twin else f"in {dtype}, by an ulp"
    runs = (f"fn's backward run {ROUNDING_RUNS} more times with every operation's rounding perturbed ({how}) "
            f"bounds it at {ROUNDING_SAFETY:g} times their spread, up to {bound:.3g}")
    if not rounding.twin:
        return (f"Autograd's own rounding in {dtype} was measured and allowed for (fn does not run in "
                f"float64): {runs}.")
    note = (f"Autograd's own rounding in {dtype} was measured: {runs}; autograd's distance from float64 "
            f"autograd (up to {distance:.3g}) was allowed for up to that bound only.")
    if beyond:
        note += (f" At {beyond} elements autograd in {dtype} is further from float64 autograd than rounding "
                 f"can explain: a backward wrong only in {dtype} (a fast path, a cast to a lower precision) "
                 "looks so.")
    return note


def spread_note(spread: float) -> str:
    """The note a check carries when two backward passes disagreed."""
    return (f"Two backward passes differ by up to {spread:.3g} (a nondeterministic backward): "
            "the absolute tolerance was widened by that much.")


def _also(counts: dict[str, int], but: str) -> str:
    others = [f"{counts[k]} {k.replace('_', ' ')}" for k in ("inconclusive", "not_differentiable")
              if k != but and counts.get(k)]
    return f" ({', '.join(others)})" if others else ""


def verdict_words(p: NumericProblem, verdict: str, counts: dict[str, int], diagnosis: Diagnosis, tol,
                  *, worst: Element | None, located: Element | None, refined: int = 0
                  ) -> tuple[str, str, str]:
    """(headline, message, hint) of ``verdict``; ``worst``: the value that decides it."""
    checked = sum(counts.values())
    where = f"{p.scheme.name} differences, h = {p.step:.3g}"
    if verdict == "pass" or worst is None:
        own = f"{diagnosis.headline[0].lower()}{diagnosis.headline[1:]}"
        # re-estimated values that agreed at the check's own step too were confirmed, not rescued
        again = ("" if not refined else
                 f" {refined} of them were also re-estimated at steps chosen from their own error model "
                 "(or in float64) and agree there as at the check's own step." if diagnosis.kind == "ok" else
                 f" {refined} of them were re-estimated at steps chosen from their own error "
                 f"model (or in float64) before they agreed; at the check's own step: {own}")
        return (f"Gradient check passed: {checked} of {checked} values within the tolerance.",
                f"{'Autograd and the finite differences agree' if refined else diagnosis.headline}"
                f" ({checked} values, {where}).{again}", "")
    n = counts[verdict]
    # a failing direction narrowed to an element that fails on its own: that element's values lead
    lead = located if verdict == "fail" and located is not None and located.state == "fail" else worst
    how = f" ({_SOURCES.get(lead.bound_source, lead.bound_source)})" if lead.bound_source else ""
    values = (f"autograd {lead.autograd:.6g}, finite difference {lead.numeric:.6g}{_at(p, lead)}; "
              f"difference {lead.abs_error:.3g}, tolerance {lead.tolerance:.3g} "
              f"({_tolerance_words(lead, tol)}), error bound of the finite "
              f"difference {lead.error_bound:.3g}{how}")
    if verdict == "fail":
        return _fail(worst, located, n, checked, values, counts, diagnosis, lead is located)
    if verdict == "not_differentiable":
        return _kink(worst, n, checked, counts)
    fix = f" {diagnosis.fixes[0]}" if diagnosis.fixes else ""
    return (f"Gradient check inconclusive at {worst.label} ({n} of {checked} values).",
            f"Gradient check inconclusive at {worst.label}: {values}. The difference is within what "
            f"the finite difference's error can explain, even at the best step found: this is not "
            f"evidence that the gradient is wrong.{_decider(p, worst)}{_also(counts, verdict)}",
            f"{diagnosis.headline}{fix}".strip())


def _tolerance_words(worst: Element, tol) -> str:
    """How the value's tolerance was made: atol + rtol·|numeric|, or, for a direction whose
    terms cancel, its elements' tolerances (gradlab.check.running.blocks.direction_tolerance)."""
    plain = tol.atol + tol.rtol * abs(worst.numeric)
    if math.isfinite(worst.tolerance) and worst.tolerance > plain * (1 + 1e-9):
        return "the root-sum-square of its elements' tolerances along the direction"
    return f"atol {tol.atol:g} + rtol {tol.rtol:g}·|numeric|"


def _decider(p: NumericProblem, worst: Element) -> str:
    """What would decide an inconclusive value whose estimate is finite: a smaller bound."""
    if not (math.isfinite(worst.numeric) and math.isfinite(worst.error_bound)):
        return ""
    return (" What would decide it is a smaller error bound: finite differences in float64 "
            "(numeric_float64=True, or fn in float64), a larger step than h = "
            f"{p.step:.3g} where truncation allows, or fewer summed terms (reduction 'none', "
            "a smaller output).")


def _at(p: NumericProblem, value: Element) -> str:
    """Where a value's finite difference was taken, when known: " at h = 1e-05 (in float64)"."""
    if not math.isfinite(value.step):
        return ""
    own = ("", str(p.dtype).removeprefix("torch."))
    dtype = f" in {value.numeric_dtype}" if value.numeric_dtype not in own else ""
    return f" at h = {value.step:.3g}{dtype}"


#: How a failing direction was narrowed to one element (Element.found_by).
_NARROWED = {"block": "one of the default mode's random-sign directions over a block of elements, each of "
                      "which was then checked on its own",
             "bisection": "a random direction, narrowed to one element by bisection, which was then checked "
                          "on its own",
             "dense": "one of two dense random directions over every element, whose finite difference differed "
                      "from autograd by more than its measured error bound, narrowed by halving to elements each "
                      "then checked on its own"}


def _fail(worst, located, n, checked, values, counts, diagnosis, element_leads=False):
    named = located if located is not None else worst
    noun = "directions" if located is not None else "values"
    total = f"{n} of {checked} checked {noun} fail{_also(counts, 'fail')}."
    cannot = "the difference exceeds the tolerance plus the bound, so the finite difference cannot explain it."
    if element_leads:  # the element's own values first; the direction only as how it was found
        by = _NARROWED.get(located.found_by, "")
        message = (f"Gradient check failed at {named.where}: {values}; {cannot} It was found along "
                   f"{worst.where} (autograd {worst.autograd:.6g}, finite difference {worst.numeric:.6g} "
                   f"along it; difference {worst.abs_error:.3g}, tolerance {worst.tolerance:.3g})"
                   f"{f', {by}' if by else ''}. {total}")
        return _fail_words(named, n, checked, message, diagnosis)
    along = f", found along {worst.where}" if located is not None else ""
    message = f"Gradient check failed at {named.where}{along}: {values}; {cannot} {total}"
    if located is not None:
        own = f" (checked on its own: {located.state.replace('_', ' ')})" if located.state else ""
        message += (f" Narrowed to one element, that direction points at {located.where}: autograd "
                    f"{located.autograd:.6g}, finite difference {located.numeric:.6g}{own}.")
    return _fail_words(named, n, checked, message, diagnosis)


def _fail_words(named, n, checked, message, diagnosis):
    if diagnosis.kind in ("gradient", "nonfinite"):
        hint = f"{diagnosis.headline} {diagnosis.fixes[0] if diagnosis.fixes else ''}".rstrip()
    else:
        hint = (f"The gradient looks wrong at {named.where}: check the backward formula for that "
                "element (a custom autograd.Function, an in-place op, a detach).")
    return f"Gradient check failed at {named.where} ({n} of {checked} values).", message, hint


def _kink(worst, n, checked, counts):
    chose = _SIDES.get(worst.autograd_side, worst.autograd_side)
    message = (f"Not differentiable at {worst.label}: the left slope is {worst.left_slope:.6g} and "
               f"the right slope {worst.right_slope:.6g}; autograd gives {worst.autograd:.6g}, "
               f"{chose}. {n} of {checked} values sit on such a kink{_also(counts, 'not_differentiable')}.")
    hint = ("Finite differences cannot check a gradient at a kink (relu or abs at 0, max with ties, "
            "round): check at points away from it, or accept autograd's convention there.")
    return f"Not differentiable at {worst.label} ({n} of {checked} values).", message, hint
