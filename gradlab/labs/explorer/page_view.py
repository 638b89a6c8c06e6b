"""What the Explorer page shows of one sweep: :func:`view`, the page's worker entry.

The sweep (:func:`gradlab.step_sweep.engine.run_sweep`), then the answer, the charts (the main
one with its step slider, the estimates where there is no exact f′, and the small first-view chart
the home page draws), the tables under the chart, the notes by level, the sentences with numbers
and the quiz. The main chart's display options (error kind, theory and autograd lines, whose
theory) change in the browser's fragment without a new sweep: :func:`main_chart` picks the chart
for them. :func:`formulas` is the page's other worker entry (sympy's LaTeX, only when opened).

>>> from gradlab.step_sweep.engine import SweepSettings
>>> v = view(SweepSettings("exp(x)", 1.0, ("float32", "float64"), ("central",), 1e-9, 0.1, points=21))
>>> v.answer.level, sorted(v.tables), v.quiz.dtype
('info', ['autograd', 'best steps', 'rounding', 'sweep'], 'float16')
>>> main_chart(v, ChartOptions(error="absolute")).chart.kwargs["error"], sorted(v.errors_drawn)
('absolute', ['absolute', 'relative'])
>>> formulas("x**2")
('x^{2}', '2 x')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gradlab.labs.explorer.answer import sweep_answer, theory_words
from gradlab.labs.explorer.chart_slider import error_vs_eps_with_slider, estimate_vs_eps_with_legend
from gradlab.labs.explorer.defaults import DEFAULTS, STEP_DEFAULT
from gradlab.labs.explorer.figures import has_drawable_errors
from gradlab.labs.explorer.first_view import first_view_figure
from gradlab.labs.explorer.quiz import Quiz, explorer_quiz
from gradlab.labs.explorer.tables import autograd_table, best_step_table, exact_digits, rounding_table
from gradlab.literal_text import markdown_literal
from gradlab.server.worker_entries import worker_entry
from gradlab.step_sweep.engine import SweepResult, SweepSettings, run_sweep
from gradlab.step_sweep.notes import no_reference_note
from gradlab.teaching.glossary import definition
from gradlab.view import Chart, View

__all__ = ["ExplorerView", "view", "formulas", "ChartOptions", "MainChart", "main_chart"]

#: The error kinds the main chart offers.
ERROR_KINDS = ("relative", "absolute")


@dataclass(frozen=True)
class ExplorerView(View):
    """A :class:`~gradlab.view.View` (texts are Markdown, literal parts escaped) and what only the
    Explorer shows: its warnings (one box each), whether f has an exact derivative here (else the
    chart shows estimates, not errors, and nothing is asked), the error kinds its chart can draw
    on a log axis, and the quiz."""

    warnings: tuple[str, ...] = ()
    has_derivative: bool = True
    errors_drawn: frozenset[str] = field(default_factory=frozenset)
    quiz: Quiz | None = None


@worker_entry("the sweep", "request_seconds")
def view(settings: SweepSettings) -> ExplorerView:
    """The Explorer page's view of ``settings`` (see the module docstring)."""
    result = run_sweep(settings)
    s, defined = result.settings, result.reference.defined
    said = None if defined else no_reference_note(result.reference)  # the answer's own sentence
    theory = theory_words(result)  # the 8-bit floats' theory, which the answer leaves out
    all_missing = bool(result.table["estimate"].isna().all())  # drawn as the error chart's message
    return ExplorerView(
        answer=sweep_answer(result),
        charts={"errors": Chart(error_vs_eps_with_slider, (result, STEP_DEFAULT)),
                "estimates": Chart(estimate_vs_eps_with_legend, (result,)),
                "first view": Chart(first_view_figure, (result,)),
                "first view presented": Chart(first_view_figure, (result,), {"presented": True})},
        tables={"rounding": rounding_table(result), "best steps": best_step_table(result),
                "autograd": autograd_table(result), "sweep": result.table},
        texts={"chart": _chart_caption(s), "estimates": _estimates_caption(s),
               "theory": markdown_literal(theory) if theory else "",
               "infos": "\n".join(f"- {markdown_literal(n.text)}" for n in result.infos),
               "exact": _exact_sentence(result), "file name": f"gradlab-explorer-{s.expression}-x{s.x:g}"},
        result=result,
        warnings=tuple(markdown_literal(n.text) for n in result.warnings if n != said),
        has_derivative=defined,
        errors_drawn=frozenset(e for e in ERROR_KINDS if all_missing or has_drawable_errors(result, e)),
        quiz=explorer_quiz(s) if defined else None,  # no step is best where there is no derivative
    )


@worker_entry("the formulas' LaTeX", "evaluation_seconds")
def formulas(text: str) -> tuple[str, str]:
    """LaTeX of f and f' (sympy's printer: time-limited here, as it is the page's own step)."""
    from gradlab.numerics.expressions import parse

    expression = parse(text)
    return expression.latex(), expression.derivative_latex()


@dataclass(frozen=True)
class ChartOptions:
    """The main chart's display options: its error kind, theory and autograd lines, and whose theory."""

    error: str = DEFAULTS["error"]
    theory: bool = DEFAULTS["theory"]
    autograd: bool = DEFAULTS["autograd"]
    focus: str = DEFAULTS["focus"]


@dataclass(frozen=True)
class MainChart:
    """The chart a view draws with some options, whether it has the step slider, and the note above it."""

    chart: Chart
    step_slider: bool
    note: str = ""


def main_chart(shown: ExplorerView, options: ChartOptions) -> MainChart:
    """The errors against the step with ``options`` and the step slider; where no error of that
    kind can sit on a log axis (f′ = 0 exactly: every relative error is undefined), the estimates."""
    if options.error in shown.errors_drawn:
        errors = shown.charts["errors"]
        return MainChart(Chart(errors.build, errors.args, {
            "error": options.error, "show_theory": options.theory, "show_autograd": options.autograd,
            "focus_dtype": options.focus}), step_slider=True)
    return MainChart(shown.charts["estimates"], step_slider=False, note=(
        f"The exact derivative is 0 here, so no {options.error} error can be drawn on a log axis: the chart "
        "shows what each scheme and autograd return; choose absolute to see the errors."))


def _chart_caption(s: SweepSettings) -> str:
    return (f"f(x) = {markdown_literal(s.expression)}. Bands at the top, one per curve: red "
            "round-off, blue truncation; point at (or tap) either word in the answer, a band or a curve to light "
            "where each dominates. Wide faded lines: the "
            "theory's error; stars: its best step h*. Dotted verticals, labelled ε float32 and so on: each dtype's "
            f"machine epsilon ({definition('machine epsilon').split(' (')[0]}). Large dots: each curve at the marked "
            "step h; drag the slider under the chart to move it (it moves in your browser, and the link "
            "keeps the step you let go at).")


def _estimates_caption(s: SweepSettings) -> str:
    return (f"f(x) = {markdown_literal(s.expression)}. No exact f′ at x = {s.x!r}, so no "
            "error to draw: each curve is what a scheme returns at each step h (the dtype's colour, the "
            "scheme's marker), each dotted line autograd's value. At a kink a one-sided difference "
            "returns the slope on its side and the central difference their average.")


def _exact_sentence(result: SweepResult) -> str:
    x = result.settings.x
    if result.reference.defined:
        return f"Exact f′(x) at x = {x!r}, to 20 digits: {markdown_literal(exact_digits(result.reference.d1))}"
    return f"No exact f′ at x = {x!r}: {markdown_literal(result.reference.reason)}"
