"""The Round-off page's "predict, then look": the question's comparison in float64, which the page
does not draw (it draws float32), so nothing on screen answers it before the visitor does. Its
choices are fixed; its reveal is built from that comparison's numbers, once answered
(:func:`gradlab.labs.roundoff.page_view.quiz_view`).

>>> roundoff_reveal("ulps", same_bits=0.47, max_ulps_apart=3, points=10_000).level
'success'
>>> ROUNDOFF_QUIZ.dtype, ROUNDOFF_QUIZ.formula_a, ROUNDOFF_QUIZ.formula_b
('float64', 'autograd', '-1/x**2')
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd

from gradlab.labs.roundoff.comparisons import COMPARISONS
from gradlab.literal_text import markdown_literal
from gradlab.view import Answer

if TYPE_CHECKING:  # only for the annotation: the engine imports nothing from here
    from gradlab.labs.roundoff.engine import RoundoffSummary

__all__ = ["ROUNDOFF_DTYPE", "ROUNDOFF_QUESTION", "ROUNDOFF_GUESSES", "ROUNDOFF_QUIZ", "roundoff_expected",
           "roundoff_reveal", "prediction"]

#: The dtype the prediction moves the question's comparison to (the page draws float32).
ROUNDOFF_DTYPE = "float64"

ROUNDOFF_QUESTION = ("**Predict, then look:** the same comparison in float64, same x. How far apart are "
                     "autograd's gradient of `1/x` and `-1/x**2` now?")

#: Answer key -> how it reads.
ROUNDOFF_GUESSES: dict[str, str] = {
    "equal": "always the same float",
    "ulps": "still an ulp or a few apart, but of float64",
    "same_gap": "still about 5.96e-08 apart",
}

#: The comparison the prediction asks about: the question's, moved to float64.
ROUNDOFF_QUIZ = replace(COMPARISONS["reciprocal"].settings, dtype=ROUNDOFF_DTYPE)


def roundoff_expected(max_ulps_apart: int) -> str:
    """The :data:`ROUNDOFF_GUESSES` key the float64 comparison makes right: "equal" when the two
    formulas never differ, else "ulps" (a gap of float32's size would be billions of float64 ulps).

    >>> roundoff_expected(0), roundoff_expected(3)
    ('equal', 'ulps')
    """
    return "equal" if max_ulps_apart == 0 else "ulps"


def roundoff_reveal(guess: str, same_bits: float, max_ulps_apart: int, points: int) -> Answer:
    """The verdict on ``guess`` (level ``success`` when right, else ``info``), from the float64
    comparison: the share of the ``points`` where both formulas give the same float (``same_bits``)
    and how many ulps apart they are at most.

    >>> print(roundoff_reveal("same_gap", 0.4676, 3, 10_000).text)  # doctest: +NORMALIZE_WHITESPACE
    Not quite: still an ulp or a few apart, but of float64. In float64 they are the same float at 46.8% of
    10,000 points and at most 3 ulp apart: the float32 story again, each formula rounds in its own places and
    stays within a few ulp of the exact value. But float64's grid is 2²⁹ times finer: for a gradient between
    0.5 and 1 one ulp is 2⁻⁵³ ≈ 1.1e-16, not float32's 2⁻²⁴ ≈ 5.96e-08. Neither formula is wrong in either
    dtype; the preset “In float64” draws it.
    """
    answer = roundoff_expected(max_ulps_apart)
    level = "success" if guess == answer else "info"
    verdict = "Right" if guess == answer else f"Not quite: {ROUNDOFF_GUESSES[answer]}"
    if max_ulps_apart == 0:
        return Answer(level, f"{verdict}. In float64 they are the same float at all {points:,} points.")
    return Answer(level, (
        f"{verdict}. In float64 they are the same float at {same_bits:.1%} of {points:,} points and at most "
        f"{max_ulps_apart} ulp apart: the float32 story again, each formula rounds in its own places and "
        "stays within a few ulp of the exact value. But float64's grid is 2²⁹ times finer: for a gradient "
        "between 0.5 and 1 one ulp is 2⁻⁵³ ≈ 1.1e-16, not float32's 2⁻²⁴ ≈ 5.96e-08. Neither formula is "
        "wrong in either dtype; the preset “In float64” draws it."))


def prediction(summary: RoundoffSummary) -> pd.DataFrame:
    """The prediction's reveals from the float64 comparison's ``summary``: one row per choice (its key
    the index), how it reads (``choice``), whether it is ``right`` and the ``reveal`` (Markdown).

    >>> from gradlab.labs.roundoff.engine import compare
    >>> table = prediction(compare(replace(ROUNDOFF_QUIZ, samples=500)).summary)
    >>> list(table.index), list(table["right"])
    (['equal', 'ulps', 'same_gap'], [False, True, False])
    """
    reveals = {key: roundoff_reveal(key, summary.bitwise_equal, summary.max_ulps_a_b, summary.compared)
               for key in ROUNDOFF_GUESSES}
    return pd.DataFrame({"choice": ROUNDOFF_GUESSES,
                         "right": {key: r.level == "success" for key, r in reveals.items()},
                         "reveal": {key: markdown_literal(r.text) for key, r in reveals.items()}})
