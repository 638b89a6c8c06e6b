"""Text a visitor typed, made safe to show: it reads as itself, never as markup.

Streamlit renders alert bodies, captions, metric labels and widget labels as
Markdown with extras (LaTeX between ``$``, ``:red[...]`` directives, bare URLs
turned into links), and Plotly renders a subset of HTML in titles, trace names
and hover text (``<a href>`` included). A message that echoes a visitor's text
(``The shape '[Login](https://…)' is not …``) would otherwise put the
visitor's link or image inside GradLab's own message box on a shared link.

Everything a page shows that may contain text from a URL or a text box goes
through one of these functions; the tests in ``tests/test_literal_text.py``
and ``tests/browser/test_injection_browser.py`` hold them to it.
"""

from __future__ import annotations

import html
import re
import string

# CommonMark: "any ASCII punctuation character may be backslash-escaped", and an
# escaped character is literal text. That covers links, images, emphasis, code,
# headings, lists, HTML, entities, LaTeX ($) and directives (:red[…]).
_MARKDOWN_SPECIAL = re.compile("([" + re.escape(string.punctuation) + "])")
# GFM's bare-URL links are found in the text *after* escapes are undone, so an
# escaped "https\:\/\/…" still becomes a link. A word that could be one (a
# scheme, www., an e-mail address) is shown as inline code, which is never linked.
_LINKABLE = re.compile(r"(?i)[a-z][a-z0-9+.-]*://|www\.|@|mailto:|xmpp:")


def markdown_literal(text: object) -> str:
    """``text`` escaped so that Streamlit's Markdown shows it character for character.

    >>> print(markdown_literal("*x* [Login](https://evil.example) $y$"))
    \\*x\\* `[Login](https://evil.example)` \\$y\\$
    """
    words = re.split(r"(\s+)", str(text))
    return "".join(
        word if word.isspace() or not word
        else markdown_code(word) if _LINKABLE.search(word)
        else _MARKDOWN_SPECIAL.sub(r"\\\1", word)
        for word in words
    )


def markdown_code(text: object) -> str:
    """``text`` as an inline code span (shown verbatim), whatever backticks it holds.

    >>> markdown_code("x**2")
    '`x**2`'
    >>> markdown_code("a`b")
    '`` a`b ``'
    """
    text = str(text).replace("\n", " ")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    if not text.strip():
        return text
    if longest == 0:
        return f"`{text}`"
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"  # CommonMark strips one space each side


def plotly_literal(text: object) -> str:
    """``text`` escaped for Plotly's HTML-like labels (titles, names, hover text).

    Plotly reads ``<a href=…>``, ``<b>``, ``<br>`` and entities in labels; as
    entities they show as the characters typed. ``%{`` would start a hover
    template field, so its ``%`` becomes an entity too.

    >>> plotly_literal("<a href='https://evil.example'>x</a>")
    '&lt;a href=&#x27;https://evil.example&#x27;&gt;x&lt;/a&gt;'
    """
    return html.escape(str(text), quote=True).replace("%", "&#37;")
