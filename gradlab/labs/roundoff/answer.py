"""The Round-off page's answer in one plain sentence: is either formula wrong, and by how many digits?

Each basic operation is correctly rounded (off by at most half an ulp), so a formula
of a few operations stays within a few ulp of the exact value: that is rounding, not
a wrong formula. A formula whose worst error is far larger (thousands, millions of
ulp) has lost digits, about log10 of its worst error in ulp, to cancellation or to
an intermediate that rounds away its input. The sentence is built here from the
comparison's numbers, as an :class:`~gradlab.view.Answer` whose level (``success``: nothing
is wrong; ``warning``: a formula loses digits) the page shows it by.

>>> from gradlab.labs.roundoff.engine import RoundoffSettings, compare
>>> said = roundoff_answer(compare(RoundoffSettings("autograd", "-1/x**2", samples=2000)))
>>> said.level, said.text.startswith("Both are within")
('success', True)
>>> said = roundoff_answer(compare(RoundoffSettings("log(1+x)", "log1p(x)", "float32", "log-uniform", 1e-8, 1e-2,
...                                                 samples=500)))
>>> said.level, "log(1+x) is off by up to" in said.text
('warning', True)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gradlab.view import Answer
from gradlab.numerics.dtypes import facts

if TYPE_CHECKING:  # only for the annotation: the engine imports nothing from here
    from gradlab.labs.roundoff.engine import RoundoffResult

__all__ = ["ROUNDING_ULPS", "roundoff_answer", "decimal_digits", "digits_lost", "ulp_bound", "ulps_text"]

#: Worst errors up to this many ulp are rounding: a handful of correctly rounded operations
#: (autograd's 1/x gradient is within 2.5 ulp, -1/x**2 within 1.5) never go further.
ROUNDING_ULPS = 4.0


def decimal_digits(dtype: str) -> int:
    """The significant decimal digits a dtype holds: (stored bits + 1) · log10(2), rounded.

    >>> decimal_digits("float16"), decimal_digits("float32"), decimal_digits("float64")
    (3, 7, 16)
    """
    return round((facts(dtype).mantissa_bits + 1) * math.log10(2))


def digits_lost(worst_ulps: float, dtype: str) -> int:
    """About how many decimal digits an error of ``worst_ulps`` ulp costs: log10 of it, at most all.

    >>> digits_lost(1000.0, "float32"), digits_lost(5e6, "float32"), digits_lost(1e12, "float32")
    (3, 7, 7)
    """
    return max(1, min(decimal_digits(dtype), round(math.log10(max(worst_ulps, 1.0)))))


def ulp_bound(worst_ulps: float) -> float:
    """The worst error rounded *up* to a tenth of an ulp, so "within" it stays true.

    >>> ulp_bound(1.8412), ulp_bound(0.5), ulp_bound(0.0)
    (1.9, 0.5, 0.0)
    """
    return math.ceil(round(worst_ulps * 10, 9)) / 10


def ulps_text(worst_ulps: float) -> str:
    """An error in ulp as a person reads it: tenths when small, whole numbers, then powers of ten.

    >>> ulps_text(1.8412), ulps_text(4096.3), ulps_text(8388608.0)
    ('1.9 ulp', '4,097 ulp', '8.4e+06 ulp')
    """
    if worst_ulps <= 10:
        return f"{ulp_bound(worst_ulps):g} ulp"
    if worst_ulps < 1e6:
        return f"{math.ceil(worst_ulps):,} ulp"
    return f"{worst_ulps:.1e} ulp"


def _loses(label: str, worst: float, dtype: str) -> str:
    lost, held = digits_lost(worst, dtype), decimal_digits(dtype)
    how_many = f"all {held}" if lost == held else f"about {lost} of the {held}"
    return f"{label} is off by up to {ulps_text(worst)}: at worst it loses {how_many} significant digits {dtype} holds"


def roundoff_answer(result: RoundoffResult) -> Answer:
    """The page's one sentence: both right to within rounding, the same computation, or who loses digits."""
    s, dtype = result.summary, result.dtype
    a, b = result.label_a, result.label_b
    if s.compared == 0:
        return Answer("warning", "No point could be compared: every value overflowed, underflowed or was undefined.")
    points = f"all {s.compared:,} points" if s.compared > 1 else "the one point"
    if s.bitwise_equal == 1.0:
        return Answer("success", f"{a} and {b} give the same bits at {points}: in {dtype} they are the same computation.")
    worst_a, worst_b = s.max_ulps_a_exact, s.max_ulps_b_exact
    bad_a, bad_b = worst_a > ROUNDING_ULPS, worst_b > ROUNDING_ULPS
    if not (bad_a or bad_b):
        return Answer("success", f"Both are within {ulps_text(max(worst_a, worst_b))} of the exact value at {points}: "
                         "neither is wrong.")
    if bad_a and bad_b:
        return Answer("warning", f"Both lose digits in {dtype}: {_loses(a, worst_a, dtype)}; "
                            f"{_loses(b, worst_b, dtype)}.")
    (bad, worst_bad), (good, worst_good) = ((a, worst_a), (b, worst_b)) if bad_a else ((b, worst_b), (a, worst_a))
    return Answer("warning", f"{_loses(bad, worst_bad, dtype)}; {good} stays within {ulps_text(worst_good)} "
                        "of the exact value.")
