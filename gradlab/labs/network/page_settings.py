"""The Network page's widget values -> its one settings object, and the views the page computes of them.

``values`` map widget keys to values as ``st.session_state`` holds them (a preset's
:attr:`~gradlab.teaching.presets.Preset.values`); a key left out takes the page's default
(:data:`PAGE_DEFAULTS`). The page and the start-up warm-up (:mod:`gradlab.ui.warm_views`) both
build their settings here, so a preset warmed is the view its link opens.

>>> settings_from({"dtype": "float64", "hidden": "8"}).hidden
(8,)
>>> settings_from({}) == NetworkSettings()
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from gradlab.labs.network.model import ACTIVATIONS, NetworkSettings, parse_hidden
from gradlab.labs.network.page_view import view
from gradlab.view import View

__all__ = ["PAGE_DEFAULTS", "settings_from", "preset_views"]

_D = NetworkSettings()
#: Widget key -> the value the page shows with an empty URL (the question's network).
PAGE_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "dtype": _D.dtype, "idx": _D.index, "seed": _D.seed, "dx": _D.step, "act": next(iter(ACTIVATIONS)),
    "hidden": ", ".join(map(str, _D.hidden)), "inputs": _D.input_size, "range": (_D.step_min, _D.step_max)})


def settings_from(values: Mapping[str, Any]) -> NetworkSettings:
    """The experiment the page's widgets holding ``values`` ask for (a GradLabError says what to fix)."""
    v = {**PAGE_DEFAULTS, **values}
    low, high = v["range"]
    return NetworkSettings(int(v["inputs"]), parse_hidden(v["hidden"]), v["act"], v["dtype"], int(v["seed"]),
                           int(v["idx"]), float(v["dx"]), float(low), float(high))


def preset_views(values: Mapping[str, Any]) -> tuple[tuple[Callable[..., View], Any], ...]:
    """Each ``(view function, settings)`` the page computes when its widgets hold ``values``.

    >>> [fn.__name__ for fn, _ in preset_views({})]
    ['view']
    """
    return ((view, settings_from(values)),)
