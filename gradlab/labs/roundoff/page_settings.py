"""The Round-off page's widget values -> its one settings object, and the views the page computes of them.

``values`` map widget keys to values as ``st.session_state`` holds them (a preset's
:attr:`~gradlab.teaching.presets.Preset.values`); a key left out takes the page's default
(:data:`PAGE_DEFAULTS`). The page and the start-up warm-up (:mod:`gradlab.ui.warm_views`) both
build their settings here, so a preset warmed is the view its link opens.

>>> settings_from({"dtype": "float64"}) == RoundoffSettings(dtype="float64")
True
>>> [(fn.__name__, s.dtype) for fn, s in preset_views({"dtype": "float64"})]
[('view', 'float64')]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from gradlab.labs.roundoff.page_view import view
from gradlab.labs.roundoff.settings import RoundoffSettings
from gradlab.view import View

__all__ = ["PAGE_DEFAULTS", "settings_from", "preset_views"]

_D = RoundoffSettings()
#: Widget key -> the value the page shows with an empty URL.
PAGE_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "a": _D.formula_a, "b": _D.formula_b, "dtype": _D.dtype, "dist": _D.distribution,
    "low": _D.low, "high": _D.high, "n": _D.samples, "seed": _D.seed})


def settings_from(values: Mapping[str, Any]) -> RoundoffSettings:
    """The comparison the page's widgets holding ``values`` ask for (the engine validates it)."""
    v = {**PAGE_DEFAULTS, **values}
    return RoundoffSettings(v["a"], v["b"], v["dtype"], v["dist"], float(v["low"]), float(v["high"]),
                            int(v["n"]), int(v["seed"]))


def preset_views(values: Mapping[str, Any]) -> tuple[tuple[Callable[..., View], Any], ...]:
    """Each ``(view function, settings)`` the page computes when its widgets hold ``values``, before
    any click (the prediction's comparison waits for an answer)."""
    return ((view, settings_from(values)),)
