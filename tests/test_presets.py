"""The preset registry: one table for every page, its URL form, and words a visitor can read.

That each preset's URL sets every widget to the preset's value is checked against the
real pages in tests/test_app_pages.py (test_each_preset_url_sets_every_value).
"""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError

import pytest

from gradlab.teaching import presets as registry
from gradlab.teaching.presets import PRESETS, gallery, preset, presets_for, url_query, url_values
from gradlab.ui.controls import format_eps
from gradlab.ui.navigation import PAGES, page_by_url

# An internal question number ("seed 000", "Seed 001", "seed002") or a key-like name
# ("scipy_dx_1e-6", "seed001_float64") must not reach a visitor.
INTERNAL_WORDS = re.compile(r"seed\s*_?0\d\d|\w+_\w+_|^\w+_\w+$", re.IGNORECASE)
QUESTION_PAGES = ("roundoff", "gradcheck", "network", "backward")


def test_presets_name_listed_pages_and_keys_are_unique_per_page():
    """Home has none; a new page may start without any (docs/ARCHITECTURE.md, "A lab")."""
    for spec in PAGES:
        keys = [p.key for p in presets_for(spec.url_path)]
        assert len(keys) == len(set(keys)), spec.url_path
        assert not (keys and spec.default), spec.url_path
    assert all(page_by_url(p.page) is not None for p in PRESETS)
    assert {"explorer", "gradcheck", "roundoff", "network", "backward", "grid", "summed"} <= {p.page for p in PRESETS}


def test_the_gallery_asks_each_question_first_and_covers_every_page_with_presets():
    cards = gallery()
    assert [p.page for p in cards[:4]] == list(QUESTION_PAGES)
    assert {p.page for p in cards} == {p.page for p in PRESETS}
    assert len({p.label for p in cards}) == len(cards)  # a card's link is found by its label


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: f"{p.page}-{p.key}")
def test_words_a_visitor_reads_say_what_they_ask(p):
    for text in (p.label, p.question, p.note):
        assert text.strip() and not INTERNAL_WORDS.search(text), text
        assert "**" not in text  # shown as Markdown: no accidental bold
    assert p.question.endswith("?")


def test_a_preset_is_frozen():
    p = PRESETS[0]
    with pytest.raises(FrozenInstanceError):
        p.label = "x"
    with pytest.raises(TypeError):
        p.values["dtype"] = "float64"


def test_lookup_names_the_known_keys():
    assert preset("network", "float16").page == "network"
    with pytest.raises(KeyError, match="float16"):
        preset("network", "seed001")


def test_url_form_is_what_the_widgets_show():
    # The shared widgets' own formatting: labels for schemes, 1e-06 for steps.
    assert url_values("explorer", {"schemes": ("five_point", "complex_step")}) == {
        "schemes": ["5-point", "Complex step"]}
    assert url_values("gradcheck", {"scheme": "forward"}) == {"scheme": "Forward"}
    for step in (1e-6, 2e-3, 1.0, 1e-20):
        assert url_values("network", {"dx": step}) == {"dx": format_eps(step)}
    # Plain values: as text; booleans as the toggles read them; ranges as one entry each.
    assert url_values("gradcheck", {"numeric64": True, "samples": 5, "shape": "140x120"}) == {
        "numeric64": "true", "samples": "5", "shape": "140x120"}
    assert url_values("explorer", {"fn": "reciprocal", "x": 1e-4, "eps_range": (1e-16, 1.0)}) == {
        "fn": "1/x", "x": "0.0001", "eps_range": ["1e-16", "1e+00"]}


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: f"{p.page}-{p.key}")
def test_a_link_carries_every_value_and_no_preset_name(p):
    query = url_query(p)
    assert set(query) == set(p.values)
    assert "preset" not in query  # a link names the values, never the preset


