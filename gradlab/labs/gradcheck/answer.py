"""The Grad check page's answers: one plain sentence, with a display level, from a check's result.

Built from the summary's fields (verdict, counts, the step's own verdict, the
diagnosis's kind), never from its prose, in words a second-year student
knows. The question it answers is the page's: *is the gradient wrong?* When
GradLab's verdict and a hand-written check at the same step disagree (the
140x120 float32 question), the sentence says both and why they differ. The layer view's
question is *which layer's backward is wrong?*: :func:`layer_answer` names the module, and
:func:`whole_model_answer` says what the whole model's one check says beside it.

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

import math

import numpy as np

from gradlab.check import STATES
from gradlab.numerics.schemes import get_scheme
from gradlab.view import Answer

__all__ = ["check_answer", "hand_written_words", "printed", "QUESTION", "LAYER_QUESTION", "ratio_range",
           "agreeing_digits", "layer_answer", "whole_model_answer"]

#: The page's question, as the question's author saw it: the float32 check's ratios were 0–4,
#: the float64 one's 0.9993–1.0004, which they called a match (at rtol 1e-5 it is not a pass).
QUESTION = "float32 fails, float64 matches to 3–4 digits: is the gradient wrong?"
#: The layer view's question (the Grad check page checking a model layer by layer).
LAYER_QUESTION = "my model's gradient check fails: which layer's backward is wrong?"

#: A forward, backward or central difference's leading truncation term, as the answer names it.
_TRUNCATION = {"forward": "h·f″/2", "backward": "h·f″/2", "central": "h²·f‴/6"}


#: Why a fixed-step check went wrong, by the diagnosis's kind (gradlab.check.verdicts.diagnosis).
_STEP_REASONS = {
    "roundoff": "round-off swamps that step",
    "marginal": "round-off at that step is close to the tolerance",
    "truncation": "that step is too large (truncation error)",
    "nonfinite": "the function is not finite there",
}


#: What each mode compares, singular and plural: elements one by one, or random directions
#: (the default mode's blocks together cover every element; a reader told "all 64 values"
#: of a 16,800-element check would take it for 64 of the elements).
_COMPARED = {"full": ("element", "elements"), "sampled": ("sampled element", "sampled elements"),
             "blocks": ("random direction", "random directions"),
             "dense": ("dense random direction", "dense random directions"),
             "directional": ("random direction", "random directions")}


def _what(summary, n: int | None = None) -> str:
    """``n`` (default: every checked value) counted in the mode's own noun: "4 random directions".

    >>> from types import SimpleNamespace as S
    >>> _what(S(mode="blocks", checked=4)), _what(S(mode="full", checked=6), 1), _what(S(checked=2))
    ('4 random directions', '1 element', '2 checked values')
    """
    n = summary.checked if n is None else n
    one, many = _COMPARED.get(getattr(summary, "mode", ""), ("checked value", "checked values"))
    return f"{n} {one if n == 1 else many}"


def _all_agree(summary) -> str:
    """The pass sentence's subject and verb: "all 6 elements agree", "the one element agrees";
    the default mode's directions say they cover every element."""
    n = summary.checked
    if n == 1:
        subject, verb = "the one " + _what(summary, 1).split(" ", 1)[1], "agrees"
    else:
        subject, verb = "all " + _what(summary), "agree"
    if getattr(summary, "mode", "") == "blocks":
        subject += ", over every element," if n == 1 else ", which together cover every element,"
    return f"{subject} {verb}"


def _count(summary, state: str) -> int:
    return dict(summary.counts).get(state, 0)


def _where(summary) -> str:
    """Where the verdict is decided: a failing direction's element, when checked on its own it fails."""
    located, worst = getattr(summary, "located", None), summary.worst
    if summary.verdict == "fail" and located is not None and located.state == "fail":
        worst = located
    return f" at {worst.label}" if worst is not None else ""


def ratio_range(ratios) -> tuple[float, float] | None:
    """The smallest and largest finite ratio finite difference / autograd, or None.

    >>> ratio_range(np.array([0.9996, 1.0011, np.nan]))
    (0.9996, 1.0011)
    """
    finite = np.asarray(ratios, dtype=float)
    finite = finite[np.isfinite(finite)]
    return (float(finite.min()), float(finite.max())) if finite.size else None


