"""gradlab.labs.explorer: the controls validated once (explorer_settings), the page's view of a sweep
(view -> ExplorerView) and the chart its display options pick (main_chart), read against the
sweep itself and against the numbers the theory gives."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from app_text import shown as unescaped

from gradlab.labs.explorer import (CUSTOM, DEFAULTS, ChartOptions, ControlError, ExpressionError,
                                   default_sweep_settings, explorer_settings, fitted_steps, main_chart,
                                   picked_point, view)
from gradlab.labs.explorer.answer import sweep_answer
from gradlab.labs.explorer.first_view import PRESENTED_HEIGHT, SMALL_HEIGHT, first_view_figure
from gradlab.labs.explorer.quiz import quiz_reveal
from gradlab.step_sweep.engine import SweepSettings, run_sweep

CLASSIC = SweepSettings("exp(x)", 1.0, ("float32", "float64"), ("central",), 1e-9, 0.1, points=21, frames=True)


@pytest.fixture(scope="module")
def classic():
    return view(CLASSIC)


def test_the_view_is_the_sweep_its_answer_and_its_tables(classic):
    result = run_sweep(CLASSIC)
    assert classic.answer == sweep_answer(result)
    assert classic.tables["sweep"].equals(result.table)
    assert list(classic.tables["best steps"]["dtype"]) == ["float32", "float64"]
    # the autograd table's exact f′ is e (d/dx exp at 1) to 17 digits
    assert float(classic.tables["autograd"].loc[1, "exact f′(x)"]) == pytest.approx(math.e, rel=1e-16)
    with mpmath.workdps(30):
        e = mpmath.nstr(mpmath.e, 20)  # d/dx exp(x) at 1, to 20 digits
    assert unescaped(classic.texts["exact"]) == f"Exact f′(x) at x = 1.0, to 20 digits: {e}"
    assert classic.texts["file name"] == "gradlab-explorer-exp(x)-x1"
    assert classic.has_derivative and classic.errors_drawn == {"relative", "absolute"}


def test_the_chart_takes_the_display_options_and_keeps_the_step_slider(classic):
    drawn = main_chart(classic, ChartOptions(error="absolute", theory=False, autograd=True, focus="float64"))
    assert drawn.step_slider and not drawn.note
    assert drawn.chart.kwargs == {"error": "absolute", "show_theory": False, "show_autograd": True,
                                  "focus_dtype": "float64"}
    figure = drawn.chart.figure()
    assert figure.layout.sliders and not any(t.meta and t.meta.get("kind") == "theory" for t in figure.data)


def test_an_exact_zero_derivative_draws_the_estimates_with_a_note():
    # f = x**2 at 0: f′ = 0, so every relative error is undefined; the forward difference's
    # absolute error is h itself ((h² − 0)/h), which a log axis shows
    shown = view(SweepSettings("x**2", 0.0, ("float64",), ("forward",), 1e-6, 1e-2, points=5))
    assert shown.errors_drawn == {"absolute"}
    relative = main_chart(shown, ChartOptions(error="relative"))
    assert not relative.step_slider and relative.chart is shown.charts["estimates"]
    assert relative.note.startswith("The exact derivative is 0 here, so no relative error can be drawn")
    assert main_chart(shown, ChartOptions(error="absolute")).step_slider
    errors = shown.tables["sweep"]["abs_error"].to_numpy(dtype=float)
    assert np.allclose(errors, shown.tables["sweep"]["eps"].to_numpy(dtype=float), rtol=1e-9)


def test_at_a_kink_there_is_no_error_no_quiz_and_the_answer_alone_says_why():
    shown = view(SweepSettings("abs(x)", 0.0, ("float32",), ("forward", "central"), points=5))
    assert not shown.has_derivative and shown.quiz is None
    assert shown.answer.level == "warning" and "no exact derivative" in shown.answer.text
    assert not any("No exact reference" in w for w in shown.warnings)  # said once, by the answer
    assert unescaped(shown.texts["exact"]).startswith("No exact f′ at x = 0.0: ")


def test_the_quiz_asks_about_a_dtype_not_drawn_and_reveals_the_theorys_step(classic):
    quiz = classic.quiz
    assert quiz.dtype == "float16" and quiz.scheme == "central" and not quiz.unavailable
    assert quiz.settings.dtypes == ("float16",) and quiz.settings.schemes == ("central",)
    # float16's ε is 2⁻¹⁰: the four guesses stand for 1e-6, ε, √ε and ∛ε
    eps = 2.0 ** -10
    assert quiz.captions == tuple(f"{h:.1e}" for h in (1e-6, eps, eps ** 0.5, eps ** (1 / 3)))
    own = view(quiz.settings)
    right, wrong = quiz.reveal("cbrt", own), quiz.reveal("habit", own)
    assert (right.level, wrong.level) == ("success", "info")
    assert f"so about {eps ** (1 / 3):.1e}" in right.text and wrong.text.startswith("Not quite")
    best = own.result.best.iloc[0]
    assert f"the sweep's best step was {best['eps']:.2e}" in right.text
    assert quiz_reveal("central", "float16", "cbrt").text in right.text.replace(
        f"; for this function it predicts h* = {best['predicted_eps']:.2e}, and the sweep's best step was "
        f"{best['eps']:.2e}", "")


def test_a_quiz_without_a_difference_to_ask_about_says_why():
    shown = view(SweepSettings("exp(x)", 1.0, ("float32",), ("complex_step",), points=5))
    assert shown.quiz.unavailable.startswith("Select a forward, backward or central difference")


def test_the_controls_are_validated_once_in_the_pages_words():
    s = explorer_settings("reciprocal", "ignored", 0.3, ["float32"], ["central"], 1e-8, 1.0, 21)
    assert (s.expression, s.x, s.dtypes) == ("1/x", 0.3, ("float32",))
    with pytest.raises(ExpressionError):
        explorer_settings(CUSTOM, "frobnicate(x)", 1.0, ["float32"], ["central"], 1e-8, 1.0, 21)
    for dtypes, schemes, word in (([], ["central"], "dtype"), (["float32"], [], "scheme")):
        with pytest.raises(ControlError, match=f"Pick at least one {word} above") as caught:
            explorer_settings(CUSTOM, "sin(x)", 1.0, dtypes, schemes, 1e-8, 1.0, 21)
        assert caught.value.level == "warning"
    with pytest.raises(ControlError, match=r"eps-min \(1e-05\) must be smaller than eps-max \(1e-05\)") as caught:
        explorer_settings(CUSTOM, "sin(x)", 1.0, ["float32"], ["central"], 1e-5, 1e-5, 21)
    assert caught.value.level == "error"


def test_the_home_page_and_the_explorers_default_widgets_ask_for_the_same_view():
    steps = fitted_steps(list(DEFAULTS["dtypes"]), list(DEFAULTS["schemes"]))
    from_widgets = explorer_settings(DEFAULTS["fn"], DEFAULTS["expr"], DEFAULTS["x"], list(DEFAULTS["dtypes"]),
                                     list(DEFAULTS["schemes"]), steps.eps_min, steps.eps_max, DEFAULTS["points"])
    assert repr(from_widgets) == repr(default_sweep_settings())  # one cache key for both pages
    # float64's unit round-off is 2⁻⁵³ ≈ 1.1e-16: the fitted range starts a decade below it
    assert steps.caption == f"Steps from {steps.eps_min:.0e} to {steps.eps_max:.0e}." and steps.eps_min == 1e-17


def test_picking_a_function_moves_x_to_its_point_and_says_so_once():
    assert picked_point("sqrt_near_zero", 1.5) == (1e-4, "Picking sqrt(x) near 0 moved x from 1.5 to 0.0001, the point "
                                                         "this example is about; type another x to change it.")
    assert picked_point("sqrt_near_zero", 1e-4) == (1e-4, "")
    assert picked_point(CUSTOM, 1.5) is None


def test_the_first_view_chart_is_small_beside_the_answer_and_larger_when_presented(classic):
    small, presented = classic.charts["first view"].figure(), classic.charts["first view presented"].figure()
    assert (small["layout"]["height"], presented["layout"]["height"]) == (SMALL_HEIGHT, PRESENTED_HEIGHT)
    assert first_view_figure(classic.result)["layout"]["legend"]["y"] == -0.32  # below the plot
    names = {t.get("meta", {}).get("kind") for t in small["data"]}
    assert "theory" not in names and "autograd" not in names
    assert presented["layout"]["xaxis"]["tickfont"]["size"] > small["layout"]["xaxis"].get("tickfont", {}).get("size", 0)
