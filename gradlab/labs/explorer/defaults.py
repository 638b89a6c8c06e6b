"""The Explorer page's widget defaults, as plain values: each widget's key and default
(``DEFAULTS``), the step slider's ends and the points slider's steps. (The function options and
their labels are the catalogue's: :data:`gradlab.teaching.catalogue.FUNCTION_OPTIONS`.)

No streamlit here, so the page and the tests share one definition; the first view built from
``DEFAULTS`` is :mod:`gradlab.labs.explorer.first_view`. Widget *values* are what
``st.session_state`` holds (scheme names, floats); :func:`gradlab.teaching.presets.url_values`
turns them into what the URL carries (scheme labels, ``1e-06``, titles).

>>> DEFAULTS["fn"] in CATALOGUE, DEFAULTS["x"] == CATALOGUE[DEFAULTS["fn"]].x
(True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from gradlab.teaching.catalogue import CATALOGUE

DEFAULT_FUNCTION = "complex_step_classic"
DEFAULT_CUSTOM_EXPRESSION = "sin(x) / x"
EPS_SMALLEST, EPS_LARGEST = 1e-20, 1e1  # ends of the step slider
POINTS_MIN, POINTS_STEP = 11, 10
STEP_DEFAULT = 1e-3  # the step marked on the chart (its slider); near float32's best central step

#: Widget key -> default value (what the page shows with an empty URL).
DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "fn": DEFAULT_FUNCTION,
    "expr": DEFAULT_CUSTOM_EXPRESSION,
    "x": CATALOGUE[DEFAULT_FUNCTION].x,
    "dtypes": ("float32", "float64"),
    "schemes": ("central",),  # the V at once, in two dtypes
    "eps_auto": True,  # steps fitted to the dtypes' V (gradlab.step_sweep.step_range); False: eps_range
    "eps_range": (1e-20, 1.0),
    "points": 61,
    "error": "relative",
    "theory": True,
    "autograd": True,
    "focus": "auto",
})
