"""AppTest for the three teaching pages: open cleanly, presets, URL restore, bad input -> st.error."""

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from app_text import shown
from reading_order import ANSWER, CHART, reading_order

from gradlab.teaching.presets import PRESETS, preset, presets_for, url_query

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TEACHING_PAGES = ("pages/roundoff.py", "pages/network.py", "pages/backward.py")
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
    at.button(key="preset_reciprocal_formulas").click().run()
    assert at.text_input(key="a").value == "autograd" and at.text_input(key="b").value == "-1/x**2"
    assert at.selectbox(key="dtype").value == "float32" and at.selectbox(key="dist").value == "normal"
    assert at.number_input(key="low").value == -1.0 and at.number_input(key="high").value == 1.0
    assert any("neither is always the closer" in c.value for c in at.caption)  # the view is the preset
    assert _clean(at)
    at.text_input(key="b").set_value("sqrt(x").run()
    assert not at.exception and at.error and "syntax" in at.error[0].value


def test_roundoff_preset_from_its_url():
    at = _open("pages/roundoff.py", url_query(preset("roundoff", "log1p")))
    assert _clean(at)
    assert at.text_input(key="a").value == "log(1+x)" and at.text_input(key="b").value == "log1p(x)"
    assert at.selectbox(key="dist").value == "log-uniform" and at.number_input(key="low").value == 1e-8


def test_network_preset_and_url_and_bad_input():
    at = _open("pages/network.py", {"dtype": "float64", "act": "gelu"})
    assert _clean(at)
    assert at.selectbox(key="dtype").value == "float64" and at.selectbox(key="act").value == "gelu"
    at.button(key="preset_float16").click().run()
    assert at.selectbox(key="dtype").value == "float16" and at.select_slider(key="dx").value == 1e-3
    assert at.select_slider(key="range").value == (1e-6, 1.0) and at.selectbox(key="act").value == "tanh"
    assert _clean(at)
    at.button(key="preset_scipy_derivative").click().run()
    assert at.selectbox(key="dtype").value == "float32" and at.select_slider(key="dx").value == 1e-6
    assert _clean(at)
    at.text_input(key="hidden").set_value("32, lots").run()
    assert not at.exception and at.error and "layer width" in at.error[0].value
    assert at.number_input(key="seed") and at.select_slider(key="range")  # the panel stays whole
    at.text_input(key="hidden").set_value("32").run()
    at.number_input(key="idx").set_value(20).run()
    assert not at.exception and at.error and "input index" in at.error[0].value


def test_backward_preset_steps_url_and_bad_input():
    at = _open("pages/backward.py", {"v": "1, 1, 1", "steps": "br,b,b"})
    assert not at.exception and not at.error
    assert at.text_input(key="v").value == "1, 1, 1"
    assert any("second time" in shown(w.value) for w in at.warning)  # PyTorch's message, not an exception
    at.button(key="preset_gradient_argument").click().run()
    assert at.text_input(key="v").value == "0.1, 1, 0.0001" and at.text_input(key="steps").value == ""
    assert _clean(at)
    at.text_input(key="c").set_value("6, 0, 8").run()
    assert not at.exception and at.error and "c > 0" in shown(at.error[0].value)


def _answer_text(at: AppTest) -> str:
    from reading_order import ANSWER, reading_order

    (box,) = dict(reading_order(at.main))[ANSWER].children.values()
    return shown(box.value)


def _section_two_grads(at: AppTest) -> list[str]:
    """Section 2's printed .grad lines ("`a.grad` = [0.6, 6, 0.0006] · ..."), as read."""
    return [shown(m.value) for m in at.markdown if shown(m.value).startswith("a.grad = ")]


