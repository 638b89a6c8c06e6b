"""The Round-off lab: two formulas, equal in mathematics, compared in floating point against the exact value.

Its page imports this package only: :class:`RoundoffSettings` (what the page's controls set),
:func:`view` (everything the page shows of them, in a worker) and :func:`quiz_view` (its
prediction's reveal). Its modules:

- :mod:`~gradlab.labs.roundoff.settings`: what to compare, on which seeded inputs
- :mod:`~gradlab.labs.roundoff.formulas`: the formulas, parsed
- :mod:`~gradlab.labs.roundoff.reference`: the exact values and errors in ulps
- :mod:`~gradlab.labs.roundoff.comparisons`: the named comparisons the presets use
- :mod:`~gradlab.labs.roundoff.engine`: ``compare``, a comparison run, its table and summary
- :mod:`~gradlab.labs.roundoff.answer`: the answer sentence (is either formula wrong?)
- :mod:`~gradlab.labs.roundoff.figures`: the error histogram, the A–B distance bars, the error along x
- :mod:`~gradlab.labs.roundoff.quiz`: the prediction (the question's comparison in float64)
- :mod:`~gradlab.labs.roundoff.page_settings`: the page's widget values -> its settings, and the views they make
- :mod:`~gradlab.labs.roundoff.page_view`: the page's view and the prediction's, its worker entries
"""

from gradlab.labs.roundoff.page_settings import preset_views, settings_from
from gradlab.labs.roundoff.page_view import TABLE_ROWS, quiz_view, view
from gradlab.labs.roundoff.quiz import ROUNDOFF_GUESSES, ROUNDOFF_QUESTION, ROUNDOFF_QUIZ
from gradlab.labs.roundoff.settings import DISTRIBUTIONS, RoundoffSettings
from gradlab.limits import LIMITS

__all__ = ["RoundoffSettings", "settings_from", "preset_views", "DISTRIBUTIONS", "view", "quiz_view", "TABLE_ROWS", "ROUNDOFF_QUESTION",
           "ROUNDOFF_GUESSES", "ROUNDOFF_QUIZ", "MAX_SAMPLES", "MAX_FORMULA_CHARS"]

#: The most points a comparison may draw, and the longest formula a visitor may type.
MAX_SAMPLES, MAX_FORMULA_CHARS = LIMITS.roundoff_samples, LIMITS.expression_chars
