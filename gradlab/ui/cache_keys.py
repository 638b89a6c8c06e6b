"""Cheap cache keys for the pages' frozen settings, and why they are needed.

Streamlit keys a cached call by hashing its arguments. A dataclass it does not know is hashed
through its ``__reduce__``, every field in turn through a chain of type checks: 120-200 µs per
call for a settings object here (``CheckSettings``: 197 µs), on every rerun, for every cached call
that takes one. Given ``hash_funcs={SettingsType: settings_key}`` it hashes this function's text
instead (16-18 µs with the digest). Call cached functions with keyword arguments too: for each
positional one Streamlit reads the function's signature again to learn the argument's name.

``settings_key`` is the settings' ``repr``: a frozen dataclass of plain values (strings, numbers,
tuples, None, other such dataclasses) writes every field, floats exactly, so equal settings give
equal keys and different settings different ones. Anything else is pickled.

>>> from gradlab.check.settings import CheckSettings
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

__all__ = ["settings_key"]

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
