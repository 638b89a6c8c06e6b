"""The Grad check page's answer: one plain sentence, with a display level, from a check's summary.

Built from the summary's fields (verdict, counts, the step's own verdict, the
diagnosis's kind), never from its prose, in words a second-year student
knows. The question it answers is the page's: *is the gradient wrong?* When
GradLab's verdict and a hand-written check at the same step disagree (the
140x120 float32 question), the sentence says both and why they differ.

>>> from types import SimpleNamespace as S
>>> s = S(verdict="pass", checked=5, fixed_step_failed=5, fixed_step_verdict="fail", step=1e-3,
...       worst=None, counts=(("pass", 5),), diagnosis=S(kind="roundoff"))
>>> answer = check_answer(s)
>>> answer.level
'success'
>>> print(answer.text)  # doctest: +NORMALIZE_WHITESPACE
The gradient is right: all 5 checked values agree with autograd once GradLab re-estimates
them at steps that can show it. A hand-written check that stops at this step, eps = 0.001,
says FAIL because round-off swamps that step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Answer", "check_answer"]

AnswerLevel = Literal["success", "warning", "error"]

#: Why a fixed-step check went wrong, by the diagnosis's kind (gradlab.check.diagnosis).
_STEP_REASONS = {
    "roundoff": "round-off swamps that step",
    "marginal": "round-off at that step is close to the tolerance",
    "truncation": "that step is too large (truncation error)",
    "nonfinite": "the function is not finite there",
}


@dataclass(frozen=True)
class Answer:
    """The page's one sentence and how to show it (success, warning or error)."""

    level: AnswerLevel
    text: str


def _count(summary, state: str) -> int:
    return dict(summary.counts).get(state, 0)


def _where(summary) -> str:
    worst = summary.worst
    return f" at {worst.label}" if worst is not None else ""


def check_answer(summary) -> Answer:
    """The answer to "is the gradient wrong?" for a check's ``summary`` (a CheckSummary)."""
    n, step = summary.checked, f"eps = {summary.step:.3g}"
    if summary.verdict == "fail":
        k = _count(summary, "fail")
        return Answer("error", f"The gradient looks wrong{_where(summary)}: {k} of {n} checked values "
                               "disagree with autograd by more than the finite difference's own error "
                               "can explain.")
    if summary.verdict == "inconclusive":
        k = _count(summary, "inconclusive")
        return Answer("warning", f"Cannot tell{_where(summary)}: for {k} of {n} values the finite "
                                 "difference is too inexact at every step tried. That is not evidence "
                                 "that the gradient is wrong.")
    if summary.verdict == "not_differentiable":
        k = _count(summary, "not_differentiable")
        return Answer("warning", f"Not differentiable{_where(summary)}: {k} of {n} values sit on a "
                                 "kink, where the left and right slopes differ, so a finite "
                                 "difference cannot check autograd there.")
    if summary.diagnosis.kind == "vacuous":
        return Answer("warning", "It passes, but proves little: the gradient is below the absolute "
                                 "tolerance atol, so any gradient near 0 would pass as well.")
    if summary.fixed_step_verdict == "fail":
        reason = _STEP_REASONS.get(summary.diagnosis.kind, "that step cannot show it")
        return Answer("success", f"The gradient is right: all {n} checked values agree with autograd "
                                 f"once GradLab re-estimates them at steps that can show it. A "
                                 f"hand-written check that stops at this step, {step}, says FAIL "
                                 f"because {reason}.")
    return Answer("success", f"The gradient is right: all {n} checked values agree with autograd "
                             f"within the tolerance at {step}.")
