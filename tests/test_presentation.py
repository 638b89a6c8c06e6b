"""Presentation mode and the chrome under AppTest: ?present=1 opens it, Exit leaves it, stepping applies presets."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from gradlab.teaching.presets import presets_for

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def _open(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    return at.run()


def test_home_in_presentation_has_exit_and_no_stepping():
    at = _open({"present": "1"})
    assert not at.exception
    keys = {b.key for b in at.button}
    assert "gl-present-exit" in keys and "gl-present-next" not in keys and "gl-present" not in keys
    at.button(key="gl-present-exit").click().run()
    assert "present" not in at.query_params
    assert "gl-present" in {b.key for b in at.sidebar.button}  # back to the normal chrome


def test_present_button_puts_present_in_the_url():
    at = _open({})
    at.sidebar.button(key="gl-present").click().run()
    assert at.query_params["present"] in ("1", ["1"])  # AppTest keeps a set value as str
    assert "gl-present-exit" in {b.key for b in at.button}