def agreeing_digits(ratios) -> str:
    """How many digits the finite ``ratios`` share with 1: ``-log10 |ratio - 1|`` rounded, from the
    farthest ratio to the closest ("3–4"); "all" when every ratio is exactly 1.

    >>> agreeing_digits([0.99946664, 1.00038628, 0.99956495, 0.9993408])  # the question's float64 run
    '3'
    >>> agreeing_digits([0.9996, 1.0011, 0.99989]), agreeing_digits([1.0])
    ('3–4', 'all')
    """
    r = np.asarray(ratios, dtype=float)
    deviations = np.abs(r[np.isfinite(r)] - 1)
    deviations = deviations[deviations > 0]
    if not deviations.size:
        return "all"
    most, least = round(-math.log10(deviations.max())), round(-math.log10(deviations.min()))
    return str(most) if most == least else f"{most}–{least}"


def _sci(value: float, digits: int = 2) -> str:
    """``2.5e-4``: a small number with ``digits`` significant digits, no padded exponent.

    >>> _sci(0.00025), _sci(8.99e-9, 1), _sci(0.25)
    ('2.5e-4', '9e-9', '0.25')
    """
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        return f"{value:.{digits}g}"
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _truncation_answer(summary, ratios, differences) -> Answer:
    """A pass whose hand-written check FAILs on truncation: what that check printed (its ratios, as
    the question's float64 run did), why the rest is truncation, and GradLab's verdict."""
    lo, hi = ratio_range(ratios)
    shown = (f"{lo:.4f}–{hi:.4f}" if max(abs(lo - 1), abs(hi - 1)) < 0.01 else f"{lo:.3g}–{hi:.3g}")
    name = get_scheme(summary.scheme).label
    term = _TRUNCATION.get(summary.scheme)
    size = np.abs(np.asarray(differences, dtype=float))
    size = size[np.isfinite(size)]
    rest = ""
    if size.size:
        rest = (f", {_sci(size.max())} each," if size.max() <= 1.5 * size.min()
                else f", {_sci(size.min())} to {_sci(size.max())},")
    return Answer("success", f"The gradient is right. The hand-written check's ratios at eps = "
                             f"{summary.step:.3g} (finite difference / autograd) are {shown}, agreeing to "
                             f"{agreeing_digits(ratios)} digits; the rest{rest} is the {name}'s truncation"
                             + (f" {term}" if term else "") + f", not round-off, and over rtol = "
                             f"{summary.rtol:g} it says FAIL. Re-estimated at better steps, "
                             f"{_all_agree(summary)}.")


def check_answer(summary, columns=None) -> Answer:
    """The answer to "is the gradient wrong?" for a check's ``summary`` (a CheckSummary); with the
    check's per-value ``columns`` (``CheckResult.columns``) it quotes the hand-written check's ratios
    where that check FAILs on truncation alone."""
    step = f"eps = {summary.step:.3g}"
    if summary.verdict == "fail":
        k = _count(summary, "fail")
        return Answer("error", f"The gradient looks wrong{_where(summary)}: {k} of {_what(summary)} "
                               "disagree with autograd by more than the finite difference's own error "
                               "can explain.")
    if summary.verdict == "inconclusive" and summary.vacuous:  # a gradient zero by construction: nothing tested
        return Answer("warning", f"{summary.diagnosis.headline} {summary.hint}")
    if summary.verdict == "inconclusive":
        k = _count(summary, "inconclusive")
        return Answer("warning", f"Cannot tell{_where(summary)}: for {k} of {_what(summary)} the finite "
                                 "difference is too inexact at every step tried. That is not evidence "
                                 "that the gradient is wrong.")
    if summary.verdict == "not_differentiable":
        k = _count(summary, "not_differentiable")
        return Answer("warning", f"Not differentiable{_where(summary)}: {k} of {_what(summary)} sit on a "
                                 "kink, where the left and right slopes differ, so a finite "
                                 "difference cannot check autograd there.")
    if getattr(summary, "mode", "") == "dense":  # gradlab.check.running.detector: its own steps, its own error bound
        return Answer("success", "The gradient is right: two dense random directions, each over every element, "
                                 f"show no element {summary.seen_tolerances or 10:.0f} tolerances off (their finite "
                                 "differences' measured error bound is smaller than what one would move them by), "
                                 "and every element they pointed at, if any, passes its own tolerance.")
    if summary.diagnosis.kind == "vacuous":
        return Answer("warning", "It passes, but proves little: the gradient is below the absolute "
                                 "tolerance atol, so any gradient near 0 would pass as well.")
    if summary.fixed_step_verdict == "fail":
        if summary.diagnosis.kind == "truncation" and columns is not None:
            seen = columns["hand_written"] if "hand_written" in columns else columns["numeric"]
            ratios = np.asarray(seen, dtype=float) / np.asarray(columns["autograd"], dtype=float)
            if ratio_range(ratios):
                return _truncation_answer(summary, ratios, seen - columns["autograd"])
        reason = _STEP_REASONS.get(summary.diagnosis.kind, "that step cannot show it")
        return Answer("success", f"The gradient is right: {_all_agree(summary)} with autograd "
                                 f"once GradLab re-estimates them at steps that can show it. A "
                                 f"hand-written check that stops at this step, {step}, says FAIL "
                                 f"because {reason}.")
    return Answer("success", f"The gradient is right: {_all_agree(summary)} with autograd "
                             f"within the tolerance at {step}.")


