"""Presentation mode and the chrome under AppTest: ?present=1 opens it, Exit leaves it, stepping applies presets."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_text import shown

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


def _open_page(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(query)
    at.switch_page(page)
    return at.run()


def test_the_bar_s_buttons_carry_no_hover_help():
    # A tooltip stays over the answer after a click while the pointer rests on the button.
    at = _open_page("pages/backward.py", {"present": "1"})
    assert not at.exception
    bar = {b.key: b for b in at.button if b.key and b.key.startswith("gl-present-")}
    assert set(bar) == {"gl-present-prev", "gl-present-next", "gl-present-exit"}
    assert all(not b.help for b in bar.values()), {k: b.help for k, b in bar.items()}


def test_the_quiz_switch_is_offered_only_where_the_page_draws_a_quiz():
    with_quiz = _open_page("pages/backward.py", {"present": "1"})
    assert "gl-present-quiz-backward" in {t.key for t in with_quiz.toggle}
    without = _open_page("pages/summed.py", {"present": "1"})
    assert not without.exception
    assert not [t for t in without.toggle if t.key and t.key.startswith("gl-present-quiz")]


def test_presented_backward_steps_are_told_by_the_answer():
    # What the preset "Backward twice, then once more" changes: the steps, a section presentation
    # hides. The answer on the presented screen says what they leave in .grad and which was refused.
    at = _open_page("pages/backward.py", {"present": "1", "steps": "br,b,b"})
    said = " ".join(shown(w.value) for w in at.warning)
    assert "a.grad = [0.6, 6, 0.0006], 2 × one backward's" in said  # .grad adds up: 2 × 3v, v = [0.1, 1, 1e-4]
    assert "Step 3 is refused" in said  # step 2 kept no graph for a third


def test_the_light_and_the_dark_theme_differ_in_colours_only():
    # Why the browser tests measure each presented layout in one theme (tests/browser/
    # test_presentation_browser.py PROJECTIONS): a theme sets colours and nothing that takes
    # space (fonts, sizes, radii are shared in [theme]), and no page lays itself out by theme.
    import re
    import tomllib

    root = Path(APP).parent
    config = tomllib.loads((root / ".streamlit" / "config.toml").read_text())["theme"]
    for scheme in ("light", "dark"):
        keys = set(config[scheme])
        assert keys and all(re.fullmatch(r"[a-zA-Z]+Colors?", key) for key in keys), (scheme, keys)
    assert set(config["light"]) == set(config["dark"])
    readers = [str(path.relative_to(root)) for path in [*root.glob("pages/*.py"), root / "app.py",
                                                          *root.glob("gradlab/**/*.py")]
               if re.search(r"theme_type\(\)|context\.theme", path.read_text())
               and path.name != "theme.py"]
    assert readers == [], f"these lay out by theme: {readers}"