def test_the_backward_answer_speaks_of_the_steps_section_two_shows_and_follows_them():
    """issue 37: the "Backward twice" preset's answer said a.grad = [0.3, 3, 0.0003] above a step
    list ending in [0.6, 6, 0.0006]. The answer now states what the steps leave, and a step button
    (a fragment of its own) updates the answer too."""
    at = _open("pages/backward.py", {"steps": "br,b,b"})
    assert _clean(at)
    said = _answer_text(at)
    last_ok = _section_two_grads(at)[-1]  # a.grad after the last step PyTorch ran
    assert "a.grad = [0.6, 6, 0.0006]" in said and last_ok.startswith("a.grad = [0.6, 6, 0.0006]"), (said, last_ok)
    assert "2 × one backward's" in said and "Step 3 is refused: the backward before it freed the graph" in said
    assert not [r for r in at.radio if r.key == "backward_guess"]  # the answer above tells it: no quiz
    assert at.text_input(key="steps").value == "br,b,b"  # the codes stay in their popover and the URL
    assert any(shown(m.value) == "Steps: backward(v, retain) → backward(v) → backward(v)." for m in at.markdown)
    at.button(key="step-reset").click().run()
    assert _clean(at) and _answer_text(at).startswith("y.backward(v) weights each output's derivative")
    at.button(key="step-br").click().run()
    at.button(key="step-br").click().run()
    assert _clean(at) and "a.grad = [0.6, 6, 0.0006]" in _answer_text(at), _answer_text(at)


# Quiz answers (a guess before the reveal) are not part of a view: never in a URL.
QUIZZES = [
    ("pages/roundoff.py", "roundoff_guess", "ulps"),
    ("pages/network.py", "network_guess", "float64"),
    ("pages/backward.py", "backward_guess", "6v"),
]


@pytest.mark.parametrize(("page", "key", "answer"), QUIZZES, ids=[q[1] for q in QUIZZES])
def test_a_quiz_answer_stays_out_of_the_url(page, key, answer):
    at = _open(page, {key: answer, "guess": answer})
    assert _clean(at) and at.radio(key=key).value is None  # a URL cannot answer for the visitor
    at = _open(page)
    at.radio(key=key).set_value(answer).run()
    assert _clean(at) and at.radio(key=key).value == answer
    # The browser writes a URL widget's value into the address bar (AppTest does not):
    # the radio must not be kept in the URL at all.
    assert not at.radio(key=key).proto.query_param_key
    assert answer not in [v for k in at.query_params for v in at.query_params.get_all(k)], (
        dict(at.query_params))


def test_no_preset_sets_a_quiz_answer():
    quiz_keys = {key for _, key, _ in QUIZZES} | {"guess"}
    for p in PRESETS:
        assert not quiz_keys & set(url_query(p)), p.key


# The page skeleton: controls -> a frozen settings object -> a cached engine call ->
# render(result). A page is functions with docstrings and a short main block; layout work
# (with/for) and loose names such as c1..c8 or cols at module level mean it is a flat script again.
MAIN_BLOCK_STATEMENTS = 12


@pytest.mark.parametrize("page", TEACHING_PAGES)
def test_page_is_functions_and_a_short_main_block(page):
    tree = ast.parse((ROOT / page).read_text(encoding="utf-8"))
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert functions and all(ast.get_docstring(f) for f in functions), [
        f.name for f in functions if not ast.get_docstring(f)]
    assert not [n.lineno for n in tree.body if isinstance(n, ast.With | ast.For | ast.While)]
    last_def = max(n.lineno for n in functions)
    main = [n for n in tree.body if n.lineno > last_def and not isinstance(n, ast.FunctionDef)]
    assert 0 < len(main) <= MAIN_BLOCK_STATEMENTS
    loose = {t.id for n in tree.body if isinstance(n, ast.Assign) and n.lineno < last_def
             for t in ast.walk(n) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    assert all(name.isupper() for name in loose), loose  # module level holds constants only


@pytest.mark.parametrize("page", TEACHING_PAGES)
def test_the_engine_cache_is_keyed_on_a_frozen_settings_object(page):
    tree = ast.parse((ROOT / page).read_text(encoding="utf-8"))
    # a lab's view of the settings (gradlab.ui.views.lab_view: keyed on their text, shared read-only) ...
    views = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "lab_view"]
    # ... or st.cache_data, or st.cache_resource for a large result every session shares read-only
    cached = [f for f in tree.body if isinstance(f, ast.FunctionDef)
              and any(c in ast.unparse(d) for d in f.decorator_list for c in ("cache_data", "cache_resource"))]
    assert views or cached
    for call in views:
        assert len(call.args) == 2, ast.unparse(call)  # the lab's view and one settings object
    for f in cached:
        assert len(f.args.args) == 1 and f.args.args[0].annotation is not None, f.name


