"""AppTest of the Round-off lab's first screen (issue 15): controls, then the answer, then the main chart.

The layout order is what a projector shows before anyone scrolls: the compact controls, the
one answer sentence (in the page chrome's answer box) and the main chart (in its chart box),
nothing in between. The quiz asks before it reveals who is closer, and keeps its answer out
of the URL (tests/test_pages_teaching.py checks the URL side for every quiz).
"""

from __future__ import annotations

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


def test_the_quiz_asks_before_it_reveals_who_is_closer():
    at = _open()
    radio = at.radio(key="roundoff_guess")
    assert radio.value is None
    revealed = [e.value for e in (*at.success, *at.info) if "closer" in e.value]
    assert not revealed  # neither the answer box nor the metrics say who is closer more often
    at = radio.set_value("-1/x**2").run()
    reveal = [shown(e.value) for e in (*at.success, *at.info) if "closer to the exact value" in e.value]
    assert len(reveal) == 1 and reveal[0].startswith(("Right: ", "Not quite: "))
