"""A page's preset buttons: one click sets the controls, the URL then holds every value.

The presets themselves live in :mod:`gradlab.teaching.presets` (one table for all
pages). A button applies its preset through ``on_click``: the values go into
``st.session_state`` before the page reruns, the URL-bound widgets take them and
put them into the address bar, so a link copied after any later change opens
exactly the same view. There is no ``?preset=`` parameter: a link names the
values, not the preset. Whether the view still is a preset is derived from the
widgets' values (:func:`matching_preset`), never stored.

Usage in a page (draw the buttons anywhere; the keys are ``preset_<key>``)::

    from gradlab.ui.presets import preset_buttons
    preset_buttons("gradcheck", primary="float32_check_fails")
    # ... the page's bound widgets follow, without any on_change for presets

Quiz answers are never presets and never URL-bound: use a plain ``st.radio`` with a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from gradlab.teaching.presets import Preset, presets_for
from gradlab.ui.bound_widgets import apply_preset, bound_selectbox

__all__ = ["apply", "preset_buttons", "matching_preset"]


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


# ------------------------------------------------------------------------------------------
# Deprecated: remove after pages/explorer.py and pages/gradcheck.py use preset_buttons.
# The ``?preset=<name>`` picker below is the cause of the "shared link shows another view"
# bug (issue 13): a preset applied from the URL is not written into it.

CUSTOM = "custom"
PRESET_KEY = "preset"
_APPLIED = "_preset_applied"

Presets = Mapping[str, Mapping[str, Any]]


def detach_example() -> None:
    """Deprecated (see above). ``on_change`` for every control: the view no longer is the example."""
    st.session_state[PRESET_KEY] = CUSTOM


def _apply(presets: Presets, name: str, skip: frozenset[str] = frozenset()) -> None:
    apply_preset({k: v for k, v in presets[name].items() if k not in skip})
    st.session_state[_APPLIED] = name


def apply_example_from_url(presets: Presets) -> None:
    """Deprecated (see above). Apply ``?preset=`` once per session (explicit URL values win)."""
    name = st.query_params.get(PRESET_KEY)
    if name in presets and st.session_state.get(_APPLIED) != name:
        _apply(presets, name, frozenset(st.query_params) - {PRESET_KEY})


def load_example(presets: Presets, name: str) -> None:
    """Deprecated (see above). ``on_click`` of a one-click example button."""
    _apply(presets, name)
    st.session_state[PRESET_KEY] = name


def _picked(presets: Presets) -> None:
    name = st.session_state.get(PRESET_KEY)
    if name in presets:
        _apply(presets, name)


def example_picker(presets: Presets, label: str = "Example") -> str:
    """Deprecated (see above). The "Example" selectbox bound to ``?preset=``."""
    options = (CUSTOM, *presets)
    return bound_selectbox(label, PRESET_KEY, options, on_change=_picked, args=(presets,))
