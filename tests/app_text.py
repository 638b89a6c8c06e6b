"""What a reader sees of an element's Markdown in AppTest: escapes undone, code spans unwrapped.

Pages show visitor-influenced messages through ``gradlab.literal_text.markdown_literal``,
so an AppTest element's ``.value`` holds ``c \\> 0``; a reader sees ``c > 0``.
"""

import re
import string

_ESCAPED = re.compile(r"\\([" + re.escape(string.punctuation) + "])")
_CODE = re.compile(r"(`+) ?(.*?) ?\1")
_LINK = re.compile(r'\[([^\]]*)\]\((?:[^()"\s]*)(?: "[^"]*")?\)')  # [text](target "hover title")


def shown(markdown: str) -> str:
    """``markdown`` as read on the page (for text made of plain words, escapes, code spans and links).

    >>> shown('x \\+ h is 1 [ulp](#definitions "ulp: unit in the last place.") above `x`')
    'x + h is 1 ulp above x'
    """
    return _ESCAPED.sub(r"\1", _CODE.sub(r"\2", _LINK.sub(r"\1", markdown)))
