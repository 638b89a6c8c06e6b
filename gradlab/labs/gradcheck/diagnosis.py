"""The function check's long words under its main chart: why the check's own step passed or failed.

The engine's diagnosis in its box (:func:`diagnosis_box`: the headline, details and what helps, in
Markdown), the four numbers that decide it (:func:`diagnosis_numbers`: the verdict, ρ, machine
epsilon and the step), and the sentences beside them (:func:`diagnosis_texts`): what a hand-written
check prints at this step, what it concludes next to GradLab's verdict, and the engine's message.
Every text is Markdown with its literal parts escaped.

>>> from gradlab.check import CheckSettings, run_check
>>> s = run_check(CheckSettings(shape=(4, 5), dtype="float64", mode="full"), taylor=False).summary
>>> [n.label for n in diagnosis_numbers(s)]
['verdict (20 pass)', 'ρ = h·|dL/dxᵢ| / |L|', 'machine eps (float64)', 'step h (central)']
>>> diagnosis_texts(s, None)["step verdicts"]
''
"""

from __future__ import annotations

from gradlab.check import NUMERIC_DIFFERS, STATES
from gradlab.labs.gradcheck.answer import hand_written_words
from gradlab.labs.gradcheck.tables import STATES_HELP
from gradlab.literal_text import markdown_literal
from gradlab.teaching.glossary import term
from gradlab.view import Answer, Number

__all__ = ["diagnosis_box", "diagnosis_numbers", "diagnosis_texts"]


def diagnosis_box(summary) -> Answer:
    """The engine's diagnosis of a CheckSummary at its level: its headline in bold, its details and
    what helps (Markdown, not the plain text of a page's answer)."""
    d = summary.diagnosis
    fixes = "".join(f"\n- {markdown_literal(f)}" for f in d.fixes)
    return Answer(d.level, f"**{markdown_literal(d.headline)}**\n\n{markdown_literal(d.details)}"
                           + (f"\n\n**What helps:**{fixes}" if fixes else ""))


def diagnosis_numbers(summary) -> tuple[Number, ...]:
    """The verdict with its counts, ρ, the differences' machine epsilon and the step with its tolerances."""
    s = summary
    counts = ", ".join(f"{n} {STATES[k].label}" for k, n in s.counts if n)
    return (Number(f"verdict ({counts})", STATES[s.verdict].label.upper(), STATES_HELP),
            Number("ρ = h·|dL/dxᵢ| / |L|", f"{s.relative_perturbation:.2e}",
                   "relative_perturbation (median over the checked values). " + term("relative_perturbation")),
            Number(f"machine eps ({s.numeric_dtype})", f"{s.machine_eps:.2e}", term("machine epsilon")),
            Number(f"step h ({s.scheme})", f"{s.step:.3g}",
                   f"Tolerances: rtol {s.rtol:g}, atol {s.atol:g} (the {s.dtype} defaults). " + term("atol/rtol")))


def diagnosis_texts(summary, columns) -> dict[str, str]:
    """The sentences beside the numbers, each "" where it has nothing to say:

    - ``hand-written``: what a hand-written check prints at this step (the question's own
      arithmetic), value by value, and ``numeric differs``: why GradLab's own differences differ;
    - ``step verdicts``: a hand-written check's verdict next to GradLab's, where they differ;
    - ``message``: the engine's message, unless it is the diagnosis's headline on a pass.
    """
    s = summary
    printed = hand_written_words(s, columns)
    texts = {"hand-written": markdown_literal(printed) if printed else "",
             "numeric differs": markdown_literal("GradLab's own finite differences (column numeric) are computed "
                                                 "differently on purpose: " + NUMERIC_DIFFERS) if printed else "",
             "step verdicts": "",
             "message": markdown_literal(s.message) if not s.passed or s.message != s.diagnosis.headline else ""}
    if s.fixed_step_verdict != s.verdict:
        texts["step verdicts"] = (
            f"**A hand-written check** (this step h = {s.step:.3g}, a fixed tolerance, no error bound) says "
            f"**{s.fixed_step_verdict.upper()}**: {s.fixed_step_failed} of {s.checked} values are over the "
            f"tolerance. **GradLab says {STATES[s.verdict].label.upper()}**: every value was re-estimated at "
            "steps (and in a dtype) where the finite difference's own error is below the tolerance"
            + (" and agrees with autograd: the gradient is right; the step could not show it." if s.passed
               else "."))
    return texts
