"""The Explorer's "predict, then reveal" question: where is a dtype's best step?

The theory (the README's "The mathematics"): a scheme of order p has truncation
~ C h^p and round-off ~ u|f|/h, so the best step scales like u^(1/(p+1)): sqrt(eps) for one-sided
differences, cbrt(eps) for central ones, whatever the habit of ``h = 1e-6`` says.

>>> quiz_scheme(("complex_step", "central", "forward"))
'central'
>>> expected_guess("forward"), expected_guess("central")
('sqrt', 'cbrt')
>>> f"{guess_step('cbrt', 'float32'):.2e}"
'4.92e-03'
"""

from __future__ import annotations

from collections.abc import Sequence

from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import get_scheme

__all__ = ["GUESSES", "HABIT_STEP", "quiz_scheme", "expected_guess", "guess_step", "guess_label"]

#: The step many scripts hard-code (scipy.misc.derivative examples, torch's gradcheck).
HABIT_STEP = 1e-6

#: Answer key -> (how it reads, power of machine epsilon; None for the fixed habit).
GUESSES: dict[str, tuple[str, float | None]] = {
    "habit": ("h = 1e-6, the usual habit", None),
    "eps": ("h ≈ ε, machine epsilon", 1.0),
    "sqrt": ("h ≈ √ε", 1 / 2),
    "cbrt": ("h ≈ ∛ε", 1 / 3),
}
_ORDER_TO_GUESS = {1: "sqrt", 2: "cbrt"}


def quiz_scheme(schemes: Sequence[str]) -> str | None:
    """The first real difference of order 1 or 2 among ``schemes`` (central preferred), or None."""
    usable = [s for s in schemes
              if not get_scheme(s).complex_step and get_scheme(s).order in _ORDER_TO_GUESS]
    preferred = sorted(usable, key=lambda s: -get_scheme(s).order)
    return get_scheme(preferred[0]).name if preferred else None


def expected_guess(scheme: str) -> str:
    """The :data:`GUESSES` key the theory picks for ``scheme``: u^(1/(p+1))."""
    return _ORDER_TO_GUESS[get_scheme(scheme).order]


def guess_step(key: str, dtype: str) -> float:
    """The step a guess stands for in ``dtype``."""
    power = GUESSES[key][1]
    return HABIT_STEP if power is None else facts(dtype).eps ** power


def guess_label(key: str) -> str:
    """How a guess reads in the question."""
    return GUESSES[key][0]
