"""A term defined where a sentence first says it, without a line of its own: the word becomes a
link whose hover shows the glossary's definition (Markdown link titles render as the browser's
tooltip) and whose click goes to where the Representable grid page defines it.

A line under an answer cost the main chart its legend on a 1280x720 first screen; a tooltip
costs nothing. A phone, which has no hover, follows the link to the definitions.

>>> linked("x + h is 4 ulps above x, 1 ulp each", "ulp")
'x + h is 4 [ulps](/grid#definitions "ulp: unit in the last place: the gap between a number and the next larger number the dtype can store.") above x, 1 ulp each'
"""

from __future__ import annotations

import re

from gradlab.teaching.glossary import define, definition, term

#: define, definition and term are the glossary's, here so a page needs only gradlab.ui and its lab.
__all__ = ["linked", "DEFINITIONS", "define", "definition", "term"]

#: Where the Representable grid page defines ulp, unit round-off and machine epsilon.
DEFINITIONS = "/grid#definitions"


def linked(markdown: str, term: str, href: str = DEFINITIONS) -> str:
    """``markdown`` with its first ``term`` (or its plural) a link to ``href`` showing
    :func:`~gradlab.teaching.glossary.define` on hover; unchanged when the term is absent.

    The definition is GradLab's own text (no double quotes in it), never a visitor's.
    """
    title = define(term).replace('"', "'")
    pattern = rf"\b{re.escape(term)}s?\b"
    return re.sub(pattern, lambda m: f'[{m.group(0)}]({href} "{title}")', markdown, count=1)
