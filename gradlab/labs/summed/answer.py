"""The Summed-loss page's answer: one plain sentence tying the loss's grid to the grad check.

Built from the lab's fields (the exact loss, its ulp, the quantum ``ulp(L)/h`` of a
forward difference, the size of a gradient element), never from prose. The level
says whether the check can see a gradient element at that step: ``warning`` when
one step of the difference is at least half a gradient element (the check is
round-off), ``info`` when it is coarser than a hundredth of one, ``success`` when
finer.

>>> from gradlab.labs.summed.loss import SummedLossSettings, summed_loss
>>> note = summed_answer(summed_loss(SummedLossSettings(shape=(140, 120))))
>>> note.level
'warning'
>>> print(note.text)  # doctest: +NORMALIZE_WHITESPACE
Summed in float32, L = 25229.58 is held to steps of 0.00195 (one ulp); a forward difference at
h = 0.001 can only move in steps of 1.95 (ulp(L)/h), while each gradient element is about 0.8:
that is the grad check's round-off.
"""

from __future__ import annotations

from gradlab.view import Answer
from gradlab.labs.summed.loss import SummedLoss
from gradlab.numerics.dtypes import facts

__all__ = ["summed_answer", "ROUNDOFF_RATIO", "VISIBLE_RATIO"]

#: quantum / |gradient element| at or above which the finite difference is round-off.
ROUNDOFF_RATIO = 0.5
#: ... and below which a step of the difference is too fine to matter (1 % of an element).
VISIBLE_RATIO = 0.01


def _g(value: float, digits: int = 3) -> str:
    return f"{value:.{digits}g}"


def summed_answer(result: SummedLoss) -> Answer:
    """One sentence: how finely L is held, the quantum of a forward difference, a gradient element.

    A loss beyond the dtype's largest value has no grid at all: that is the sentence then.

    >>> from gradlab.labs.summed.loss import SummedLossSettings, summed_loss
    >>> note = summed_answer(summed_loss(SummedLossSettings(shape=(400, 500), dtype="float16")))
    >>> note.level, note.text.split(":")[0]
    ('warning', "Summed in float16, the exact L = 299199.8 is beyond float16's largest value, 65504")
    >>> summed_answer(summed_loss(SummedLossSettings(shape=(140, 120), dtype="float16"))).text.split(" is held")[0]
    'Summed in float16, L = 25232 (exactly 25229.96)'

    """
    s = result.settings
    if result.overflows:
        lost = ", ".join(r.label for r in result.overflowed_rows) or "no method"
        return Answer("warning", (
            f"Summed in {s.dtype}, the exact L = {_g(result.exact_float, 7)} is beyond {s.dtype}'s largest value, "
            f"{_g(facts(s.dtype).max, 7)}: {lost} return inf (a naive loop stalls far below L instead), "
            "and every finite difference of it is inf or NaN. Pick a wider dtype, or the mean reduction."))
    grad = result.gradient_size
    # L as the loss returns it (torch.sum of the terms in the dtype: on its grid), and the exact L
    shown, exact = _g(result.row("torch.sum").value, 7), _g(result.exact_float, 7)
    head = (f"Summed in {s.dtype}, L = {shown}{f' (exactly {exact})' if exact != shown else ''} is held to steps of "
            f"{_g(result.ulp_loss)} (one ulp); a forward difference at h = {_g(s.h)} can only move in "
            f"steps of {_g(result.quantum)} (ulp(L)/h), while each gradient element is about {_g(grad, 1)}")
    ratio = result.quantum / grad if grad > 0 else float("inf")
    if ratio >= ROUNDOFF_RATIO:
        return Answer("warning", head + ": that is the grad check's round-off.")
    if ratio >= VISIBLE_RATIO:
        return Answer("info", head + f": the difference is off by up to {ratio:.0%} of an element "
                                           "from round-off alone.")
    return Answer("success", head + ": fine enough for the check to see each element.")
