"""The Explorer's "predict, then reveal" question: where is a dtype's best step? Revealed from the
sweep of the dtype asked about.

The theory (the README's "The mathematics"): a scheme of order p has truncation
~ C h^p and round-off ~ u|f|/h, so the best step scales like u^(1/(p+1)): sqrt(eps) for one-sided
differences, cbrt(eps) for central ones, whatever the habit of ``h = 1e-6`` says.

>>> quiz_scheme(("complex_step", "central", "forward"))
'central'
>>> expected_guess("forward"), expected_guess("central")
('sqrt', 'cbrt')
>>> f"{guess_step('cbrt', 'float32'):.2e}"
'4.92e-03'

The page asks first and reveals after: :func:`quiz_reveal` builds the verdict (an answer whose
level says right or not, and the sentence) from the guess, so the page shows nothing of it until then.

>>> quiz_reveal("central", "float32", "cbrt").level
'success'

A view's :class:`Quiz` holds the question about a dtype its chart does not show, and the sweep
of that dtype alone, whose best step the reveal quotes:

>>> from gradlab.step_sweep.engine import SweepSettings
>>> q = explorer_quiz(SweepSettings("sin(x)", 1.0, ("float32", "float64"), ("central",)))
>>> q.question
'float16 is not on the chart. Where will its central difference be most accurate?'
>>> q.settings.dtypes, q.captions
(('float16',), ('1.0e-06', '9.8e-04', '3.1e-02', '9.9e-02'))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gradlab.labs.explorer.tables import format_sig
from gradlab.numerics.dtypes import DTYPE_NAMES, facts
from gradlab.numerics.schemes import get_scheme
from gradlab.step_sweep.engine import SweepSettings
from gradlab.step_sweep.step_range import chart_step_range
from gradlab.teaching.glossary import term
from gradlab.view import Answer

__all__ = ["GUESSES", "HABIT_STEP", "QUIZ_DTYPES", "quiz_dtype", "quiz_scheme", "expected_guess",
           "guess_step", "guess_label", "quiz_reveal", "Quiz", "explorer_quiz"]

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


def quiz_reveal(scheme: str, dtype: str, guess: str, predicted: str | None = None,
                observed: str | None = None) -> Answer:
    """The verdict on ``guess`` for ``scheme`` in ``dtype`` (level "success": right, "info": not);
    ``predicted``/``observed`` steps add the sweep's view.

    >>> print(quiz_reveal("forward", "float64", "habit", predicted="1.5e-08", observed="1.0e-08").text)
    Not quite. The theory says h ≈ √ε (ε = 2.22e-16 in float64, so about 1.5e-08); for this function it predicts h* = 1.5e-08, and the sweep's best step was 1.0e-08.
    """
    answer = expected_guess(scheme)
    right = guess == answer
    text = (f"{'Right' if right else 'Not quite'}. The theory says {guess_label(answer)} "
            f"(ε = {facts(dtype).eps:.2e} in {dtype}, so about {guess_step(answer, dtype):.1e})")
    if predicted is not None and observed is not None:
        text += f"; for this function it predicts h* = {predicted}, and the sweep's best step was {observed}"
    return Answer("success" if right else "info", text + ".")


@dataclass(frozen=True)
class Quiz:
    """The prediction one view asks: about ``dtype`` (one its chart does not show) and ``scheme``,
    answered by the sweep of that pair alone (``settings``); where it cannot ask, why
    (``unavailable``, and no question)."""

    dtype: str | None
    scheme: str | None
    settings: SweepSettings | None = None
    #: The guesses offered, in order (:data:`GUESSES`' keys).
    choices: tuple[str, ...] = tuple(GUESSES)

    @property
    def unavailable(self) -> str:
        """Why nothing is asked ("" when a question is)."""
        if self.scheme is None:
            return "Select a forward, backward or central difference to try the prediction."
        if self.dtype is None:
            return "Every dtype is on the chart already: remove one to predict its best step first."
        return ""

    @property
    def question(self) -> str:
        # the scheme's label ("central difference") names the kind already
        return (f"{self.dtype} is not on the chart. Where will its {get_scheme(self.scheme).label} be most "
                "accurate?")

    @property
    def captions(self) -> tuple[str, ...]:
        """Each guess's step in the dtype asked about."""
        return tuple(f"{guess_step(k, self.dtype):.1e}" for k in self.choices)

    @property
    def help(self) -> str:
        return f"ε is the dtype's machine epsilon, {facts(self.dtype).eps:.1e} in {self.dtype}. " + term("machine epsilon")

    @staticmethod
    def label(key: str) -> str:
        """How a guess reads (:func:`guess_label`)."""
        return guess_label(key)

    def reveal(self, guess: str, own) -> Answer:
        """The verdict on ``guess``, quoting the best step of ``own``: the view (or result) of
        :attr:`settings`, whose ``best`` table has the theory's and the sweep's best step."""
        best = getattr(own, "result", own).best
        row = best.iloc[0] if not best.empty else None
        return quiz_reveal(self.scheme, self.dtype, guess,
                           predicted=None if row is None else format_sig(row["predicted_eps"]),
                           observed=None if row is None else format_sig(row["eps"]))


def explorer_quiz(settings: SweepSettings) -> Quiz:
    """The prediction the Explorer asks beside the chart of ``settings``."""
    scheme, dtype = quiz_scheme(settings.schemes), quiz_dtype(settings.dtypes)
    if scheme is None or dtype is None:
        return Quiz(dtype, scheme)
    own = SweepSettings(settings.expression, settings.x, (dtype,), (scheme,),
                        *chart_step_range((dtype,), (scheme,)), settings.points)
    return Quiz(dtype, scheme, own)
