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

The page asks first and reveals after: :func:`quiz_reveal` builds the verdict (right or
not, and the sentence) from the answer, so the page shows nothing of it until then.

>>> quiz_reveal("central", "float32", "cbrt").right
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import get_scheme

__all__ = ["GUESSES", "HABIT_STEP", "Reveal", "quiz_scheme", "expected_guess", "guess_step", "guess_label",
           "quiz_reveal"]

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


@dataclass(frozen=True)
class Reveal:
    """What the page shows once the student has answered: a verdict and one sentence."""

    right: bool
    text: str


def quiz_reveal(scheme: str, dtype: str, guess: str, predicted: str | None = None,
                observed: str | None = None) -> Reveal:
    """The verdict on ``guess`` for ``scheme`` in ``dtype``; ``predicted``/``observed`` steps add the sweep's view.

    >>> print(quiz_reveal("forward", "float64", "habit", predicted="1.5e-08", observed="1.0e-08").text)
    Not quite. The theory says h ≈ √ε (ε = 2.22e-16 in float64, so about 1.5e-08); for this function it predicts h* = 1.5e-08, and the sweep's best step was 1.0e-08.
    """
    answer = expected_guess(scheme)
    right = guess == answer
    text = (f"{'Right' if right else 'Not quite'}. The theory says {guess_label(answer)} "
            f"(ε = {facts(dtype).eps:.2e} in {dtype}, so about {guess_step(answer, dtype):.1e})")
    if predicted is not None and observed is not None:
        text += f"; for this function it predicts h* = {predicted}, and the sweep's best step was {observed}"
    return Reveal(right, text + ".")
