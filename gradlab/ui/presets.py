"""Named examples ("presets") for the teaching pages, kept in the URL as ``?preset=<name>``.

An "Example" selectbox bound to ``preset`` shows which example the view started
from. Its values are applied once when the page opens with ``?preset=`` (values
given explicitly in the same URL win), when the example is picked, or when a
one-click button is pressed. Changing any control afterwards sets the example
back to "custom", so the URL then holds exactly the controls that differ from
their defaults and reproduces the view by itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from gradlab.ui.bound_widgets import apply_preset, bound_selectbox

CUSTOM = "custom"
PRESET_KEY = "preset"
_APPLIED = "_preset_applied"

Presets = Mapping[str, Mapping[str, Any]]


def detach_example() -> None:
    """``on_change`` for every control: the view no longer is the named example."""
    st.session_state[PRESET_KEY] = CUSTOM


def _apply(presets: Presets, name: str, skip: frozenset[str] = frozenset()) -> None:
    apply_preset({k: v for k, v in presets[name].items() if k not in skip})
    st.session_state[_APPLIED] = name


def apply_example_from_url(presets: Presets) -> None:
    """Call first thing on a page: apply ``?preset=`` once per session (explicit URL values win)."""
    name = st.query_params.get(PRESET_KEY)
    if name in presets and st.session_state.get(_APPLIED) != name:
        _apply(presets, name, frozenset(st.query_params) - {PRESET_KEY})


def load_example(presets: Presets, name: str) -> None:
    """``on_click`` of a one-click example button."""
    _apply(presets, name)
    st.session_state[PRESET_KEY] = name


def _picked(presets: Presets) -> None:
    name = st.session_state.get(PRESET_KEY)
    if name in presets:
        _apply(presets, name)


def example_picker(presets: Presets, label: str = "Example") -> str:
    """The "Example" selectbox (key ``preset``); returns the example's name or "custom".

    Options are shown by name (no ``format_func``) so that ``?preset=<name>`` is what the URL holds.
    """
    options = (CUSTOM, *presets)
    return bound_selectbox(label, PRESET_KEY, options, on_change=_picked, args=(presets,))
