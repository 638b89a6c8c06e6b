"""The Summed loss page's widget values -> its one settings object, and the views the page computes of them.

``values`` map widget keys to values as ``st.session_state`` holds them (a preset's
:attr:`~gradlab.teaching.presets.Preset.values`); a key left out takes the page's default
(:data:`PAGE_DEFAULTS`). The page and the start-up warm-up (:mod:`gradlab.ui.warm_views`) both
build their settings here, so a preset warmed is the view its link opens.

>>> settings_from({"shape": "400x500"}).shape
(400, 500)
>>> [fn.__name__ for fn, _ in preset_views({})]
['view']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from gradlab.check import parse_shape
from gradlab.labs.summed.loss import SummedLossSettings
from gradlab.labs.summed.page_view import view
from gradlab.view import View

__all__ = ["PAGE_DEFAULTS", "settings_from", "preset_views"]

#: Widget key -> the value the page shows with an empty URL (the float32 check question's loss).
PAGE_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"shape": "140x120", "dtype": "float32", "reduction": "sum", "h": 1e-3})


def settings_from(values: Mapping[str, Any]) -> SummedLossSettings:
    """The loss the page's widgets holding ``values`` ask for (a GradLabError says what to fix)."""
    v = {**PAGE_DEFAULTS, **values}
    return SummedLossSettings(shape=parse_shape(v["shape"]), dtype=v["dtype"], reduction=v["reduction"],
                              h=float(v["h"]))


def preset_views(values: Mapping[str, Any]) -> tuple[tuple[Callable[..., View], Any], ...]:
    """Each ``(view function, settings)`` the page computes when its widgets hold ``values``."""
    return ((view, settings_from(values)),)
