"""URL widgets for GradLab's pages: every control's value lives in the URL.

Every control on a page goes through one of the ``url_*`` wrappers: they always
pass ``key=`` and ``bind="query-params"``, so the URL is a shareable link to the
exact view (Streamlit uses the key as the query-parameter name and drops the
parameter while the widget shows its default).

Invalid values arriving from the URL (Streamlit 1.67): for selectbox, radio,
multiselect, select_slider, number_input, slider, toggle and checkbox, Streamlit
itself validates the query parameter when the widget is registered. A value that
does not parse or is not one of the options (or, for numbers, lies outside
``[min_value, max_value]`` or is nan/inf) is ignored, the widget shows its
default and the parameter is removed from the URL; a multiselect keeps the
valid entries and drops the rest. There is no exception and no message. Text
inputs accept any string (cut to ``max_chars``), so a page must validate the
text itself and report a problem with :func:`gradlab.ui.messages.show_error`.

What Streamlit does *not* check is a value written to ``st.session_state`` by
code (a preset, :func:`gradlab.ui.presets.apply_preset`): the wrappers below drop such values
when they are not valid options, so a stale preset cannot raise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import streamlit as st

from gradlab.ui.compat import forget_initial_query_param

T = TypeVar("T")

_RESERVED = ("key", "bind")


def _refuse_reserved_kwargs(kwargs: Mapping[str, Any]) -> None:
    for name in _RESERVED:
        if name in kwargs:
            raise TypeError(f"Pass the widget key positionally; {name}= is set by the wrapper.")


def _drop_invalid_state(key: str, is_valid: Callable[[Any], bool]) -> None:
    """Forget a session-state value for ``key`` that the widget would reject."""
    if key in st.session_state:
        try:
            ok = is_valid(st.session_state[key])
        except Exception:  # noqa: BLE001 - any failure means "not valid"
            ok = False
        if not ok:
            del st.session_state[key]


# ---------------------------------------------------------------- URL widgets


def url_selectbox(
    label: str,
    key: str,
    options: Sequence[T],
    *,
    index: int = 0,
    format_func: Callable[[T], str] = str,
    **kwargs: Any,
) -> T:
    """``st.selectbox`` kept in the query parameter ``key``.

    With ``format_func`` the URL carries the *formatted* label, not the option.
    """
    return _url_choice(st.selectbox, label, key, options, index, format_func, kwargs)


def url_radio(
    label: str,
    key: str,
    options: Sequence[T],
    *,
    index: int = 0,
    format_func: Callable[[T], str] = str,
    **kwargs: Any,
) -> T:
    """``st.radio`` kept in the query parameter ``key``."""
    return _url_choice(st.radio, label, key, options, index, format_func, kwargs)


def _url_choice(widget, label, key, options, index, format_func, kwargs):
    """One of several options (selectbox, radio), kept in the query parameter ``key``."""
    _refuse_reserved_kwargs(kwargs)
    options = tuple(options)
    _drop_invalid_state(key, lambda v: v in options)
    return widget(label, options, index=index, format_func=format_func,
                  key=key, bind="query-params", **kwargs)


def url_multiselect(
    label: str,
    key: str,
    options: Sequence[T],
    *,
    default: Sequence[T] = (),
    format_func: Callable[[T], str] = str,
    **kwargs: Any,
) -> tuple[T, ...]:
    """``st.multiselect`` kept in the query parameter ``key``; the selection as a tuple (maybe empty).

    The URL repeats the key once per selected option (``?dtypes=float32&dtypes=float64``). The
    chips wrap onto more rows rather than scroll: a scrolling box in a row of controls shows
    "float32 × float64" while its chart draws four dtypes, and cuts "Complex step" to "Comple…".
    """
    kwargs.setdefault("wrap", True)
    _refuse_reserved_kwargs(kwargs)
    options = tuple(options)
    if key in st.session_state:
        current = st.session_state[key]
        if isinstance(current, str) or not isinstance(current, Sequence):
            current = [current]
        kept = [v for v in current if v in options]
        if list(current) != kept:
            st.session_state[key] = kept
    chosen = st.multiselect(
        label, options, default=[v for v in default if v in options],
        format_func=format_func, key=key, bind="query-params", **kwargs,
    )
    return tuple(chosen)


def url_number(
    label: str,
    key: str,
    *,
    value: float | int,
    min_value: float | int | None = None,
    max_value: float | int | None = None,
    **kwargs: Any,
) -> float | int:
    """``st.number_input`` kept in the query parameter ``key``; a URL value outside
    ``[min_value, max_value]`` falls back to ``value``.

    ``value`` is clamped into that range: a deployment may lower a limit in
    gradlab.limits below a widget's usual default (``GRADLAB_LIMITS``).
    """
    _refuse_reserved_kwargs(kwargs)
    value = _clamped(value, min_value, max_value)

    def ok(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            return False
        return (min_value is None or v >= min_value) and (max_value is None or v <= max_value)

    _drop_invalid_state(key, ok)
    _drop_non_finite_query_param(key)
    return st.number_input(
        label, min_value=min_value, max_value=max_value, value=value,
        key=key, bind="query-params", **kwargs,
    )


def _clamped(value: T, low: T | None, high: T | None) -> T:
    if low is not None and value < low:
        return low
    if high is not None and value > high:
        return high
    return value


def _drop_non_finite_query_param(key: str) -> None:
    """Remove ``?key=inf`` (or 1e999, -inf, nan) before a number input reads it.

    Streamlit 1.67 ignores most bad number parameters, but for an *integer*
    number input it converts the parsed float with ``int()``, and
    ``int(float("inf"))`` raises OverflowError out of widget registration: the
    page would crash on a URL such as ``/network?inputs=inf``.
    """
    raw = st.query_params.get(key)
    if raw is None:
        return
    try:
        finite = math.isfinite(float(raw))
    except (TypeError, ValueError):
        return  # not a number at all: Streamlit ignores it and shows the default
    if not finite:
        _forget_url_value(key)


def _forget_url_value(key: str) -> None:
    """Drop ``key`` from the URL *and* from the copy Streamlit seeds widgets from.

    Removing it from ``st.query_params`` alone does not stop Streamlit 1.67 from
    seeding the widget with it: see :func:`gradlab.ui.compat.forget_initial_query_param`.
    """
    forget_initial_query_param(key)
    if key in st.query_params:
        del st.query_params[key]


def url_slider(
    label: str,
    key: str,
    *,
    min_value: Any,
    max_value: Any,
    value: Any,
    **kwargs: Any,
) -> Any:
    """``st.slider`` kept in the query parameter ``key`` (a single value or a ``(low, high)`` range)."""
    _refuse_reserved_kwargs(kwargs)

    def inside(v: Any) -> bool:
        return min_value <= v <= max_value

    def ok(v: Any) -> bool:
        if isinstance(value, tuple | list):
            return len(v) == 2 and inside(v[0]) and inside(v[1]) and v[0] <= v[1]
        return inside(v)

    _drop_invalid_state(key, ok)
    value = (tuple(_clamped(v, min_value, max_value) for v in value) if isinstance(value, tuple | list)
             else _clamped(value, min_value, max_value))
    return st.slider(
        label, min_value=min_value, max_value=max_value, value=value,
        key=key, bind="query-params", **kwargs,
    )


def url_select_slider(
    label: str,
    key: str,
    options: Sequence[T],
    *,
    value: T | tuple[T, T],
    format_func: Callable[[T], str] = str,
    **kwargs: Any,
) -> Any:
    """``st.select_slider`` kept in the query parameter ``key``; the URL carries the formatted option(s)."""
    _refuse_reserved_kwargs(kwargs)
    options = tuple(options)

    def ok(v: Any) -> bool:
        if isinstance(value, tuple):
            return len(v) == 2 and v[0] in options and v[1] in options
        return v in options

    _drop_invalid_state(key, ok)
    if isinstance(value, tuple) and key in st.session_state:
        st.session_state[key] = tuple(st.session_state[key])  # a range must stay a pair
    return st.select_slider(
        label, options=options, value=value, format_func=format_func,
        key=key, bind="query-params", **kwargs,
    )


def url_text(
    label: str,
    key: str,
    *,
    value: str = "",
    max_chars: int | None = None,
    **kwargs: Any,
) -> str:
    """``st.text_input`` kept in the query parameter ``key``. Any text can arrive from the URL: validate it."""
    _refuse_reserved_kwargs(kwargs)
    _drop_invalid_state(key, lambda v: isinstance(v, str))
    return st.text_input(
        label, value=value, max_chars=max_chars, key=key, bind="query-params", **kwargs,
    )


def url_toggle(label: str, key: str, *, value: bool = False, **kwargs: Any) -> bool:
    """``st.toggle`` kept in the query parameter ``key`` (``?key=true`` / ``?key=false``)."""
    _refuse_reserved_kwargs(kwargs)
    _drop_invalid_state(key, lambda v: isinstance(v, bool))
    return st.toggle(label, value=value, key=key, bind="query-params", **kwargs)


def url_checkbox(label: str, key: str, *, value: bool = False, **kwargs: Any) -> bool:
    """``st.checkbox`` kept in the query parameter ``key``."""
    _refuse_reserved_kwargs(kwargs)
    _drop_invalid_state(key, lambda v: isinstance(v, bool))
    return st.checkbox(label, value=value, key=key, bind="query-params", **kwargs)


def url_tabs(labels: Sequence[str], key: str) -> Sequence[Any]:
    """``st.tabs`` whose selected tab is the query parameter ``key``; tabs run lazily.

    Only the selected tab's ``.open`` is True: draw expensive content under
    ``if tab.open:``. A URL naming a tab that is not shown falls back to the first.
    """
    labels = tuple(labels)
    _drop_invalid_state(key, lambda v: v in labels)
    return st.tabs(labels, key=key, bind="query-params")
