"""The Explorer page under app.py's navigation (AppTest): controls, presets, URL, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_text import shown
from gradlab.ui import controls as widgets
from gradlab.labs.explorer.defaults import DEFAULTS
from gradlab.teaching.presets import presets_for, url_query, url_values

REPO_ROOT = Path(__file__).resolve().parents[1]
APP = REPO_ROOT / "app.py"
PAGE = "pages/explorer.py"
TIMEOUT_S = 90  # the first run imports torch and sympy and computes the default sweep


def _open(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    at.run()
    if query:
        at.query_params.update(query)
    at.switch_page(PAGE).run()
    return at


@pytest.fixture(scope="module")
def page() -> AppTest:
    """One warm page shared by the control tests (each test leaves a valid state)."""
    return _open()


def _exceptions(at: AppTest) -> list[str]:
    return [e.message for e in at.exception]


def _charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


def _state(at: AppTest, key: str):
    value = at.session_state[key]
    return tuple(value) if isinstance(value, list | tuple) else value


def test_opens_with_the_complex_step_classic():
    at = _open()
    assert not _exceptions(at) and not at.error
    assert _charts(at) == 1
    assert at.session_state["fn"] == DEFAULTS["fn"] == "complex_step_classic"
    assert _state(at, "dtypes") == DEFAULTS["dtypes"]
    # Formulas and tables are drawn only once their expander is opened (they cost the browser seconds).
    assert len(at.latex) == 0
    at.session_state["explorer_numbers"] = True
    at.run()
    assert len(at.latex) >= 2  # f(x) and f'(x)
    assert at.get_by_key("download_csv") is not None
    assert len(at.dataframe) == 3


def _key(node) -> str | None:
    return getattr(node, "key", None)


def test_the_answer_and_the_chart_come_right_after_the_compact_controls():
    at = _open()
    top = list(at.main.children.values())
    # Two rows of controls: the title with the Steps and Presets popovers, then one row of widgets.
    assert {type(c).__name__ for c in top[0].children.values()} >= {"Header"}
    assert [type(c).__name__ for c in top[1].children.values()] == [
        "Selectbox", "NumberInput", "Multiselect", "Multiselect"]
    assert _key(top[2]) == "gl-answer"
    (answer,) = top[2].children.values()
    assert answer.type == "info" and "central difference" in answer.value and "autograd" in answer.value
    # The answer's unit is defined where it first appears: the word shows the definition on hover.
    assert '[ulp](/grid#definitions "ulp: unit in the last place' in answer.value
    # Its regimes are links the page ties to the chart's bands (gradlab.ui.regime_links), once each.
    assert answer.value.count("](#gl-regime-round-off)") == answer.value.count("](#gl-regime-truncation)") == 1
    assert "[Round\\-off](#gl-regime-round-off)" in answer.value
    # the chart's box first in its fragment, after only the (empty) slot of the no-derivative note
    kids = list(top[3].children.values())
    box = next(c for c in kids if _key(c))
    assert _key(box) == "gl-main-chart" and kids.index(box) <= 1
    assert len(box.get("plotly_chart")) == 1


def test_the_default_view_shows_the_v_of_float32_and_float64_central_differences():
    at = _open()
    assert _state(at, "schemes") == ("central",) and _state(at, "dtypes") == ("float32", "float64")
    assert at.session_state["eps_auto"] is True
    # The steps fitted to float32 and float64 (u = 2^-24, 2^-53): a decade below float64's u ...
    caption = " ".join(c.value for c in at.caption)
    assert "Steps from 1e-17 to 5e-01" in caption


def test_a_link_with_a_step_range_keeps_it():
    # Links from before the fitted range (or copied with it off) name eps_range and mean it.
    at = _open({"eps_range": ["1e-12", "1e-02"]})
    assert at.session_state["eps_auto"] is False
    assert _state(at, "eps_range") == (1e-12, 1e-2)


def test_the_quiz_asks_first_and_reveals_only_after_an_answer():
    at = _open()
    assert at.radio(key="explorer_guess").value is None
    reveals = lambda: [m for m in (*at.success, *at.info) if "The theory says" in m.value]  # noqa: E731
    assert not reveals() and not any("E(h)" in l.value for l in at.latex)
    # It asks about a dtype the chart does not show yet: its answer is not on screen.
    question = at.radio(key="explorer_guess").label
    assert question.startswith("float16 is not on the chart") and "float16" not in _state(at, "dtypes")
    at.radio(key="explorer_guess").set_value("habit").run()
    (reveal,) = reveals()
    assert reveal.value.startswith("Not quite") and "∛ε" in reveal.value
    # float16's central-difference scale: eps^(1/3) with eps = 2^-10 (IEEE half precision).
    assert f"{(2.0 ** -10) ** (1 / 3):.1e}" in reveal.value.replace("\\", "")  # shown escaped
    assert "explorer_guess" not in at.query_params  # a shared link arrives unanswered
    at.button(key="explorer_quiz_add").click().run()  # then its curve joins the chart
    assert "float16" in _state(at, "dtypes") and not at.exception


# (widget key, new value): every control on the page.
CONTROL_CHANGES = [
    ("fn", "reciprocal"),
    ("fn", "custom"),
    ("fn", "complex_step_classic"),
    ("x", 1e-10),
    ("x", -2.5),
    ("x", 1.5),
    ("dtypes", ["float16", "bfloat16"]),
    ("dtypes", ["float32", "float64"]),
    ("schemes", ["five_point", "richardson"]),
    ("schemes", ["forward", "central", "complex_step"]),
    ("eps_auto", False),
    ("eps_range", (1e-12, 1e-2)),
    ("eps_auto", True),
    ("points", 201),
    ("error", "absolute"),
    ("theory", False),
    ("autograd", False),
    ("focus", "float64"),
    ("explorer_guess", "cbrt"),
]


@pytest.mark.parametrize(("key", "value"), CONTROL_CHANGES, ids=lambda v: str(v))
def test_changing_a_control_reruns_cleanly(page, key, value):
    page.get_by_key(key).set_value(value).run()
    assert not _exceptions(page), _exceptions(page)
    assert not page.error, [e.value for e in page.error]
    assert _state(page, key) == (tuple(value) if isinstance(value, list) else value)
    assert _charts(page) == 1


def test_picking_a_catalogue_function_moves_x_to_its_point():
    at = _open()
    before = at.session_state["x"]
    at.get_by_key("fn").set_value("sqrt_near_zero").run()
    assert at.session_state["x"] == 1e-4
    # ...and says so in one line where it happens, naming both points; once, not on every rerun.
    said = [c.value for c in at.caption if "moved x" in c.value]
    assert len(said) == 1 and f"from {before:g} to 0.0001" in said[0], said
    at.run()
    assert not [c.value for c in at.caption if "moved x" in c.value]


@pytest.mark.parametrize("preset", presets_for("explorer"), ids=lambda p: p.key)
def test_each_preset_button_sets_its_values(preset):
    at = _open({"x": "2.5", "points": "101"})
    at.button(key=f"preset_{preset.key}").click().run()
    assert not _exceptions(at) and not at.error
    for key, value in preset.values.items():
        assert _state(at, key) == value, key
    assert _charts(at) == 1


@pytest.mark.parametrize("preset", presets_for("explorer"), ids=lambda p: p.key)
def test_each_preset_url_restores_the_same_view(preset):
    at = _open(url_query(preset))  # the link the home gallery and the share button give
    assert not _exceptions(at) and not at.error
    for key, value in preset.values.items():
        assert _state(at, key) == value, key


def test_a_url_with_parameters_restores_every_control():
    at = _open({
        "fn": "custom (type it)", "expr": "1/x", "x": "0.3",
        "dtypes": ["float32", "float64"], "schemes": ["Central", "Forward"],
        "eps_range": ["1e-12", "1e+00"], "points": "101", "error": "absolute",
        "theory": "false", "autograd": "false", "focus": "float64",
    })
    assert not _exceptions(at) and not at.error
    assert at.session_state["fn"] == "custom"
    assert at.session_state["expr"] == "1/x"
    assert at.session_state["x"] == 0.3
    assert _state(at, "dtypes") == ("float32", "float64")
    assert _state(at, "schemes") == ("central", "forward")
    assert _state(at, "eps_range") == (1e-12, 1.0)
    assert at.session_state["points"] == 101
    assert at.session_state["error"] == "absolute"
    assert at.session_state["theory"] is False and at.session_state["autograd"] is False
    assert at.session_state["focus"] == "float64"
    assert _charts(at) == 1


def test_scheme_url_values_are_what_the_shared_widget_shows():
    names = tuple(widgets.SCHEME_OPTIONS)
    assert tuple(url_values("explorer", {"schemes": names})["schemes"]) == widgets.scheme_param(*names)


def test_a_hostile_expression_is_refused_with_a_message(tmp_path):
    marker = tmp_path / "pwned"
    at = _open({"fn": "custom (type it)"})
    at.get_by_key("expr").set_value(f"__import__('os').system('touch {marker}')").run()
    assert not _exceptions(at)
    assert at.error and _charts(at) == 0
    assert not marker.exists()


def test_an_unknown_function_is_named_in_the_error():
    at = _open({"fn": "custom (type it)", "expr": "frobnicate(x)"})
    assert not _exceptions(at) and _charts(at) == 0
    assert any("frobnicate" in e.value for e in at.error)


def test_eps_min_not_below_eps_max_is_an_error():
    at = _open({"eps_auto": "false"})
    at.get_by_key("eps_range").set_value((1e-5, 1e-5)).run()
    assert not _exceptions(at) and _charts(at) == 0
    assert any("eps-min" in e.value for e in at.error)


def test_x_outside_the_domain_warns_and_still_shows_the_page():
    at = _open({"fn": "custom (type it)", "expr": "log(x)", "x": "-1.0"})
    assert not _exceptions(at) and not at.error
    said = [shown(w.value) for w in at.warning]
    assert sum("no exact derivative" in w.lower() or "no exact reference" in w.lower() for w in said) == 1, said
    assert _charts(at) == 1  # a chart with a message, not a blank page


def _page_texts(at: AppTest) -> list[str]:
    """Every sentence element on the page as read: boxes, markdown, captions."""
    return [shown(e.value) for kind in ("warning", "info", "success", "error", "markdown", "caption")
            for e in getattr(at, kind)]


def test_the_kink_preset_says_there_is_no_exact_derivative_once_and_draws_only_what_it_says():
    """abs(x) at 0: no error exists, so nothing on screen speaks of one: the chart's title names
    estimates, no error switch, bands, stars or marked step, no best-step quiz."""
    (kink,) = [p for p in presets_for("explorer") if p.key == "kink"]
    at = _open(url_query(kink))
    assert not _exceptions(at) and _charts(at) == 1
    texts = _page_texts(at)
    assert sum("no exact derivative" in t.lower() or "no exact reference" in t.lower() for t in texts) == 1, texts
    assert not any(word in t for t in texts for word in ("Bands", "Stars", "best step", "Large dots")), texts
    assert not any(k in at.session_state for k in ("explorer_guess",))  # no quiz asked
    assert [r for r in at.radio if r.key == "error"] == []  # no relative/absolute switch: no error
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    titles = [a["text"] for a in figure["layout"]["annotations"] if a.get("name") == "y-title"]
    assert titles == ["estimate of f′(x): what each method returns"]
    assert "title" not in figure["layout"].get("yaxis", {}) or not figure["layout"]["yaxis"]["title"].get("text")


def test_a_dtype_that_overflows_is_reported():
    at = _open({"fn": "exp at large x", "x": "20.0", "dtypes": ["float16", "float32"]})
    assert not _exceptions(at) and not at.error
    assert any("overflows float16" in w.value for w in at.warning)
    assert _charts(at) == 1


def test_notes_are_shown_by_the_level_the_engine_gave_them():
    # float16 has no complex partner: an info; e**20 = 4.9e8 overflows float16 (max 65504): a warning.
    at = _open({"fn": "exp at large x", "x": "20.0", "dtypes": ["float16"],
                "schemes": ["Central", "Complex step"]})
    assert not _exceptions(at) and not at.error
    infos = " ".join(i.value for i in at.info)
    warnings = " ".join(w.value for w in at.warning)
    assert "not applicable" in infos and "not applicable" not in warnings
    assert "overflows float16" in warnings and "overflows float16" not in infos


def test_no_dtype_selected_asks_for_one():
    at = _open()
    at.get_by_key("dtypes").set_value([]).run()
    assert not _exceptions(at) and _charts(at) == 0
    assert any("dtype" in w.value for w in at.warning)


def test_the_8_bit_preset_labels_emulation_in_the_legend_and_says_how_it_is_computed():
    from gradlab.teaching.presets import preset

    at = _open(url_query(preset("explorer", "fp8")))
    assert not _exceptions(at) and not at.error
    assert _state(at, "dtypes") == ("float8_e4m3fn", "float8_e5m2", "float32")
    (chart,) = at.get("plotly_chart")
    names = {t.get("name") for t in json.loads(chart.proto.spec)["data"]}
    assert {"float8_e4m3fn (emulated) · central", "float8_e5m2 (emulated) · forward",
            "float32 · central"} <= names
    infos = shown(" ".join(i.value for i in at.info))
    assert ("8-bit floats are emulated: x, x + h and every function value are rounded to the format; "
            "arithmetic in between is float32.") in infos
    answer = shown(at.info[0].value)
    assert "float8_e4m3fn central difference is off by" in answer and "ε^(2/3)" not in answer
    # the theory under the chart, not in the answer (there it made five lines at 1280 px)
    assert any("float8_e4m3fn central ε^(2/3) = 25 %" in shown(c.value) for c in at.caption)


def test_without_an_8_bit_dtype_there_is_no_emulation_note(page):
    assert not any("emulated" in i.value for i in page.info)


# ------------------------------------------------------------- each preset's answer and chart agree

import base64  # noqa: E402
import re  # noqa: E402

import numpy as np  # noqa: E402

from gradlab.numerics.schemes import get_scheme  # noqa: E402
from gradlab.step_sweep.regimes import REGIMES  # noqa: E402


def _array(data) -> np.ndarray:
    """A figure's array as sent to the browser: a list (None: a gap), or Plotly's typed array."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"]).astype(float)
    return np.array([np.nan if v is None else v for v in data], dtype=float)


