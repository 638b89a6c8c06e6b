"""What a page says: its answer in the box its level picks, and errors as a sentence, never a traceback.

>>> GENERIC_ERROR.startswith("Something went wrong")
True
>>> sorted(ANSWER_BOXES) == sorted(ANSWER_ICONS) == sorted(ANSWER_LEVELS)
True
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

import streamlit as st

from gradlab.view import ANSWER_LEVELS
from gradlab.errors import GradLabError
from gradlab.literal_text import markdown_literal

_LOG = logging.getLogger("gradlab.ui")

GENERIC_ERROR = (
    "Something went wrong while computing this view. Try other settings, or reload "
    "the page; if it keeps happening, report it with this page's URL."
)


#: An answer's level (:class:`gradlab.view.Answer`, :class:`gradlab.notes.Note`) -> the message
#: box that shows it, and that box's icon: the one map every page that shows an answer uses.
ANSWER_BOXES = {"success": st.success, "info": st.info, "warning": st.warning, "error": st.error}
ANSWER_ICONS = {"success": ":material/check_circle:", "info": ":material/info:",
                "warning": ":material/warning:", "error": ":material/error:"}
#: The icon of a box that says a gradient is wrong: the check's answer, not a failure of the page
#: (which says so with :func:`show_error`'s icon).
WRONG_GRADIENT_ICON = ":material/bug_report:"


def show_answer(answer, icon: str | None = None, note: str | None = None,
                links: Callable[[str], str] | None = None) -> None:
    """Show a page's :class:`~gradlab.view.Answer` as literal text in its level's box: the one
    way every page shows its answer.

    ``note``, one line in small type under the sentence in the same box, defines a word the
    answer uses where it first appears (a caption under the box would cost the chart its height).
    ``links`` turns words of the escaped sentence into GradLab's own links (a term's definition,
    :func:`gradlab.ui.term_links.linked`; a regime tied to the chart,
    :func:`gradlab.ui.regime_links.regime_linked`).
    """
    sentence = markdown_literal(answer.text)
    text = (links(sentence) if links else sentence) + (f"  \n:small[{markdown_literal(note)}]" if note else "")
    ANSWER_BOXES[answer.level](text, icon=icon or ANSWER_ICONS[answer.level])


def show_error(err: BaseException, icon: str = ":material/error:") -> None:
    """Show ``err`` to the user: a GradLabError's own sentence, anything else generically.

    The sentence often quotes what the visitor typed, so it is shown as literal
    text, never as Markdown. Never shows a traceback; unexpected errors are
    logged on the server.
    """
    if isinstance(err, GradLabError):
        st.error(markdown_literal(err), icon=icon)
        return
    _LOG.error("Unexpected error in a GradLab page", exc_info=err)
    st.error(GENERIC_ERROR, icon=icon)


def stop_with_error(err: BaseException | str, *, icon: str | None = None,
                    level: str = "error") -> NoReturn:
    """Say what went wrong and end this run of the page: the one way a page stops on an error.

    ``err`` is an exception (shown by :func:`show_error`: its own sentence, or the generic
    one) or a sentence the page wrote, shown in the box of ``level`` ("warning" for a
    choice still to make, "error" for a value to fix). Nothing below the call is drawn, so
    a page reads ``settings = ...`` / ``result = cached(settings)`` with no ``None`` to test.
    """
    if isinstance(err, BaseException):
        show_error(err, icon=icon or ":material/error:")
    else:
        ANSWER_BOXES[level](err, icon=icon)
    st.stop()


@contextmanager
def reported_errors() -> Iterator[None]:
    """``with reported_errors(): ...`` shows any exception from the block with :func:`show_error`.

    Streamlit's own rerun/stop signals are BaseExceptions and pass through.
    """
    try:
        yield
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
