"""AppTest for the three teaching pages: open cleanly, presets, URL restore, bad input -> st.error."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from app_text import shown

APP = str(Path(__file__).resolve().parents[1] / "app.py")
TIMEOUT_S = 60


def _open(page: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S)
    at.run()
    if query:
        at.query_params.update(query)
    return at.switch_page(page).run()


def _clean(at: AppTest) -> bool:
    return not at.exception and not at.error


@pytest.mark.parametrize("page", ["pages/roundoff.py", "pages/network.py", "pages/backward.py"])
def test_page_opens_without_exception(page):
    at = _open(page)
    assert _clean(at), [shown(e.value) for e in at.error] + [e.message for e in at.exception]


def test_roundoff_preset_and_url_and_bad_input():
    at = _open("pages/roundoff.py", {"a": "log(1+x)", "b": "log1p(x)", "dist": "log-uniform",
                                     "low": "1e-06", "high": "0.01"})
    assert _clean(at)
    assert at.text_input(key="a").value == "log(1+x)" and at.selectbox(key="dist").value == "log-uniform"
    at.button[0].click().run()  # "Reproduce seed 000"
    assert at.text_input(key="a").value == "autograd" and at.text_input(key="b").value == "-1/x**2"
    assert at.selectbox(key="dtype").value == "float32" and at.selectbox(key="preset").value == "reciprocal"
    assert _clean(at)
    at.text_input(key="b").set_value("sqrt(x").run()
    assert not at.exception and at.error and "syntax" in at.error[0].value


def test_roundoff_preset_from_url():
    at = _open("pages/roundoff.py", {"preset": "log1p"})
    assert _clean(at)
    assert at.text_input(key="b").value == "log1p(x)"


def test_network_preset_and_url_and_bad_input():
    at = _open("pages/network.py", {"dtype": "float64", "act": "gelu"})
    assert _clean(at)
    assert at.selectbox(key="dtype").value == "float64" and at.selectbox(key="act").value == "gelu"
    at.button[0].click().run()  # "Reproduce seed 002"
    assert at.selectbox(key="dtype").value == "float32" and at.select_slider(key="dx").value == 1e-6
    assert _clean(at)
    at.text_input(key="hidden").set_value("32, lots").run()
    assert not at.exception and at.error and "layer width" in at.error[0].value
    at.text_input(key="hidden").set_value("32").run()
    at.number_input(key="idx").set_value(20).run()
    assert not at.exception and at.error and "input index" in at.error[0].value


def test_backward_preset_steps_url_and_bad_input():
    at = _open("pages/backward.py", {"v": "1, 1, 1", "steps": "br,b,b"})
    assert not at.exception and not at.error
    assert at.text_input(key="v").value == "1, 1, 1"
    assert any("second time" in shown(w.value) for w in at.warning)  # PyTorch's message, not an exception
    at.button[0].click().run()  # "Reproduce seed 003"
    assert at.text_input(key="v").value == "0.1, 1, 0.0001" and at.text_input(key="steps").value == ""
    assert _clean(at)
    at.text_input(key="c").set_value("6, 0, 8").run()
    assert not at.exception and at.error and "c > 0" in shown(at.error[0].value)
