"""AppTest of the Round-off lab's first screen: controls, then the answer, then the main chart.

The layout order is what a projector shows before anyone scrolls: the compact controls, the
one answer sentence (in the page chrome's answer box) and the main chart (in its chart box),
nothing in between. The quiz asks about a comparison the page does not draw (the question's in
float64), reveals it only once answered, and keeps its answer out of the URL
(tests/test_pages_teaching.py checks the URL side for every quiz).
"""

from __future__ import annotations

import math

from pathlib import Path

from app_text import shown
from streamlit.testing.v1 import AppTest

from gradlab.ui.page_chrome import ANSWER_KEY, MAIN_CHART_KEY

APP = str(Path(__file__).resolve().parents[1] / "app.py")
CONTROL_KEYS = ["a", "b", "dtype", "dist", "low", "high", "n", "seed"]


def _open(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    if query:
        at.query_params.update(query)
    return at.switch_page("pages/roundoff.py").run()


def _walk(node, box: str = ""):
    """(element type, widget key, the chrome box it sits in) of every element, in page order."""
    children = getattr(node, "children", None)
    if children is not None and not hasattr(node, "value"):
        block_id = str(getattr(getattr(node, "proto", None), "id", "") or "")
        inner = next((k for k in (ANSWER_KEY, MAIN_CHART_KEY) if block_id.endswith(k)), box)
        for child in children.values():
            yield from _walk(child, inner)
    else:
        yield node.type, getattr(node, "key", None), box


def test_answer_and_main_chart_come_right_after_the_controls():
    at = _open()
    assert not at.exception and not at.error
    elements = list(_walk(at.main))
    keys = [key for _, key, _ in elements]
    last_control = max(keys.index(k) for k in CONTROL_KEYS)
    assert keys.index("seed") == last_control  # every control comes before the results
    following = elements[last_control + 1:last_control + 4]
    assert [(kind, box) for kind, _, box in following] == [
        ("success", ANSWER_KEY), ("caption", ANSWER_KEY), ("plotly_chart", MAIN_CHART_KEY)]
    # nothing but the title, the question and the preset buttons comes before the controls
    assert {kind for kind, _, _ in elements[:keys.index("a")]} == {"title", "markdown", "button"}


def test_the_answer_sentence_and_the_ulp_it_uses_are_on_the_first_screen():
    at = _open()
    answer, definition = at.success[0].value, at.caption[0].value
    assert shown(answer).startswith("Both are within ") and shown(answer).endswith(": neither is wrong.")
    assert "ulp" in answer and shown(definition).startswith("ulp: unit in the last place")


def test_a_formula_that_loses_digits_gets_a_warning_naming_it():
    at = _open({"a": "log(1+x)", "b": "log1p(x)", "dist": "log-uniform", "low": "1e-08", "high": "1e-07"})
    assert not at.exception and not at.success
    assert shown(at.warning[0].value).startswith("log(1+x) is off by up to")


def _on_the_page(at: AppTest) -> str:
    """Every text the page shows outside its closed lesson expander."""
    def walk(node):
        for child in getattr(node, "children", {}).values():
            if child.type == "expander":  # the lesson, closed: the full story, read after predicting
                continue
            if hasattr(child, "children") and not hasattr(child, "value"):
                yield from walk(child)
            elif child.type in ("markdown", "caption", "success", "info", "warning", "metric"):
                yield f"{getattr(child, 'label', '')} {shown(str(child.value))}"
    return " ".join(walk(at.main))


def test_the_quiz_asks_about_a_comparison_the_page_does_not_show_and_reveals_it_only_once_answered():
    at = _open()
    radio = at.radio(key="roundoff_guess")
    assert radio.value is None and radio.index is None
    assert "float64" in radio.label  # the question's comparison moved to float64, which the page does not draw
    before = _on_the_page(at)
    assert "neither is wrong" in before and "same bits" in before  # the answer sentence, the metrics
    assert "2^{29}" not in before  # the closed lesson's words are not counted as shown
    assert "In float64" not in before and "2⁻⁵³" not in before and "1.1e-16" not in before
    at = radio.set_value("equal").run()
    assert not at.exception and not at.error
    reveal = [shown(e.value) for e in (*at.success, *at.info) if "In float64 they are" in shown(e.value)]
    assert len(reveal) == 1 and reveal[0].startswith("Not quite: still an ulp or a few apart, but of float64.")
    assert "of 10,000 points and at most 3 ulp apart" in reveal[0] and "2⁻⁵³ ≈ 1.1e-16" in reveal[0]
    at = at.radio(key="roundoff_guess").set_value("ulps").run()
    reveal = [shown(e.value) for e in at.success if "In float64 they are" in shown(e.value)]
    assert len(reveal) == 1 and reveal[0].startswith("Right.")


def test_the_quiz_answer_is_the_engines_float64_comparison_and_nothing_else():
    from dataclasses import replace

    import numpy as np

    from gradlab.labs.roundoff.engine import COMPARISONS, compare
    from gradlab.labs.roundoff.quiz import ROUNDOFF_DTYPE, roundoff_expected

    question = COMPARISONS["reciprocal"].settings
    result = compare(replace(question, dtype=ROUNDOFF_DTYPE))
    s = result.summary
    assert roundoff_expected(s.max_ulps_a_b) == "ulps" and 0 < s.bitwise_equal < 1
    # the gap is a few float64 ulps, nowhere near float32's 5.96e-08 (2**-24) at any point
    gap = np.abs(result.table["value_a"].to_numpy() - result.table["value_b"].to_numpy())
    ulp = np.spacing(np.abs(result.table["value_b"].to_numpy()))
    assert (gap <= 3 * ulp).all() and (gap / np.abs(result.table["value_b"].to_numpy()) < 1e-15).all()


# ------------------------------------------------------------- each preset's numbers agree

import pytest  # noqa: E402

from gradlab.teaching.presets import presets_for, url_query  # noqa: E402


def _metric_number(text: str) -> float:
    """A metric's value as read: '1.7e+07', '4,097', '0.5', '99.3%'."""
    return float(text.replace(",", "").rstrip("%"))


@pytest.mark.parametrize("key", [p.key for p in presets_for("roundoff")])
def test_each_presets_metrics_agree_with_their_units_and_with_each_other(key):
    """The metrics' units are the ones their values are in: errors against the exact value in
    ulp, the A–B distance as a count of floats (log1p: A = 0 against B ≈ 1e-8 is 8.6e+08 floats
    apart while A is 1.7e+07 ulp off: labelled ulp, the three contradicted each other). Read
    together they agree: 100 % same bits is 0 floats apart and equal worst errors."""
    (p,) = [q for q in presets_for("roundoff") if q.key == key]
    at = _open(url_query(p))
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    errors = [label for label in metrics if label.endswith("(ulp)")]
    assert errors == ["A's worst error (ulp)", "B's worst error (ulp)"], metrics
    (apart,) = [label for label in metrics if label.startswith("A–B")]
    assert "floats apart" in apart and "ulp" not in apart, apart
    same, distance = _metric_number(metrics["same bits"]), _metric_number(metrics[apart])
    a, b = (_metric_number(metrics[label]) for label in errors)
    assert (same == 100.0) == (distance == 0), metrics
    if distance == 0:
        assert a == b, metrics
    # within one binade (the reciprocal's presets) floats apart are ulps: the triangle inequality
    if key in ("reciprocal_formulas", "same_operations", "float64_formulas"):
        assert distance <= math.ceil(a + b), metrics