# ---------------------------------------------------------------- classroom first: Network, Backward

WIDGETS = {"selectbox", "text_input", "number_input", "select_slider", "button", "popover"}


def _reading_order(node) -> list:
    """The page's reading order with each popover as one item (closed until clicked)."""
    return reading_order(node, whole=("popover",))


@pytest.mark.parametrize("page", ["pages/network.py", "pages/backward.py"])
def test_the_answer_and_the_main_chart_come_right_after_the_controls(page):
    at = _open(page)
    assert _clean(at)
    items = _reading_order(at.main)
    order = [kind for kind, _ in items]
    a = order.index(ANSWER)
    assert order[a + 1] == CHART
    assert order[:2] == ["title", "markdown"] and set(order[2:a]) <= WIDGETS  # only controls before the answer
    boxes = dict(items)
    assert [c.type for c in boxes[ANSWER].children.values()] == ["success"]  # one sentence, nothing else
    assert [c.type for c in boxes[CHART].children.values()][0] == "plotly_chart"
    # the prediction comes after the chart, its reveal hidden until answered
    assert order.index("radio") > a + 1


def test_the_network_page_answers_with_the_questions_numbers():
    at = _open("pages/network.py")
    at.button(key="preset_scipy_derivative").click().run()
    assert _clean(at)
    answer = shown(at.success[0].value)
    assert answer.startswith("Autograd (-0.00952) is right") and "0.0149" in answer
    values = at.table[0].value
    # the table prints the scipy value as Python would: repr of the float
    assert "-0.014901161193847656" in values["value"].tolist()
    # autograd: the question's -0.009522666, to three significant digits (its last digits
    # are torch's float32 kernels' and may differ between CPUs)
    assert f"{float(values['value'][0]):.3g}" == f"{-0.009522666:.3g}" == "-0.00952"


def test_the_prediction_hides_its_reveal_until_answered():
    for page, key, answer, reveal in (("pages/network.py", "network_guess", "float64", "2⁻⁵⁴"),
                                      ("pages/backward.py", "backward_guess", "6v", "adds every backward")):
        at = _open(page)
        assert not any(reveal in shown(m.value) for m in [*at.success, *at.info])
        at.radio(key=key).set_value(answer).run()
        assert any(reveal in shown(m.value) for m in [*at.success, *at.info]), page


def test_the_backward_table_puts_the_answer_column_first():
    at = _open("pages/backward.py")
    table = at.table[0].value
    assert list(table.columns[:2]) == ["entry", ".grad"]
    grads = {entry: float(g) for entry, g in zip(table["entry"], table[".grad"])}
    # chain rule: a.grad = 3v, b.grad = 4bv, c.grad = v/c at the question's a, b, c and v
    assert grads["a[1]"] == pytest.approx(3.0) and grads["b[1]"] == pytest.approx(16.0)
    assert grads["c[2]"] == pytest.approx(0.0001 / 8, rel=1e-6)


def test_the_backward_torch_empty_section_shows_the_printout_its_words_explain():
    at = _open("pages/backward.py")
    codes = [c.value for c in at.code]
    question = next(c for c in codes if "torch.empty(1, requires_grad" in c)
    rebuilt = next(c for c in codes if "y.expand(3).backward(gradients)" in c)
    for line in ("print(a.grad) # tensor([3.3003])", "print(b.grad) # tensor([0.])", "print(c.grad) # tensor([inf])"):
        assert line in question and line in rebuilt  # GradLab prints what the question printed
    note = next(shown(m.value) for m in at.markdown if "torch.empty allocates" in shown(m.value))
    assert "b was 0" in note and "c was 0" in note and "cannot be read off" in note and "3.3003" in note


