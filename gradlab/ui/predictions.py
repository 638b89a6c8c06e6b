"""A page's "predict, then look" question: choices as a plain radio (never in the URL), then the reveal.

A lab hands its page the reveals as a table, one row per choice: ``right`` (bool) and ``reveal``
(the sentence). The right choice's reveal shows as success, any other as info; nothing is
revealed, or computed, before a choice is picked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd
import streamlit as st

from gradlab.ui.page_chrome import quiz_box

__all__ = ["prediction"]


def prediction(question: str, choices: Sequence, key: str, reveals: Callable[[], pd.DataFrame], *,
               labels: Mapping | None = None, pick: str = "Pick an answer to see the explanation.") -> None:
    """The question in the page's quiz box; ``reveals()`` is asked only once a choice is picked."""
    with quiz_box(border=True):
        guess = st.radio(question, tuple(choices), index=None, horizontal=True, key=key,
                         format_func=labels.get if labels is not None else str)
        if guess is None:
            st.caption(pick)
            return
        table = reveals()
        (st.success if table.at[guess, "right"] else st.info)(table.at[guess, "reveal"])
