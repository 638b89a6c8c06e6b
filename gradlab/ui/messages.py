"""What a page says when something goes wrong: a sentence, never a traceback, never visitor markup.

>>> GENERIC_ERROR.startswith("Something went wrong")
True
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from gradlab.errors import GradLabError
from gradlab.literal_text import markdown_literal

_LOG = logging.getLogger("gradlab.ui")

GENERIC_ERROR = (
    "Something went wrong while computing this view. Try other settings, or reload "
    "the page; if it keeps happening, report it with this page's URL."
)


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


@contextmanager
def reported_errors() -> Iterator[None]:
    """``with reported_errors(): ...`` shows any exception from the block with :func:`show_error`.

    Streamlit's own rerun/stop signals are BaseExceptions and pass through.
    """
    try:
        yield
    except Exception as err:  # noqa: BLE001 - every failure becomes a message
        show_error(err)
