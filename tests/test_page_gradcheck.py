"""The Grad check page opens, its presets set the controls, and the URL restores them."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest
from app_text import shown

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "gradcheck.py")
TIMEOUT_S = 120


def _open(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT_S)
    if query:
        at.query_params.update(query)
    return at.run()


def _problems(at: AppTest) -> list[str]:
    return [e.message for e in at.exception]


def test_page_opens_with_a_verdict():
    at = _open()
    assert not _problems(at)
    assert at.title[0].value == "Grad check"
    assert len(at.error) + len(at.success) + len(at.warning) >= 1  # the diagnosis box
    assert len(at.dataframe) >= 1


def test_seed_001_preset_sets_the_controls_and_fails_with_roundoff():
    at = _open()
    at.button(key="preset_float32_check_fails").click().run()
    assert not _problems(at)
    assert at.selectbox(key="model").value == "affine"
    assert at.text_input(key="shape").value == "140x120"
    assert at.selectbox(key="loss").value == "mse"
    assert at.selectbox(key="reduction").value == "sum"
    assert at.selectbox(key="dtype").value == "float32"
    assert at.selectbox(key="scheme").value == "forward"
    assert at.selectbox(key="eps").value == "1e-03"
    assert at.selectbox(key="mode").value == "sampled"
    assert at.number_input(key="samples").value == 5
    assert at.number_input(key="seed").value == 0
    assert any("round-off" in shown(e.value) for e in at.warning)
    # The question's own conclusion (its check fails at eps 1e-3) next to GradLab's (the gradient is right).
    said = " ".join(shown(m.value) for m in at.markdown).replace("**", "")
    assert "A hand-written check" in said and "says FAIL" in said and "GradLab says PASS" in said
    assert not at.error  # a meaningless check is a warning, not a wrong gradient


def test_url_query_params_restore_the_controls():
    at = _open({"dtype": "float64", "shape": "12x10", "reduction": "mean", "scheme": "Central",
                "eps": "1e-03", "mode": "full"})
    assert not _problems(at)
    assert at.selectbox(key="dtype").value == "float64"
    assert at.text_input(key="shape").value == "12x10"
    assert at.selectbox(key="reduction").value == "mean"
    assert at.selectbox(key="scheme").value == "central"
    assert at.selectbox(key="mode").value == "full"
    assert any("Pass" in shown(e.value) for e in at.success)


def test_bad_shape_shows_an_error_not_a_traceback():
    at = _open({"shape": "banana"})
    assert not _problems(at)
    assert any("140x120" in shown(e.value) for e in at.error)


def test_a_full_check_that_would_run_too_long_is_stopped_early_with_the_bound_named():
    # 65,536 elements of the mlp: ~1 min of finite differences on one core, far over the bound
    at = _open({"model": "mlp", "shape": "256x256", "dtype": "float64", "mode": "full"})
    assert not _problems(at)
    messages = [shown(e.value) for e in at.error]
    assert any("LIMITS.full_check_seconds" in m and "sampled" in m for m in messages), messages
    assert not at.get("progress")  # the bar gives way to the message


SWEEP_CAPTION = "Each line is one sampled element"
TAYLOR_TEXT = "This test needs no step and no tolerance"


def _texts(at: AppTest) -> str:
    return " ".join(shown(m.value) for m in at.markdown) + " ".join(shown(c.value) for c in at.caption)


def test_only_the_open_tab_is_computed_and_the_url_names_it():
    default = _open({"shape": "12x10"})
    assert not _problems(default)
    assert SWEEP_CAPTION in _texts(default) and TAYLOR_TEXT not in _texts(default)

    taylor = _open({"shape": "12x10", "view": "Taylor test"})
    assert not _problems(taylor)
    assert TAYLOR_TEXT in _texts(taylor) and SWEEP_CAPTION not in _texts(taylor)


def test_a_url_naming_an_unknown_tab_opens_the_first():
    at = _open({"shape": "12x10", "view": "<script>"})
    assert not _problems(at)
    assert SWEEP_CAPTION in _texts(at)


def test_the_questions_check_shows_the_verdict_after_re_estimation_and_the_diagnosis_of_its_step():
    # At the question's step round-off swamps every value (the warning box); re-estimated at
    # better steps the gradient is right, and the engine's message says so.
    at = _open({"shape": "140x120", "dtype": "float32", "scheme": "forward", "eps": "1e-03"})
    assert not _problems(at)
    captions = [shown(c.value) for c in at.caption]
    said = [c for c in captions if c.startswith("Autograd and the finite differences agree")]
    assert said and "re-estimated" in said[0] and "Hint" not in said[0]
    assert any(m.value == "PASS" for m in at.metric)
    assert any("round-off" in shown(e.value) for e in at.warning)  # the hint's words, in the box
