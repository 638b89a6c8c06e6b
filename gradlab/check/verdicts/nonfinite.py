"""fn not finite at the given input: which output values, said plainly, with the fix.

A finite difference subtracts fn's values near x from its value at x; when fn already
returns NaN or inf at x, every difference through those values is NaN, and the check's
words would be about the first direction it could not decide ("inconclusive at direction
0: ... finite difference nan"). :func:`nonfinite_at_input` names the output values that are
not finite at x (and the input's own, when x holds NaN or inf), and
:func:`with_nonfinite_words` puts that sentence, and the fix, in place of the verdict's
words. The verdict itself stays what the states make it (inconclusive: no evidence either
way), and so does the diagnosis (kind ``nonfinite``).

>>> print(nonfinite_at_input(torch.tensor([float("nan"), 1.0, float("inf")]), None,
...                          FlatInputs.of([torch.tensor([-1.0, 2.0, 0.0])])))
fn returns NaN or inf at the given input: out[0] = nan and out[2] = inf (2 of 3 output values)
"""

from __future__ import annotations

import dataclasses

import torch

from gradlab.check.inputs.outputs import OutputLayout, without_parts
from gradlab.check.running.batching import FlatInputs
from gradlab.check.verdicts.results import CheckSummary

__all__ = ["nonfinite_at_input", "with_nonfinite_words"]

#: Output (and input) values named in the sentence; the rest are counted.
NAMED = 4


def nonfinite_at_input(out, left_out, flat: FlatInputs, y: torch.Tensor | None = None) -> str | None:
    """The sentence naming fn's checked output values that are NaN or inf at the given input
    (``out``: fn's output there; ``left_out``: the parts the check leaves out; ``y``: those
    values as one vector, if the caller has them: all finite, the usual case, is one op), or
    None when all are finite."""
    if y is not None and bool(torch.isfinite(y).all()):
        return None
    if left_out:
        out = without_parts(out, left_out)
    try:
        layout = OutputLayout.of(out)
        y = layout.flatten(out).detach()
    except Exception:  # noqa: BLE001 - the check reports an unusable output in its own words
        return None
    bad = (~torch.isfinite(y)).nonzero().reshape(-1)
    if not bad.numel():
        return None
    named = [f"{layout.label(int(i))} = {float(y[i])}" for i in bad[:NAMED]]
    sentence = (f"fn returns NaN or inf at the given input: {_listed(named, int(bad.numel()))} "
                f"({int(bad.numel())} of {y.numel()} output values)")
    inputs = (~torch.isfinite(flat.values)).nonzero().reshape(-1)
    if inputs.numel():
        where = [_input_label(flat, int(i)) for i in inputs[:NAMED]]
        sentence += f", where the input itself holds NaN or inf at {_listed(where, int(inputs.numel()))}"
    return sentence


def with_nonfinite_words(summary: CheckSummary, sentence: str | None) -> CheckSummary:
    """``summary`` with its words saying ``sentence`` (fn not finite at x) and the fix, when
    fn is not finite there and the check could not decide (inconclusive); else ``summary`` itself."""
    if sentence is None or summary.verdict != "inconclusive":
        return summary
    return dataclasses.replace(
        summary,
        headline=f"{sentence.split(':')[0]}: nothing to compare there.",
        message=(f"{sentence}. A finite difference needs fn finite at x and around it, so the values "
                 "computed through those outputs are NaN: this check is no evidence about the gradient "
                 "either way (verdict inconclusive)."),
        hint=("fn is not finite at that input: check at one inside its domain (log and sqrt of positive "
              "numbers, no division by zero, no overflow), or make fn finite there (clamp before a log, "
              "torch.nan_to_num)."))


def _listed(items: list[str], total: int) -> str:
    more = total - len(items)
    items = items + ([f"{more} more"] if more > 0 else [])
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _input_label(flat: FlatInputs, i: int) -> str:
    k, index = flat.locate(i)
    name = flat.names[k] if k < len(flat.names) else f"x{k}"
    if not index:
        return name
    where = f"[{', '.join(map(str, index))}]"
    return f"{name}{where}" if name.isidentifier() else f"{where} of {name}"
