"""A page's widgets as a Streamlit client holds them: the value the frontend reports for each,
another valid value a user could pick, and how a URL widget's value appears in the URL.

>>> with_param("fn=sin&x=1.0", "x", ["2.5"]), with_param("fn=sin&x=1.0", "fn", None)
('fn=sin&x=2.5', 'x=1.0')
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState

#: Element types this client knows how to hold and change, like the frontend's widgets.
WIDGET_TYPES = frozenset(
    {"selectbox", "radio", "multiselect", "slider", "number_input", "checkbox",
     "text_input", "text_area", "button"}
)


@dataclass
class Widget:
    """A widget as the last run drew it: its element proto and where it lives."""

    id: str
    kind: str  # the Element oneof name; "select_slider" for a slider with options
    proto: Any
    fragment_id: str = ""

    @property
    def key(self) -> str:
        """The query-parameter key of a ``bind="query-params"`` widget, else ''."""
        return getattr(self.proto, "query_param_key", "")

    @property
    def label(self) -> str:
        return getattr(self.proto, "label", "")


def initial_state(w: Widget, *, default_only: bool = False) -> WidgetState | None:
    """The value the frontend reports for a widget it has just drawn (None: no value yet).

    ``default_only``: the widget's default, ignoring a value the server set.
    """
    p = w.proto
    s = WidgetState(id=w.id)
    use_set = bool(getattr(p, "set_value", False)) and not default_only
    if w.kind in ("selectbox", "radio"):
        if use_set and p.HasField("raw_value"):
            s.string_value = p.raw_value
        elif p.HasField("default") and 0 <= p.default < len(p.options):
            s.string_value = p.options[p.default]
        else:
            return None
    elif w.kind == "multiselect":
        values = list(p.raw_values) if use_set else [p.options[i] for i in p.default]
        s.string_array_value.data.extend(values)
    elif w.kind == "select_slider":
        if use_set and p.raw_value:
            labels = list(p.raw_value)
        else:
            labels = [p.options[int(i)] for i in p.default]
        s.string_array_value.data.extend(labels)
    elif w.kind == "slider":
        s.double_array_value.data.extend(list(p.value) if use_set else list(p.default))
    elif w.kind == "number_input":
        if use_set and p.HasField("value"):
            v = p.value
        elif p.HasField("default"):
            v = p.default
        else:
            return None
        if p.data_type == NumberInput.INT:
            s.int_value = int(v)
        else:
            s.double_value = v
    elif w.kind == "checkbox":
        s.bool_value = p.value if use_set else p.default
    elif w.kind == "button":
        return None  # a trigger: only sent in the rerun its click causes
    elif w.kind in ("text_input", "text_area"):
        if use_set and p.HasField("value"):
            s.string_value = p.value
        elif p.HasField("default"):
            s.string_value = p.default
        else:
            return None
    else:
        return None
    return s


def state_for(w: Widget, value: Any) -> WidgetState:
    """The state the frontend sends when a user sets ``w`` to ``value`` (typed, clicked: True).

    >>> from streamlit.proto.TextInput_pb2 import TextInput
    >>> state_for(Widget("w1", "text_input", TextInput()), "3x4").string_value
    '3x4'
    """
    s = WidgetState(id=w.id)
    if w.kind == "button":
        s.trigger_value = True
    elif w.kind == "number_input":
        if w.proto.data_type == NumberInput.INT:
            s.int_value = int(value)
        else:
            s.double_value = float(value)
    elif w.kind in ("text_input", "text_area", "selectbox", "radio"):
        s.string_value = str(value)
    else:
        raise ValueError(f"{w.kind}: set it with changed_state")
    return s


def _number_for_url(v: float) -> str:
    if math.isfinite(v) and v == int(v):
        return str(int(v))
    return str(v)


def url_values(state: WidgetState) -> list[str]:
    """How a URL widget's value appears in the URL (one entry per repeated parameter)."""
    kind = state.WhichOneof("value")
    if kind == "string_value":
        return [state.string_value]
    if kind == "string_array_value":
        return list(state.string_array_value.data)
    if kind == "double_array_value":
        return [_number_for_url(v) for v in state.double_array_value.data]
    if kind == "double_value":
        return [_number_for_url(state.double_value)]
    if kind == "int_value":
        return [str(state.int_value)]
    if kind == "bool_value":
        return ["true" if state.bool_value else "false"]
    return []


def with_param(query_string: str, key: str, values: list[str] | None) -> str:
    """``query_string`` with ``key`` set to ``values`` (None: removed), other keys kept in order."""
    pairs = parse_qsl(query_string, keep_blank_values=True)
    out: list[tuple[str, str]] = []
    placed = False
    for k, v in pairs:
        if k != key:
            out.append((k, v))
        elif not placed and values is not None:
            out.extend((key, x) for x in values)
            placed = True
    if not placed and values is not None:
        out.extend((key, x) for x in values)
    return urlencode(out)


def changed_state(
    w: Widget,
    current: WidgetState | None,
    rng: random.Random,
    text_choices: dict[str, list[str]] | None = None,
) -> WidgetState | None:
    """A different valid value for the widget, as a user would pick it (None: can't change it)."""
    p = w.proto
    s = WidgetState(id=w.id)
    if getattr(p, "disabled", False):
        return None
    if w.kind in ("selectbox", "radio"):
        cur = current.string_value if current is not None else None
        choices = [o for o in p.options if o != cur]
        if not choices:
            return None
        s.string_value = rng.choice(choices)
    elif w.kind == "multiselect":
        if not p.options:
            return None
        limit = p.max_selections or len(p.options)
        k = rng.randint(1, max(1, min(3, limit, len(p.options))))
        s.string_array_value.data.extend(rng.sample(list(p.options), k))
    elif w.kind == "select_slider":
        n = len(p.options)
        if n < 2:
            return None
        if len(p.default) >= 2:
            lo, hi = sorted(rng.sample(range(n), 2))
            s.string_array_value.data.extend([p.options[lo], p.options[hi]])
        else:
            s.string_array_value.data.append(p.options[rng.randrange(n)])
    elif w.kind == "slider":
        if p.data_type not in (Slider.INT, Slider.FLOAT) or p.max <= p.min:
            return None
        step = p.step or (1 if p.data_type == Slider.INT else (p.max - p.min) / 100)
        stops = int((p.max - p.min) / step)
        pick = sorted(p.min + step * rng.randint(0, stops) for _ in range(max(1, len(p.default))))
        s.double_array_value.data.extend(pick)
    elif w.kind == "button":
        if p.is_form_submitter:
            return None
        s.trigger_value = True
    elif w.kind == "number_input":
        is_int = p.data_type == NumberInput.INT
        if p.has_min and p.has_max and p.max - p.min <= 1e6:
            v = rng.uniform(p.min, p.max)
        else:
            base = (current.int_value if is_int else current.double_value) if current else 1.0
            v = (base or 1.0) * rng.choice((0.5, 0.8, 1.25, 2.0, -1.0))
            if p.has_min:
                v = max(v, p.min)
            if p.has_max:
                v = min(v, p.max)
        if is_int:
            s.int_value = int(round(v))
        else:
            s.double_value = float(f"{v:.6g}")
    elif w.kind == "checkbox":
        s.bool_value = not (current.bool_value if current is not None else p.default)
    elif w.kind in ("text_input", "text_area"):
        choices = (text_choices or {}).get(w.key) or []
        cur = current.string_value if current is not None else None
        choices = [c for c in choices if c != cur]
        if not choices:
            return None
        s.string_value = rng.choice(choices)
    else:
        return None
    return s
