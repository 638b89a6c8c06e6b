"""issue 37: where round-off and where truncation dominates a sweep's curves, as the answer says it,
the chart shades it and the page ties the two (gradlab.step_sweep.regimes)."""

from __future__ import annotations


import numpy as np
import pytest

from gradlab.labs.explorer.answer import sweep_answer
from gradlab.labs.explorer.figures import error_vs_eps_figure
from gradlab.figures.spec import specs_only
from gradlab.step_sweep.engine import SweepSettings, run_sweep
from gradlab.step_sweep.regimes import REGIMES, band_name, regime_of, regime_sentence, regime_steps
from gradlab.ui.regime_links import REGIME_ANCHOR, regime_linked
from gradlab.ui.term_links import linked
from gradlab.literal_text import markdown_literal

TWO = SweepSettings("exp(x)", 1.0, ("float32", "float64"), ("central",), 1e-17, 0.5, points=61)


@pytest.fixture(scope="module")
def two():
    return run_sweep(TWO)


def test_each_real_difference_splits_at_its_predicted_best_step(two):
    predicted = {(r["dtype"], r["scheme"]): r["predicted_eps"] for r in two.best_rows}
    assert regime_steps(two) == [(d, "central", predicted[(d, "central")]) for d in ("float32", "float64")]


@pytest.mark.parametrize("settings", [
    SweepSettings("exp(x)", 1.0, ("float64",), ("complex_step",), 1e-20, 1e-3, points=21),  # no round-off V
    SweepSettings("exp(x)", 1.0, ("float64",), ("central",), 1e-3, 0.5, points=21),  # h* below the range
], ids=["complex-step", "h-star-outside"])
def test_no_split_no_sentence(settings):
    result = run_sweep(settings)
    assert regime_steps(result) == [] and regime_sentence(result) is None
    assert not any(r in sweep_answer(result).text.lower() for r in REGIMES)


def test_no_exact_derivative_no_sentence():
    result = run_sweep(SweepSettings("abs(x)", 0.0, ("float64",), ("central",), points=21))
    assert not any(r in sweep_answer(result).text.lower() for r in REGIMES)


def test_the_answer_names_both_regimes_once_after_its_numbers(two):
    text = sweep_answer(two).text
    assert text.endswith(regime_sentence(two)) and "left of each best step" in text
    assert [text.lower().count(r) for r in REGIMES] == [1, 1]


def test_the_figures_bands_split_each_curve_at_its_h_star_under_the_names_the_page_lights(two):
    """The page's JavaScript finds a band by its name and the curve it covers by the name's dtype
    and scheme: every band name is band_name's, left band ending and right band starting at h*."""
    with specs_only():
        fig = error_vs_eps_figure(two)
    shapes = {s["name"]: s for s in fig.layout["shapes"] if str(s.get("name", "")).split(" · ")[0] in REGIMES}
    assert len(shapes) == 2 * len(regime_steps(two))
    curves = {f'{t["meta"]["dtype"]} {t["meta"]["scheme"]}' for t in fig.data if t["meta"]["kind"] == "sweep"}
    for dtype, scheme, h_star in regime_steps(two):
        left, right = shapes[band_name(REGIMES[0], dtype, scheme)], shapes[band_name(REGIMES[1], dtype, scheme)]
        assert left["x1"] == h_star == right["x0"] and left["x0"] == TWO.eps_min and right["x1"] == TWO.eps_max
        assert f"{dtype} {scheme}" in curves


def _slope(table, lo: float, hi: float) -> float:
    """The least-squares slope of log10 error against log10 h over [lo, hi]."""
    rows = table[(table["eps"] >= lo) & (table["eps"] <= hi) & (table["rel_error"] > 0)]
    return float(np.polyfit(np.log10(rows["eps"]), np.log10(rows["rel_error"]), 1)[0])


def test_the_measured_error_is_round_off_left_of_h_star_and_truncation_right():
    """What the words claim, measured: two decades left of h* the error falls as h grows like 1/h
    (round-off: u|f|/h), two decades right of it it grows like h^2 (central truncation: |f'''|h^2/6)."""
    result = run_sweep(SweepSettings("exp(x)", 1.0, ("float64",), ("central",), 1e-12, 0.5, points=121))
    ((_, _, h_star),) = regime_steps(result)
    table = result.table
    assert regime_of(h_star / 10, h_star) == REGIMES[0] and regime_of(h_star * 10, h_star) == REGIMES[1]
    assert -1.5 < _slope(table, h_star / 1e3, h_star / 10) < -0.5
    assert 1.7 < _slope(table, h_star * 10, h_star * 1e3) < 2.3


def test_the_words_become_one_link_each_and_never_inside_another_link(two):
    shown = regime_linked(linked(markdown_literal(sweep_answer(two).text), "ulp"))
    for regime in REGIMES:
        assert shown.count(f"]({REGIME_ANCHOR}{regime})") == 1
    assert '(/grid#definitions "ulp: unit in the last place' in shown  # the ulp link whole
    assert regime_linked(shown) == shown  # linking again changes nothing
