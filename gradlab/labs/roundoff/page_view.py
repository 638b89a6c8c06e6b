"""What the Round-off page shows of one settings object: :func:`view`, the page's worker entry, and
:func:`quiz_view`, its prediction's reveal.

The comparison (:func:`~gradlab.labs.roundoff.engine.compare`), then the answer, the three charts
drawn from every point, the numbers, the formulas' and the engine's notes and the first
:data:`TABLE_ROWS` points in hex. The figures are built here, in the worker, not in the server's
interpreter (where building them would take a sixth of its time under a class), and only the rows the
page lists cross the pipe, not the whole table (6.6 MB at 100,000 points).

>>> from gradlab.labs.roundoff.settings import RoundoffSettings
>>> v = view(RoundoffSettings(samples=200))
>>> v.answer.level, sorted(v.charts), len(v.tables["points"]), [n.label for n in v.numbers][:2]
('success', ['by x', 'distance', 'errors'], 200, ['same bits', "A's worst error (ulp)"])
"""

from __future__ import annotations

from gradlab.labs.roundoff.answer import roundoff_answer, ulps_text
from gradlab.labs.roundoff.engine import ROUNDOFF_ADVICE, RoundoffResult, RoundoffSettings, compare, with_hex
from gradlab.labs.roundoff.figures import page_figures, sent_figure
from gradlab.labs.roundoff.quiz import prediction, roundoff_expected, roundoff_reveal
from gradlab.literal_text import markdown_code, markdown_literal
from gradlab.server.worker_entries import worker_entry
from gradlab.teaching.glossary import term
from gradlab.view import Chart, Number, View

__all__ = ["view", "quiz_view", "TABLE_ROWS"]

#: Rows of the point-by-point table the page lists.
TABLE_ROWS = 500
#: One point of a comparison (one core: 100,000 points in 1.1-2.5 s).
_SAMPLE_SECONDS = 1e-5


def _forecast(settings: RoundoffSettings) -> float:
    return settings.samples * _SAMPLE_SECONDS


@worker_entry("the comparison", "roundoff_seconds", "request_seconds", advice=ROUNDOFF_ADVICE, forecast=_forecast)
def view(settings: RoundoffSettings) -> View:
    """The Round-off page's view of ``settings`` (see the module docstring)."""
    result = compare(settings)
    main, distance, by_x = page_figures(result)
    return View(
        answer=roundoff_answer(result),
        charts={"errors": Chart(sent_figure, (main,)), "distance": Chart(sent_figure, (distance,)),
                "by x": Chart(sent_figure, (by_x,))},
        tables={"points": with_hex(result.table.head(TABLE_ROWS))},
        numbers=_numbers(result),
        texts=_notes(result),
    )


@worker_entry("the comparison", "roundoff_seconds", "request_seconds", advice=ROUNDOFF_ADVICE, forecast=_forecast)
def quiz_view(settings: RoundoffSettings) -> View:
    """The prediction's reveals from the comparison of ``settings`` (the question's in float64,
    :data:`~gradlab.labs.roundoff.quiz.ROUNDOFF_QUIZ`): its summary only, nothing drawn. The table
    ``prediction`` holds each choice's reveal; the answer is the right one's.

    >>> from gradlab.labs.roundoff.quiz import ROUNDOFF_QUIZ
    >>> from dataclasses import replace
    >>> v = quiz_view(replace(ROUNDOFF_QUIZ, samples=500))
    >>> v.answer.text.startswith("Right. In float64 they are the same float at"), v.tables["prediction"].shape
    (True, (3, 3))
    """
    s = compare(settings).summary
    right = roundoff_reveal(roundoff_expected(s.max_ulps_a_b), s.bitwise_equal, s.max_ulps_a_b, s.compared)
    return View(answer=right, tables={"prediction": prediction(s)})


def _number(ulps: float) -> str:
    """An ulp count short enough for a metric on a phone: as the answer writes it, without the unit."""
    return ulps_text(ulps).removesuffix(" ulp")


def _numbers(result: RoundoffResult) -> tuple[Number, ...]:
    """The numbers behind the sentence: bit-for-bit agreement and each formula's worst error."""
    s = result.summary
    # a count of floats, not ulps of the exact value: near 0 floats are denser, so log1p's
    # A = 0 against B ≈ 1e-8 is 8.6e+08 floats apart while A's error is 1.7e+07 ulp
    return (Number("same bits", f"{s.bitwise_equal:.1%}", "Points where A and B are the very same float."),
            Number("A's worst error (ulp)", _number(s.max_ulps_a_exact),
                   markdown_literal(f"A = {result.label_a}. ") + term("ulp")),
            Number("B's worst error (ulp)", _number(s.max_ulps_b_exact),
                   markdown_literal(f"B = {result.label_b}. ") + term("correctly rounded")),
            Number("A–B, floats apart (at most)", _number(s.max_ulps_a_b),
                   "How many steps from one float to the next lie between A's and B's results, at "
                   "most (0: the same bits, 1: neighbours). Within one binade that is their distance "
                   "in ulps; across binades toward 0 floats are denser, so it can exceed both errors "
                   "in ulp."))


def _notes(result: RoundoffResult) -> dict[str, str]:
    """What each formula is (``formula A``, ``formula B``: a list item each, when it has a note), then
    the engine's notes (``note 1``, ``note 2``, ...): Markdown, the visitor's text in it literal."""
    formulas = {f"formula {side}": f"- **{markdown_code(label)}**: " + markdown_literal(note)
                for side, label, note in (("A", result.label_a, result.note_a), ("B", result.label_b, result.note_b))
                if note}
    return formulas | {f"note {n}": markdown_literal(note) for n, note in enumerate(result.notes, start=1)}
