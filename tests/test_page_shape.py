"""Every page script has one shape: imports, then ``start_page(...)``, then controls -> settings ->
one cached call -> render, and one way to stop on an error (``gradlab.ui.messages.stop_with_error``).

The checks read each page's syntax tree (and its comments through ``tokenize``), so a string in a
docstring or a help text cannot satisfy or break them.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gradlab.ui.navigation import PAGES

REPO_ROOT = Path(__file__).resolve().parents[1]
PAGE_FILES = sorted({spec.path for spec in PAGES})


def _url_path(path: str) -> str:
    """The URL path the page passes to start_page: the default page's is ""."""
    spec = next(s for s in PAGES if s.path == path)
    return "" if spec.default else spec.url_path


def _tree(path: str) -> ast.Module:
    return ast.parse((REPO_ROOT / path).read_text(encoding="utf-8"), filename=path)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _is_start_page(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "start_page")


def _split(tree: ast.Module) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """(the leading imports, everything after them), the module docstring left out."""
    body = list(tree.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    n = 0
    while n < len(body) and isinstance(body[n], ast.Import | ast.ImportFrom):
        n += 1
    return body[:n], body[n:]


def _noqa_codes(source: str) -> list[tuple[int, str]]:
    """(line, comment) of every comment carrying a noqa for E402."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and "noqa" in tok.string and "E402" in tok.string:
            found.append((tok.start[0], tok.string))
    return found


@pytest.mark.parametrize("path", PAGE_FILES)
def test_the_first_statement_after_the_imports_is_start_page(path):
    _, rest = _split(_tree(path))
    assert rest, f"{path} has nothing after its imports"
    first = rest[0]
    assert _is_start_page(first), (
        f"{path}:{first.lineno}: the first statement after the imports is {ast.unparse(first)[:60]!r}, "
        "not start_page(...)")
    args = first.value.args
    assert len(args) == 1 and isinstance(args[0], ast.Constant), f"{path}: start_page takes the URL path literally"
    assert args[0].value == _url_path(path), f"{path} calls start_page({args[0].value!r})"


@pytest.mark.parametrize("path", PAGE_FILES)
def test_every_import_comes_before_start_page(path):
    _, rest = _split(_tree(path))
    late = [node.lineno for node in rest if isinstance(node, ast.Import | ast.ImportFrom)]
    assert late == [], f"{path}: module-level imports after start_page on lines {late}"
    assert sum(_is_start_page(node) for node in rest) == 1, f"{path} calls start_page more than once"


@pytest.mark.parametrize("path", PAGE_FILES)
def test_no_page_silences_e402(path):
    found = _noqa_codes((REPO_ROOT / path).read_text(encoding="utf-8"))
    assert found == [], f"{path}: {found}"


def test_the_noqa_finder_sees_a_comment_and_not_a_string():
    # The finder above must be able to fail: a real comment is found, the same words in a string are not.
    assert _noqa_codes("import os  # noqa: E402\n") == [(1, "# noqa: E402")]
    assert _noqa_codes("TEXT = '# noqa: E402'\n") == []


def _direct_stops(tree: ast.Module) -> list[int]:
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "stop"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "st"]


@pytest.mark.parametrize("path", PAGE_FILES)
def test_pages_stop_on_an_error_one_way(path):
    stops = _direct_stops(_tree(path))
    assert stops == [], f"{path} calls st.stop() on lines {stops}: use gradlab.ui.messages.stop_with_error"


def _page_that_stops(message):
    import streamlit as st

    from gradlab.errors import GradLabError
    from gradlab.ui.messages import stop_with_error

    st.write("before")
    if message == "exception":
        stop_with_error(GradLabError("The shape 0x3 has no elements."))
    elif message == "unexpected":
        stop_with_error(ZeroDivisionError("division by zero"))
    else:
        stop_with_error("Pick at least one dtype above.", level="warning")
    st.write("after")


@pytest.mark.parametrize("message", ["exception", "unexpected", "sentence"])
def test_stop_with_error_says_one_sentence_and_draws_nothing_below(message):
    from gradlab.literal_text import markdown_literal
    from gradlab.ui.messages import GENERIC_ERROR

    at = AppTest.from_function(_page_that_stops, args=(message,), default_timeout=30).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["before"]
    if message == "exception":
        # shown as literal text: the sentence often quotes what the visitor typed
        assert [e.value for e in at.error] == [markdown_literal("The shape 0x3 has no elements.")]
    elif message == "unexpected":
        assert [e.value for e in at.error] == [GENERIC_ERROR]  # never the exception's own text
    else:
        assert [w.value for w in at.warning] == ["Pick at least one dtype above."] and not at.error
