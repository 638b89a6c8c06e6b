"""A page's preset buttons: one click sets the controls, the URL then holds every value.

The presets themselves live in :mod:`gradlab.teaching.presets` (one table for all
pages). A button applies its preset through ``on_click``: the values go into
``st.session_state`` before the page reruns, the URL widgets take them and
put them into the address bar, so a link copied after any later change opens
exactly the same view. There is no ``?preset=`` parameter: a link names the
values, not the preset. Whether the view still is a preset is derived from the
widgets' values (:func:`matching_preset`), never stored.

Usage in a page (draw the buttons anywhere; the keys are ``preset_<key>``); a page's first
screen folds them into a "Presets" popover beside its title::

    from gradlab.ui.page_chrome import title_row
    from gradlab.ui.presets import presets_popover
    with title_row("Grad check", "my float32 check fails. Is the gradient wrong?"):
        presets_popover("gradcheck", primary="float32_check_fails")
    # ... the page's URL widgets follow, without any on_change for presets

Quiz answers are never presets and never kept in the URL: use a plain ``st.radio`` with a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from gradlab.teaching.presets import Preset, gallery, preset, presets_for, url_query

#: Preset, gallery and url_query are the registry's, here so a page needs only gradlab.ui and its lab.
__all__ = ["apply", "apply_preset", "preset_buttons", "presets_popover", "matching_preset", "preset_link",
           "Preset", "gallery", "url_query"]


def apply_preset(values: Mapping[str, Any]) -> None:
    """Write ``values`` (widget key -> value) to ``st.session_state``.

    Use as a callback, so it runs before the widgets are drawn::

        st.button("1/x at 0.3", on_click=apply_preset, args=({"expr": "1/x", "x": 0.3},))

    URL widgets then push the new values to the URL (verified in Chromium with
    Streamlit 1.67). Values a widget would not accept are dropped by the
    ``url_*`` wrappers, which fall back to defaults.

    For a *link* to a preset (e.g. from the home page), don't invent a
    ``?preset=`` parameter: put the widget values themselves in the link's query
    parameters (see :func:`gradlab.teaching.presets.url_query`). Streamlit seeds
    URL widgets from the URL on load, and the URL stays the shareable view.
    Values written to ``st.session_state`` *before* a widget's first run are
    not copied to the URL by Streamlit 1.67, which is why there is no
    "read ?preset= and set state" helper.
    """
    for key, value in values.items():
        st.session_state[key] = value


def apply(p: Preset) -> None:
    """``on_click`` of a preset button: write the preset's values to ``st.session_state``."""
    apply_preset(p.values)


def preset_buttons(page: str, *, primary: str | None = None) -> None:
    """One button per preset of ``page`` (label, question as help), in a row that wraps.

    ``primary`` is the key of the preset drawn as the main call to action, if any.
    """
    with st.container(horizontal=True):
        for p in presets_for(page):
            st.button(p.label, key=f"preset_{p.key}", help=p.question, on_click=apply, args=(p,),
                      type="primary" if p.key == primary else "secondary")


def _same(current: Any, wanted: Any) -> bool:
    if isinstance(wanted, tuple | list):
        return isinstance(current, tuple | list) and tuple(current) == tuple(wanted)
    return current == wanted


def matching_preset(page: str) -> Preset | None:
    """The first preset of ``page`` whose every value the widgets hold now, or None.

    Call it after the page's widgets have run (it reads ``st.session_state``).
    """
    for p in presets_for(page):
        if all(k in st.session_state and _same(st.session_state[k], v) for k, v in p.values.items()):
            return p
    return None


def presets_popover(page: str, *, primary: str | None = None) -> None:
    """The page's preset buttons folded into a "Presets" popover (beside the title, as the Explorer's).

    A row of buttons that wraps takes one or two lines of the first screen; the popover, one button.
    """
    with st.popover("Presets", icon=":material/bookmarks:",
                    help="Worked examples: each sets every control to one question's view."):
        preset_buttons(page, primary=primary)


def preset_link(page: str, key: str, label: str, icon: str | None = None) -> None:
    """A link to ``page``'s preset ``key``: the page opens with that preset's values in its URL."""
    st.page_link(f"pages/{page}.py", label=label, icon=icon, query_params=url_query(preset(page, key)))
