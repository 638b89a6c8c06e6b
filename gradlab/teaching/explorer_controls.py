"""The Explorer page's controls: keys, defaults and labels, as plain values.

No streamlit here, so the page, its tests, the benchmark and the preset registry
(:mod:`gradlab.teaching.presets`, which holds the Explorer's presets) share one
definition. Widget *values* are what ``st.session_state`` holds (scheme names,
floats); :func:`gradlab.teaching.presets.url_values` turns them into what the URL
carries (scheme labels, ``1e-06``, titles).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from gradlab.numerics.dtypes import DTYPE_NAMES
from gradlab.teaching.catalogue import CATALOGUE

CUSTOM = "custom"
DEFAULT_FUNCTION = "complex_step_classic"
DEFAULT_CUSTOM_EXPRESSION = "sin(x) / x"
EPS_SMALLEST, EPS_LARGEST = 1e-20, 1e1  # ends of the step slider
POINTS_MIN, POINTS_STEP = 11, 10

#: Widget key -> default value (what the page shows with an empty URL).
DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "fn": DEFAULT_FUNCTION,
    "expr": DEFAULT_CUSTOM_EXPRESSION,
    "x": CATALOGUE[DEFAULT_FUNCTION].x,
    "dtypes": ("float32", "float64"),
    "schemes": ("central",),  # the V at once, in two dtypes
    "eps_auto": True,  # steps fitted to the dtypes' V (gradlab.sweep.step_range); False: eps_range
    "eps_range": (1e-20, 1.0),
    "points": 61,
    "error": "relative",
    "theory": True,
    "autograd": True,
    "focus": "auto",
})

FUNCTION_OPTIONS: tuple[str, ...] = (*CATALOGUE, CUSTOM)

#: Terms the Explorer uses, defined where they first appear (widget help, captions), in
#: words a second-year student knows. (Until a shared glossary exists, these are the Explorer's.)


def function_label(key: str) -> str:
    """What the function selectbox shows (and the URL carries) for a catalogue key."""
    return "custom (type it)" if key == CUSTOM else CATALOGUE[key].title




#: The dtypes the Explorer's prediction asks about, in order: the first not on the chart. The
#: native rows of the dtype table, in its order (the emulated 8-bit rows are not asked about).
QUIZ_DTYPES: tuple[str, ...] = DTYPE_NAMES


def quiz_dtype(shown) -> str | None:
    """The dtype the prediction asks about: one the chart does not show yet, so its answer
    is not on screen before the visitor commits (None when every one is shown).

    >>> quiz_dtype(("float32", "float64")), quiz_dtype(("float16", "float32")), quiz_dtype(QUIZ_DTYPES)
    ('float16', 'bfloat16', None)
    """
    return next((d for d in QUIZ_DTYPES if d not in shown), None)
