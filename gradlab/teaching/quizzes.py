"""The "predict, then reveal" questions of the Explorer (where is a dtype's best step?), the
Round-off lab (what does autograd compute for 1/x?) and the Network lab (in float64, in steps of
what size can the difference move?), each revealed from the numbers of the view asked about.

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

The Round-off lab asks about a comparison its page does not draw (the question's in
float64; the page draws float32), so nothing on screen answers it before the visitor
does; :func:`roundoff_reveal` builds the verdict from that comparison's numbers.

>>> roundoff_reveal("ulps", same_bits=0.47, max_ulps_apart=3, points=10_000).right
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import math

from gradlab.numerics.dtypes import DTYPE_NAMES, facts
from gradlab.numerics.schemes import get_scheme
from gradlab.numerics.ulp import ulp

__all__ = ["GUESSES", "HABIT_STEP", "Reveal", "QUIZ_DTYPES", "quiz_dtype", "quiz_scheme", "expected_guess",
           "guess_step", "guess_label", "quiz_reveal", "ROUNDOFF_DTYPE", "ROUNDOFF_QUESTION", "ROUNDOFF_GUESSES",
           "roundoff_expected", "roundoff_reveal", "NETWORK_QUESTION", "network_guesses", "network_reveal"]

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


#: The dtypes the Explorer's prediction asks about, in order: the first not on the chart. The
#: native rows of the dtype table, in its order (the emulated 8-bit rows are not asked about).
QUIZ_DTYPES: tuple[str, ...] = DTYPE_NAMES


def quiz_dtype(shown) -> str | None:
    """The dtype the prediction asks about: one the chart does not show yet, so its answer
    is not on screen before the visitor commits (None when every one is shown).

    >>> quiz_dtype(("float32", "float64")), quiz_dtype(("float16", "float32")), quiz_dtype(QUIZ_DTYPES)
    ('float16', 'bfloat16', None)
    """
    return next((d for d in QUIZ_DTYPES if d not in shown), None)


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


# ---------------------------------------------------------------- Round-off lab

#: The dtype the Round-off lab's prediction moves the question's comparison to (the page draws float32).
ROUNDOFF_DTYPE = "float64"

ROUNDOFF_QUESTION = ("**Predict, then look:** the same comparison in float64, same x. How far apart are "
                     "autograd's gradient of `1/x` and `-1/x**2` now?")

#: Answer key -> how it reads.
ROUNDOFF_GUESSES: dict[str, str] = {
    "equal": "always the same float",
    "ulps": "still an ulp or a few apart, but of float64",
    "same_gap": "still about 5.96e-08 apart",
}


def roundoff_expected(max_ulps_apart: int) -> str:
    """The :data:`ROUNDOFF_GUESSES` key the float64 comparison makes right: "equal" when the two
    formulas never differ, else "ulps" (a gap of float32's size would be billions of float64 ulps).

    >>> roundoff_expected(0), roundoff_expected(3)
    ('equal', 'ulps')
    """
    return "equal" if max_ulps_apart == 0 else "ulps"


def roundoff_reveal(guess: str, same_bits: float, max_ulps_apart: int, points: int) -> Reveal:
    """The verdict on ``guess``, from the float64 comparison: the share of the ``points`` where both
    formulas give the same float (``same_bits``) and how many ulps apart they are at most.

    >>> print(roundoff_reveal("same_gap", 0.4676, 3, 10_000).text)  # doctest: +NORMALIZE_WHITESPACE
    Not quite: still an ulp or a few apart, but of float64. In float64 they are the same float at 46.8% of
    10,000 points and at most 3 ulp apart: the float32 story again, each formula rounds in its own places and
    stays within a few ulp of the exact value. But float64's grid is 2²⁹ times finer: for a gradient between
    0.5 and 1 one ulp is 2⁻⁵³ ≈ 1.1e-16, not float32's 2⁻²⁴ ≈ 5.96e-08. Neither formula is wrong in either
    dtype; the preset “In float64” draws it.
    """
    answer = roundoff_expected(max_ulps_apart)
    right = guess == answer
    verdict = "Right" if right else f"Not quite: {ROUNDOFF_GUESSES[answer]}"
    if max_ulps_apart == 0:
        return Reveal(right, f"{verdict}. In float64 they are the same float at all {points:,} points.")
    return Reveal(right, (
        f"{verdict}. In float64 they are the same float at {same_bits:.1%} of {points:,} points and at most "
        f"{max_ulps_apart} ulp apart: the float32 story again, each formula rounds in its own places and "
        "stays within a few ulp of the exact value. But float64's grid is 2²⁹ times finer: for a gradient "
        "between 0.5 and 1 one ulp is 2⁻⁵³ ≈ 1.1e-16, not float32's 2⁻²⁴ ≈ 5.96e-08. Neither formula is "
        "wrong in either dtype; the preset “In float64” draws it."))


# ------------------------------------------------------------------ the Network lab

NETWORK_QUESTION = ("**Predict, then look:** the same network in float64, still dx = {step:g}. "
                    "In steps of what size can the finite difference move now?")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _quantum(y: float, step: float, dtype: str) -> float:
    """ulp(y) / (2·dx) in ``dtype``: the size of the steps a central difference of y can move in."""
    return float(ulp(y, dtype)) / (2 * step)


def network_guesses(y: float, step: float) -> dict[str, str]:
    """Answer key -> how it reads, from the network's output ``y`` and the step: float32's quantum
    (what the page shows), float64's (the right one) and the step itself.

    >>> network_guesses(0.39, 1e-6)
    {'float32': 'about 0.015, as in float32', 'float64': 'about 3e-11', 'step': 'about 1e-06, the step itself'}
    """
    return {"float32": f"about {_quantum(y, step, 'float32'):.2g}, as in float32",
            "float64": f"about {_quantum(y, step, 'float64'):.1g}",
            "step": f"about {step:g}, the step itself"}


def network_reveal(guess: str, y: float, step: float, reference: float) -> Reveal:
    """The verdict on ``guess``, with float64's numbers for this network: ulp(y) as a power of two,
    the quantum, and how many digits of autograd's ``reference`` a difference can then agree to.

    >>> print(network_reveal("float64", 0.39, 1e-6, -0.00952).text)  # doctest: +NORMALIZE_WHITESPACE
    Right. In float64, ulp(y) for y ≈ 0.39 is 2⁻⁵⁴ ≈ 5.6e-17; divided by 2·dx = 2e-06 that is 2.8e-11,
    so the difference agrees with autograd to about 8 digits. Press “Same in float64” to see it.
    """
    right = guess == "float64"
    verdict = "Right" if right else f"Not quite: {network_guesses(y, step)['float64']}"
    spacing, quantum = float(ulp(y, "float64")), _quantum(y, step, "float64")
    power = f"2{str(int(math.log2(spacing))).translate(_SUPERSCRIPT)} ≈ "  # a float64 spacing: a power of two
    digits = (f", so the difference agrees with autograd to about {math.floor(math.log10(abs(reference) / quantum))} "
              "digits") if math.isfinite(reference) and abs(reference) > quantum else ""
    return Reveal(right, (f"{verdict}. In float64, ulp(y) for y ≈ {y:.2g} is {power}{spacing:.2g}; divided by "
                          f"2·dx = {2 * step:g} that is {quantum:.2g}{digits}. Press “Same in float64” to see it."))