_BOUND = r"within (its rounding \(([\d.e-]+)\)|[\d.e-]+)"
_CLAUSE = re.compile(rf"the (\S+) ([\w -]+?) (?:difference|estimate) (?:is )?{_BOUND}")
#: one scheme for every dtype, named once: "the central difference is within 7e-6 in float32 and ..."
_SHARED = re.compile(rf"the ([\w -]+?) (?:difference|estimate) is ((?:{_BOUND} in \S+?(?:, | and ))*{_BOUND} in \S+?) \(")


def _clauses(text: str) -> list[tuple[str, str, str, str]]:
    """(dtype, scheme's curve label, bound, rounding or '') of each "within" the answer says."""
    if shared := _SHARED.search(text):
        label = shared.group(1)
        return [(d, label, b, r) for b, r, d in re.findall(rf"{_BOUND} in ([\w]+)", shared.group(2))]
    return [(d, label, b, r) for d, label, b, r in _CLAUSE.findall(text)]


@pytest.mark.parametrize("preset", [p for p in presets_for("explorer") if p.key != "kink"], ids=lambda p: p.key)
def test_each_presets_answer_says_what_its_chart_draws(preset):
    """issue 37: every curve the answer names is drawn; each "within E" is a bound the chart shows
    reached (a point of that curve at most E; with "at its best step (h ≈ S)", within a decade of
    S, since E is the median error over the decade around the best step); "its rounding" is the
    dtype's unit round-off (numpy's eps / 2); the answer's error kind is the axis's; the regimes
    the answer names are the bands drawn, one band pair per split curve."""
    at = _open(url_query(preset))
    assert not _exceptions(at)
    (box,) = [c for c in at.main.children.values() if _key(c) == "gl-answer"]
    text = shown(next(iter(box.children.values())).value)
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    curves = {(t["meta"]["dtype"], get_scheme(t["meta"]["scheme"]).curve_label): t
              for t in figure["data"] if t.get("meta", {}).get("kind") == "sweep"}
    clauses = _clauses(text)
    assert clauses, text
    step = re.search(r"At its best step \(h ≈ ([\d.e-]+)\)", text)
    for dtype, label, bound, rounding in clauses:
        curve = curves[(dtype, label)]  # named, so drawn
        x, y = _array(curve["x"]), _array(curve["y"])
        if rounding:
            assert float(rounding) == float(f"{np.finfo(dtype).eps / 2:.0e}"), (dtype, rounding)
            continue
        near = (x >= float(step.group(1)) / 10) & (x <= float(step.group(1)) * 10) if step else np.isfinite(x)
        assert np.nanmin(y[near]) <= float(bound), (dtype, label, bound, np.nanmin(y[near]))
    title = next(a["text"] for a in figure["layout"]["annotations"] if a.get("name") == "y-title")
    assert ("relative error" in text) == title.startswith("relative error"), (text, title)
    bands = {s["name"] for s in figure["layout"].get("shapes", []) if str(s.get("name", "")).split(" · ")[0] in REGIMES}
    split = {name.split(" · ")[1] for name in bands}
    assert (REGIMES[0] in text.lower() and REGIMES[1] in text.lower()) == bool(bands), (text, bands)
    assert len(bands) == 2 * len(split) and all((d, get_scheme(s).curve_label) in curves
                                                for d, s in (n.split(" ") for n in split))