#: At most this many values are listed in words (the question's check printed 5).
LISTED_VALUES = 8


def printed(value: float, dtype: str) -> str:
    """``value`` as Python prints a number of ``dtype``: the shortest digits that read back as it.

    >>> printed(-1.9531248807907104, "float32"), printed(0.0, "float32"), printed(0.1, "float64")
    ('-1.9531249', '0.0', '0.1')
    """
    kind = {"float32": np.float32, "float16": np.float16}.get(dtype)
    return str(kind(value)) if kind is not None else repr(float(value))


def hand_written_words(summary, columns) -> str | None:
    """What a hand-written check printed at the check's step, value by value beside autograd's, in
    words; None when the check has no such column (gradlab.check.verdicts.hand_written) or too many values.

    >>> from types import SimpleNamespace as S
    >>> s = S(step=1e-3, dtype="float32", reduction="sum", scheme="forward")
    >>> print(hand_written_words(s, {"hand_written": np.array([0.0, 3.9062497615814]),
    ...                              "autograd": np.array([0.62, 2.51])}))  # doctest: +NORMALIZE_WHITESPACE
    A hand-written check at eps = 0.001 (the loss summed by torch in float32, one element moved by eps,
    (L(x + eps) − L(x)) / eps in float32) prints 0.0, 3.9062498 where autograd says 0.62, 2.51.
    """
    if columns is None or "hand_written" not in columns or not 0 < len(columns["hand_written"]) <= LISTED_VALUES:
        return None
    formula = {"forward": "(L(x + eps) − L(x)) / eps", "backward": "(L(x) − L(x − eps)) / eps",
               "central": "(L(x + eps) − L(x − eps)) / (2·eps)"}.get(
        summary.scheme, f"the {get_scheme(summary.scheme).label} formula")
    how = "summed" if summary.reduction == "sum" else "averaged"
    values = ", ".join(printed(v, summary.dtype) for v in columns["hand_written"])
    autograd = ", ".join(f"{v:.3g}" for v in columns["autograd"])
    return (f"A hand-written check at eps = {summary.step:.3g} (the loss {how} by torch in {summary.dtype}, one "
            f"element moved by eps, {formula} in {summary.dtype}) prints {values} where autograd says "
            f"{autograd}.")


def _level(verdict: str) -> str:
    """The box a layer check's verdict is shown in: a wrong gradient an error, an undecided one a warning."""
    return {"pass": "success", "fail": "error"}.get(verdict, "warning")


def layer_answer(result) -> Answer:
    """The layer check's answer (a :class:`gradlab.layers.result.LayersResult`'s), a module named by
    its index in the stack read as one ("Module 3 (...)").

    >>> from types import SimpleNamespace as S
    >>> layer_answer(S(verdict="fail", failing_modules=("3",), answer="3 (WrongSwish): wrong")).text
    'Module 3 (WrongSwish): wrong'
    >>> layer_answer(S(verdict="pass", failing_modules=(), answer="All 4 checks pass.")).level
    'success'
    """
    failing = result.failing_modules
    text = f"Module {result.answer}" if failing and failing[0].isdigit() else result.answer
    return Answer(_level(result.verdict), text)


def whole_model_answer(whole) -> Answer:
    """The whole model's one check over every parameter (a CheckResult): its verdict and headline.

    >>> from types import SimpleNamespace as S
    >>> whole_model_answer(S(verdict="fail", summary=S(headline="0.weight[0, 0] is off.")))
    Answer(level='error', text='FAIL: 0.weight[0, 0] is off.')
    """
    return Answer(_level(whole.verdict), f"{STATES[whole.verdict].label.upper()}: {whole.summary.headline}")
