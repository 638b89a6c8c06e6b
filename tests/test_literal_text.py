"""Visitor text shown by the pages reads as itself: never Markdown, HTML, LaTeX or a link."""

from __future__ import annotations

import html
import re
import string

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from gradlab.labs.roundoff import figures as roundoff_figures
from gradlab.literal_text import markdown_code, markdown_literal, plotly_literal

PUNCTUATION = set(string.punctuation)
# Text with every Markdown-significant character and the words that start links.
visitor_text = st.lists(
    st.sampled_from(list(string.printable) + ["https://", "www.", "mailto:", "é", "∂", "\u200b"]),
    max_size=40,
).map(lambda parts: "".join(parts).replace("\r", "").replace("\x0b", "").replace("\x0c", ""))


def _shown(markdown: str) -> str:
    """What CommonMark shows for text made only of code spans and backslash escapes."""
    out, i = [], 0
    while i < len(markdown):
        if markdown[i] == "`":
            fence = re.match("`+", markdown[i:]).group()
            end = markdown.index(fence, i + len(fence))
            body = markdown[i + len(fence):end]
            if body.startswith(" ") and body.endswith(" ") and body.strip():
                body = body[1:-1]
            out.append(body)
            i = end + len(fence)
        elif markdown[i] == "\\":
            assert markdown[i + 1] in PUNCTUATION
            out.append(markdown[i + 1])
            i += 2
        else:
            assert markdown[i] not in PUNCTUATION, f"unescaped {markdown[i]!r} in {markdown!r}"
            out.append(markdown[i])
            i += 1
    return "".join(out)


def _outside_code(markdown: str) -> str:
    """The text outside code spans; an escaped backtick (\\`) opens none, as in CommonMark."""
    out, i = [], 0
    while i < len(markdown):
        if markdown[i] == "\\" and i + 1 < len(markdown):
            out.append(markdown[i:i + 2])
            i += 2
        elif markdown[i] == "`":
            fence = re.match("`+", markdown[i:]).group()
            end = markdown.find(fence, i + len(fence))
            if end < 0:  # no closing fence: the backticks are literal
                out.append(fence)
                i += len(fence)
            else:
                i = end + len(fence)
        else:
            out.append(markdown[i])
            i += 1
    return "".join(out)


@given(visitor_text)
def test_markdown_literal_shows_the_text_as_typed(text):
    assert _shown(markdown_literal(text)) == text


@given(visitor_text)
def test_nothing_linkable_stands_outside_code(text):
    plain = _outside_code(markdown_literal(text))
    assert "://" not in plain.replace("\\", "")
    assert "www." not in plain.replace("\\", "").lower()
    assert "@" not in plain.replace("\\", "")


def test_the_issue_payloads_become_text():
    assert markdown_literal("Login [here](https://evil.example/phish)") == \
        "Login `[here](https://evil.example/phish)`"
    assert markdown_literal("![t](x.png) $\\href{a}{b}$ :red[x] <b>") == \
        r"\!\[t\]\(x\.png\) \$\\href\{a\}\{b\}\$ \:red\[x\] \<b\>"


def test_code_span_fence_outgrows_backticks_inside():
    assert markdown_code("a``b") == "``` a``b ```"
    assert _shown(markdown_code("a``b")) == "a``b"


@given(visitor_text)
def test_plotly_literal_is_entities_only(text):
    escaped = plotly_literal(text)
    assert not set("<>%\"'") & set(escaped)
    assert html.unescape(escaped) == text


def test_round_off_figures_show_a_formula_with_markup_as_text():
    label = "<a href='https://evil.example'>x</a>"
    table = pd.DataFrame({"x": [0.5, 0.25], "ulps_a_exact": [0.1, 0.6], "ulps_b_exact": [0.3, 0.2],
                          "bits_a": [0, 1], "bits_b": [0, 1], "ulps_a_b": [0, 1]})
    figures = [roundoff_figures.error_histogram(table, label, "b"), roundoff_figures.error_by_x(table, label, "b")]
    for fig in figures:
        text = fig.to_json() if hasattr(fig, "to_json") else str(fig.to_dict())
        assert "<a" not in text and "evil.example'>" not in text
        assert "&lt;a href=" in text
