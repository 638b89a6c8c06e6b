"""Words a user reads never name an internal question number ("Seed 001: ...").

The four questions GradLab grew from are numbered in the design notes; a visitor, a CLI user
or a reader of the README knows them by what they ask ("the float32 MSE-sum check question").
Checked where the words are shown: every page's default view as Streamlit renders it (every
string of every element, help texts included), the CLI's --help of every command, the README
and docs, and the sources the rest is built from.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

from gradlab.cli.main import build_parser
from gradlab.ui.navigation import PAGES

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"seed[\s_-]*00\d", re.IGNORECASE)


def _strings(message: Message):
    """Every string field of a protobuf message and of the messages inside it."""
    for _, value in message.ListFields():
        values = [value] if isinstance(value, str | bytes | int | float | Message) else value  # repeated
        for v in values:
            if isinstance(v, str):
                yield v
            elif isinstance(v, Message):
                yield from _strings(v)


def _rendered(node):
    """Every string of every element under ``node`` of an AppTest tree."""
    proto = getattr(node, "proto", None)
    if isinstance(proto, Message):
        yield from _strings(proto)
    for child in getattr(node, "children", {}).values():
        yield from _rendered(child)


def test_the_pattern_finds_the_wording_it_forbids():
    assert all(INTERNAL.search(t) for t in ("Seed 001: MSELoss", "# seed 001:", "seed-002", "seed_003"))
    assert not INTERNAL.search("seed 0 rebuilds the question's numbers")


@pytest.mark.parametrize("spec", PAGES, ids=lambda s: s.url_path or "home")
def test_no_page_shows_an_internal_question_number(spec):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(spec.path).run()
    assert not at.exception
    texts = list(_rendered(at.main)) + list(_rendered(at.sidebar))
    assert len(texts) > 10  # the page was drawn
    assert not [t for t in texts if INTERNAL.search(t)]


def _help_texts(parser: argparse.ArgumentParser):
    yield parser.format_help()
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its sub-commands only here
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                yield from _help_texts(sub)


def test_no_cli_help_names_an_internal_question_number():
    texts = list(_help_texts(build_parser()))
    assert len(texts) >= 4  # the parser and its sub-commands
    assert not [t for t in texts if INTERNAL.search(t)]


def test_the_readme_docs_and_sources_never_name_an_internal_question_number():
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "gradlab").rglob("*.py"),
             *(ROOT / "pages").glob("*.py"), ROOT / "app.py", *(ROOT / "benchmarks").glob("*.py"),
             *(ROOT / "harness").glob("*.py")]
    found = [f"{f.relative_to(ROOT)}:{n}: {line.strip()}"
             for f in files for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
             if INTERNAL.search(line)]
    assert not found, found