# The four questions GradLab started from, quoted verbatim: the lines each question preset takes
# its values from (kept here, so the test needs nothing outside the repository).
# "PyTorch gradient differs from manually calculated gradient" (asked Nov 13 '18):
RECIPROCAL_QUESTION = ("I use the formula grad(1/x, x) = -1/x**2.",
                       "print(a.grad - (-1/(a**2)))",
                       "tensor(5.9605e-08, grad_fn=<ThAddBackward>)")
# "Gradients are different on single and double precision", its single-precision run:
CHECK_QUESTION = ("out = (x+1)/2",
                  'loss_function =nn.MSELoss(reduction="sum")',
                  "input_tensor = torch.randn(140, 120, requires_grad=True)")
# "How to use PyTorch to calculate the gradients of outputs w.r.t. the inputs in a neural
# network?" (asked Aug 03 '18):
NETWORK_QUESTION = ("x_test = torch.randn(D_in,requires_grad=True)", "idx = 3",
                    "print(derivative(fun, x0, dx=1e-6))")
# "Pytorch, what are the gradient arguments", its Example 1:
VJP_QUESTION = ("a = torch.tensor([1.0, 2.0, 3.0], requires_grad = True)",
                "b = torch.tensor([3.0, 4.0, 5.0], requires_grad = True)",
                "c = torch.tensor([6.0, 7.0, 8.0], requires_grad = True)",
                "gradients = torch.FloatTensor([0.1, 1.0, 0.0001])")


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)]


def test_the_question_presets_hold_the_questions_values():
    # Values read from the questions' own lines above, not from the code. A tensor made without
    # a dtype (torch.randn(...), torch.tensor([...])) is torch's default, float32.
    check = preset("gradcheck", "float32_check_fails").values
    model, loss, data = CHECK_QUESTION
    assert model == "out = (x+1)/2" and check["model"] == "affine"  # x/2 + 1/2
    assert "MSELoss" in loss and check["loss"] == "mse"
    assert check["reduction"] == re.search(r'reduction="(\w+)"', loss).group(1) == "sum"
    assert check["shape"] == "x".join(f"{n:g}" for n in _numbers(data.split("randn")[1])) == "140x120"
    assert "dtype" not in data and check["dtype"] == "float32"
    net = preset("network", "scipy_derivative").values
    inputs, index, call = NETWORK_QUESTION
    assert "dtype" not in inputs and net["dtype"] == "float32"
    assert net["idx"] == int(_numbers(index)[0]) == 3
    assert net["dx"] == float(re.search(r"dx=([\d.e-]+)", call).group(1)) == 1e-6
    vjp = preset("backward", "gradient_argument").values
    assert [_numbers(vjp[k]) for k in "abcv"] == [_numbers(line.split("(", 1)[1]) for line in VJP_QUESTION]
    formulas = preset("roundoff", "reciprocal_formulas").values
    formula, compared, printed = RECIPROCAL_QUESTION
    assert "a.grad" in compared and formulas["a"] == "autograd"
    assert formulas["b"] == re.search(r"= (\S+)\.$", formula).group(1) == "-1/x**2"
    # the difference printed is 2**-24, half float32's eps (float64's would be some 1e-16)
    assert f"{2.0 ** -24:.4e}" in printed and formulas["dtype"] == "float32"


def test_round_off_presets_come_from_the_engines_comparisons():
    from gradlab.labs.roundoff.engine import COMPARISONS

    used = {(p.values["a"], p.values["b"], p.values["dtype"]) for p in presets_for("roundoff")}
    assert used == {(c.settings.formula_a, c.settings.formula_b, c.settings.dtype)
                    for c in COMPARISONS.values()}


@pytest.mark.server  # starts a process
def test_the_registry_imports_no_streamlit():
    import subprocess
    import sys

    code = "import sys, gradlab.teaching.presets; print('streamlit' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=registry.__file__.rsplit("/gradlab/", 1)[0])
    assert done.stdout.strip() == "False", done.stderr
