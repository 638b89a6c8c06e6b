"""The glossary: every term the pages use has one plain sentence, not circular, ready for help=."""

import re

import pytest

from gradlab.teaching.glossary import GLOSSARY, define, definition

#: The terms a second-year student meets on the pages, each defined where it first appears.
REQUIRED = (
    "ulp", "unit round-off", "round-off error", "truncation error", "rho", "holomorphic",
    "Richardson extrapolation", "atol", "rtol", "relative_perturbation", "VJP", "JVP",
    "central difference", "forward difference", "machine epsilon", "catastrophic cancellation",
)


def test_every_required_term_is_defined():
    assert set(REQUIRED) <= set(GLOSSARY)


@pytest.mark.parametrize("term", sorted(GLOSSARY))
def test_definition_is_one_plain_sentence(term):
    text = GLOSSARY[term]
    assert text.strip() == text and len(text) > 20
    assert text.endswith(".")
    # One sentence: no full stop followed by a new sentence inside it.
    assert not re.search(r"\.\s+[A-Z]", text), text
    # Plain words: no Markdown or LaTeX that help= texts would render.
    assert not re.search(r"[$*_`\\]", text.replace("relative_perturbation", "")), text


@pytest.mark.parametrize("term", sorted(GLOSSARY))
def test_no_term_is_defined_in_terms_of_itself(term):
    assert term.lower() not in GLOSSARY[term].lower()


def test_define_is_term_colon_definition():
    assert define("rtol") == "rtol: " + definition("rtol")


def test_unknown_term_names_the_known_ones():
    with pytest.raises(KeyError, match="known terms: ulp"):
        definition("ulps")


def test_machine_epsilon_figures_are_the_float32_ones():
    # float32 has 23 stored fraction bits: eps = 2**-23 ≈ 1.19e-7, unit round-off = eps / 2 ≈ 6e-8.
    assert "2^-23" in GLOSSARY["machine epsilon"] and "1.2e-7" in GLOSSARY["machine epsilon"]
    quoted = [float(n) for n in re.findall(r"\d+(?:\.\d+)?e-\d+", GLOSSARY["unit round-off"])]
    assert quoted == [pytest.approx(2.0 ** -24, rel=0.01)]


def test_the_grids_terms_link_to_its_definitions_and_the_page_has_that_anchor():
    from pathlib import Path

    from gradlab.teaching.glossary import GRID_DEFINITIONS, term

    for name in ("ulp", "unit round-off", "machine epsilon"):
        assert f"]({GRID_DEFINITIONS})" in term(name)
    assert "](" not in term("rtol")  # other terms are defined in place
    page = (Path(__file__).resolve().parents[1] / "pages" / "grid.py").read_text()
    assert 'anchor="definitions"' in page and GRID_DEFINITIONS.startswith("/grid#")
