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


def test_every_page_but_home_has_presets_and_keys_are_unique_per_page():
    for spec in PAGES:
        keys = [p.key for p in presets_for(spec.url_path)]
        assert len(keys) == len(set(keys)), spec.url_path
        assert bool(keys) == (not spec.default), spec.url_path
    assert all(page_by_url(p.page) is not None for p in PRESETS)


def test_the_gallery_asks_each_question_first_and_covers_every_page():
    cards = gallery()
    assert [p.page for p in cards[:4]] == list(QUESTION_PAGES)
    assert {p.page for p in cards} == {s.url_path for s in PAGES if not s.default}
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


def test_the_question_presets_hold_the_questions_values():
    # Values from the four questions themselves (../shared/seeds), not from the code.
    check = preset("gradcheck", "float32_check_fails").values
    assert (check["model"], check["shape"], check["loss"], check["reduction"], check["dtype"]) == (
        "affine", "140x120", "mse", "sum", "float32")
    net = preset("network", "scipy_derivative").values
    assert (net["dtype"], net["dx"], net["idx"]) == ("float32", 1e-6, 3)
    vjp = preset("backward", "gradient_argument").values
    assert (vjp["a"], vjp["b"], vjp["c"], vjp["v"]) == ("1, 2, 3", "3, 4, 5", "6, 7, 8", "0.1, 1, 0.0001")
    formulas = preset("roundoff", "reciprocal_formulas").values
    assert (formulas["a"], formulas["b"], formulas["dtype"]) == ("autograd", "-1/x**2", "float32")


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
