"""Cheap cache keys for the pages' frozen settings, and why they are needed.

Streamlit keys a cached call by hashing its arguments. A dataclass it does not know is hashed
through its ``__reduce__``, every field in turn through a chain of type checks: 120-200 µs per
call for a settings object here (``CheckSettings``: 197 µs), on every rerun, for every cached call
that takes one. Given ``hash_funcs={SettingsType: settings_key}`` it hashes this function's text
instead (16-18 µs with the digest). Call cached functions with keyword arguments too: for each
positional one Streamlit reads the function's signature again to learn the argument's name.

A page script runs again on every rerun, and with it the decorators of the cached functions it
defines: Streamlit reads each function's source again (``inspect.getsource``, 0.2-1 ms a function
here; 2-5 % of a warm rerun of Round-off or Backward). :func:`page_cache_data` and
:func:`page_cache_resource` decorate a page's function once per server process and hand back the
same cached function on every later run (the first run's definition: a page's cached functions use
only imports and constants).

``settings_key`` is the settings' ``repr``: a frozen dataclass of plain values (strings, numbers,
tuples, None, other such dataclasses) writes every field, floats exactly, so equal settings give
equal keys and different settings different ones. Anything else is pickled.

>>> from gradlab.check import CheckSettings
>>> settings_key(CheckSettings()) == settings_key(CheckSettings())
True
>>> settings_key(CheckSettings(seed=1)) == settings_key(CheckSettings(seed=2))
False
>>> settings_key(("a", 0.1 + 0.2))
"('a', 0.30000000000000004)"
"""

from __future__ import annotations

import dataclasses
import pickle
import threading
from typing import Callable

__all__ = ["settings_key", "page_cache_data", "page_cache_resource"]

_PLAIN = (str, int, float, bool, type(None))


def _plain(value) -> bool:
    """Whether ``repr(value)`` writes all of it: plain values, tuples of them, and dataclasses of them
    whose repr shows every field."""
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, tuple):
        return all(_plain(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value).__dataclass_params__.repr and all(
            f.repr and _plain(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False


def settings_key(value) -> str | bytes:
    """What Streamlit hashes for ``value`` (``hash_funcs``): its repr when that writes all of it,
    else its pickle (see the module docstring)."""
    return repr(value) if _plain(value) else pickle.dumps(value, protocol=5)


_MADE: dict[tuple, Callable] = {}
_MADE_LOCK = threading.Lock()


def _once(kind: str, options: dict) -> Callable[[Callable], Callable]:
    def decorate(fn: Callable) -> Callable:
        import streamlit as st

        code = fn.__code__  # an edited page (a new definition) gets a new cached function
        key = (kind, code.co_filename, fn.__qualname__, code.co_firstlineno, code.co_code)
        with _MADE_LOCK:
            if key not in _MADE:
                _MADE[key] = getattr(st, kind)(**options)(fn)
            return _MADE[key]

    return decorate


def page_cache_data(**options) -> Callable[[Callable], Callable]:
    """``st.cache_data(**options)`` for a function a page script defines, made once per process.

    >>> @page_cache_data(max_entries=4)
    ... def double(x: int) -> int:
    ...     return 2 * x
    >>> again = page_cache_data(max_entries=4)(double.__wrapped__)  # what the page's next run does
    >>> again is double, again(x=21)
    (True, 42)
    """
    return _once("cache_data", options)


def page_cache_resource(**options) -> Callable[[Callable], Callable]:
    """``st.cache_resource(**options)`` for a function a page script defines, made once per process."""
    return _once("cache_resource", options)