@pytest.mark.parametrize("key", [p.key for p in presets_for("network")])
def test_each_network_presets_best_steps_read_the_same_in_the_chart_and_the_words(key):
    """issue 37: the chart marked "best h ≈ 0.032" (the theory's) beside words saying "Best step in this
    sweep: h = 0.013". Each is now named for what it is, and both numbers read alike in both places."""
    import json
    import re

    (p,) = [q for q in presets_for("network") if q.key == key]
    at = _open("pages/network.py", url_query(p))
    assert _clean(at)
    (words,) = [shown(m.value) for m in at.markdown if shown(m.value).startswith("Best step in this sweep")]
    words = words.replace("**", "")  # bold marks
    best = re.search(r"Best step in this sweep: h = (\S+),", words).group(1)
    theory = re.search(r"\^\\ast = .*?: (\S+) for this network", words)
    assert "nan" not in words  # a ReLU network's h* is no number: said in words
    theory = theory.group(1) if theory else None
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (chart,) = [c for c in charts if any(str(t.get("name", "")).startswith("best in this sweep") for t in c["data"])]
    (star,) = [t["name"] for t in chart["data"] if str(t.get("name", "")).startswith("best in this sweep")]
    assert star == f"best in this sweep: h = {best}", (star, words)
    marks = [a["text"] for a in chart["layout"].get("annotations", []) if "h*" in a.get("text", "")]
    assert marks == ([f"theory's h* ≈ {theory}"] if theory else []), (marks, words)


def _vectors(text: str) -> dict[str, list[float]]:
    """Every "x.grad = [..]" a text prints, by tensor name: {"a": [0.3, 3, 0.0003], ...}."""
    import re

    return {name: [float(v) for v in values.split(", ")]
            for name, values in re.findall(r"\b(\w)\.grad = \[([^\]]+)\]", text)}


def _figure_values(trace) -> list[float]:
    import base64

    import numpy as np

    data = trace["x"]
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"]).tolist()
    return [float(v) for v in data if v is not None]


@pytest.mark.parametrize("key", [p.key for p in presets_for("backward")])
def test_each_backward_presets_answer_chart_and_steps_print_the_same_grads(key):
    """issue 37: the .grad vectors the answer prints are the chart's ".grad from y.backward(v)" bars
    (each tensor's three, in order) to the digits printed, and v times the chart's v = 1 bars; after
    the preset's steps, the answer's a.grad is the last step section 2 printed, and one backward's
    times the backwards that ran (2 for "backward twice")."""
    import json

    (p,) = [q for q in presets_for("backward") if q.key == key]
    at = _open("pages/backward.py", url_query(p))
    assert not at.exception
    said = _vectors(_answer_text(at))
    assert said, _answer_text(at)
    chart = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                 if any(t.get("name") == ".grad from y.backward(v)" for t in json.loads(c.proto.spec)["data"]))
    bars = {t["name"]: _figure_values(t) for t in chart["data"]}
    one = dict(zip("abc", (bars[".grad from y.backward(v)"][i:i + 3] for i in (0, 3, 6))))
    unit = dict(zip("abc", (bars["∂yᵢ/∂inputᵢ (v = 1)"][i:i + 3] for i in (0, 3, 6))))
    v = [float(x) for x in at.text_input(key="v").value.split(",")]
    runs = 1
    if at.text_input(key="steps").value:  # section 2's steps: the answer is what they leave
        printed = _vectors(_section_two_grads(at)[-1])
        assert said["a"] == printed["a"], (said, printed)
        runs = round(said["a"][1] / one["a"][1])
        assert runs == 2 and "2 × one backward's" in _answer_text(at)
    for name, values in said.items():
        assert values == pytest.approx([runs * g for g in one[name]], rel=5e-4), (name, values, one[name])
        assert one[name] == pytest.approx([vi * d for vi, d in zip(v, unit[name])], rel=1e-6)
