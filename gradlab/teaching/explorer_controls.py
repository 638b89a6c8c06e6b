"""The Explorer page's controls: keys, defaults and presets, as plain values.

No streamlit here, so the page, its tests, the benchmark and the home gallery
(:data:`gradlab.ui.navigation.PRESET_LINKS`) share one definition. Widget *values*
are what ``st.session_state`` holds (scheme names, floats); :func:`query_params`
turns them into what the URL carries (scheme labels, ``1e-06``, titles).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from gradlab.numerics.schemes import get_scheme
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
    "schemes": ("forward", "central", "complex_step"),
    "eps_range": (1e-20, 1.0),
    "points": 61,
    "error": "relative",
    "theory": True,
    "autograd": True,
    "focus": "auto",
})

FUNCTION_OPTIONS: tuple[str, ...] = (*CATALOGUE, CUSTOM)

def function_label(key: str) -> str:
    """What the function selectbox shows (and the URL carries) for a catalogue key."""
    return "custom (type it)" if key == CUSTOM else CATALOGUE[key].title


@dataclass(frozen=True)
class ExplorerPreset:
    """A one-click view: a button on the page and a link in the home gallery."""

    key: str
    label: str
    question: str
    values: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""


def _preset(key, label, question, note, **values) -> ExplorerPreset:
    return ExplorerPreset(key, label, question, MappingProxyType(values), note)


PRESETS: tuple[ExplorerPreset, ...] = (
    _preset(
        "classic", "Complex-step classic",
        "How can a step of 1e-20 give a derivative exact to the last bit?",
        "Differences have a V; the complex step keeps falling to round-off.",
        fn="complex_step_classic", x=1.5, dtypes=("float32", "float64"),
        schemes=("forward", "central", "complex_step"), eps_range=(1e-20, 1.0),
    ),
    _preset(
        "reciprocal", "1/x in float32 (seed 000)",
        "How close does float32 get to the derivative of 1/x?",
        "Autograd is within an ulp or two; the best difference is far worse.",
        fn="reciprocal", x=0.3, dtypes=("float32",),
        schemes=("forward", "central", "five_point"), eps_range=(1e-12, 1.0),
    ),
    _preset(
        "sqrt", "sqrt(x) near 0",
        "What happens to the best step near a branch point?",
        "Higher derivatives blow up: the best step shrinks, large steps leave the domain.",
        fn="sqrt_near_zero", x=1e-4, dtypes=("float32", "float64"),
        schemes=("forward", "central", "complex_step"), eps_range=(1e-16, 1.0),
    ),
    _preset(
        "kink", "abs(x) at the kink",
        "What does a finite difference return where there is no derivative?",
        "One-sided differences give ±1, central 0, autograd 0: none is 'right'.",
        fn="abs_kink", x=0.0, dtypes=("float32", "float64"),
        schemes=("forward", "backward", "central"), eps_range=(1e-16, 1.0),
    ),
)


def preset(key: str) -> ExplorerPreset:
    """Look a preset up by key."""
    for p in PRESETS:
        if p.key == key:
            return p
    raise KeyError(f"No Explorer preset {key!r}; known: {', '.join(p.key for p in PRESETS)}.")


def _url_value(key: str, value: Any) -> str | tuple[str, ...]:
    if key == "fn":
        return function_label(value)
    if key == "schemes":
        return tuple(get_scheme(s).short_label for s in value)  # what the widget shows
    if key == "eps_range":
        return tuple(f"{v:.0e}" for v in value)
    if isinstance(value, tuple):
        return tuple(str(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def query_params(values: Mapping[str, Any]) -> dict[str, str | tuple[str, ...]]:
    """The URL parameters for widget ``values``, leaving out defaults (Streamlit drops them).

    >>> query_params({"fn": "reciprocal", "x": 0.3, "dtypes": ("float32",)})
    {'fn': '1/x', 'x': '0.3', 'dtypes': ('float32',)}
    """
    return {k: _url_value(k, v) for k, v in values.items() if DEFAULTS.get(k) != v}
