"""Every term a page defines in a hover (a widget's or a metric's help) is also under "Words on this
page" at its end, where a phone, which has no hover, can read it (issue 37)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_text import shown
from gradlab.teaching.glossary import GLOSSARY, PAGE_TERMS
from gradlab.ui.navigation import PAGES

APP = str(Path(__file__).resolve().parents[1] / "app.py")
# start_page names the default page "" (its URL is the bare address)
SCRIPTS = {"" if spec.default else spec.url_path: spec.path for spec in PAGES}


def _open(path: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    return at.switch_page(SCRIPTS[path]).run() if path else at


def _helps(node) -> list[str]:
    """Every help text under ``node`` (widgets, metrics, markdown with a help icon)."""
    found = []
    proto = getattr(node, "proto", None)
    text = getattr(proto, "help", "") if proto is not None else ""
    if isinstance(text, str) and text:
        found.append(text)
    for child in getattr(node, "children", {}).values() if hasattr(node, "children") else ():
        found += _helps(child)
    return found


@pytest.mark.parametrize("path", list(PAGE_TERMS))
def test_every_hovered_definition_is_also_listed_at_the_pages_end(path):
    at = _open(path)
    assert not at.exception
    hovered = " ".join(_helps(at.main))
    defined_in_hovers = {name for name, sentence in GLOSSARY.items() if sentence in hovered}
    assert defined_in_hovers <= set(PAGE_TERMS[path]), defined_in_hovers - set(PAGE_TERMS[path])
    (words,) = [e for e in at.expander if e.label == "Words on this page"]
    listed = " ".join(shown(m.value) for m in words.markdown).replace("**", "")
    for name in PAGE_TERMS[path]:
        assert f"{name.replace('_', ' ')}: {GLOSSARY[name]}" in listed, name


def test_every_page_lists_its_words():
    assert set(PAGE_TERMS) == set(SCRIPTS)
