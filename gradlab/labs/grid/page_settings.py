"""The Grid page's widget values -> its one settings object, and the views the page computes of them.

``values`` map widget keys to values as ``st.session_state`` holds them (a preset's
:attr:`~gradlab.teaching.presets.Preset.values`); a key left out takes the page's default
(:data:`PAGE_DEFAULTS`). The page and the start-up warm-up (:mod:`gradlab.ui.warm_views`) both
build their settings here, so a preset warmed is the view its link opens.

>>> settings_from({"h": 1e-7})
GridSettings(dtype='float32', x=1.0, h=1e-07, expression='sin(x)')
>>> settings_from({"expr": "x**2"}).expression  # an expression without a function: the custom one
'x**2'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from gradlab.labs.grid.frames import view_of
from gradlab.labs.grid.page_view import view
from gradlab.labs.grid.representable import GridSettings, validated_expression
from gradlab.teaching.catalogue import CATALOGUE, CUSTOM
from gradlab.view import View

__all__ = ["PAGE_DEFAULTS", "expression_from", "settings_from", "preset_views"]

#: Widget key -> the value the page shows with an empty URL: the catalogue's sin(x) at 1 in float32.
PAGE_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"fn": "sin", "x": 1.0, "dtype": "float32", "expr": "sin(x)", "h": 1e-4})


def expression_from(values: Mapping[str, Any]) -> str:
    """The f the widgets name, validated (a GradLabError says what to fix in the box): the typed one
    for "custom", also when ``values`` carry an expression and no function (a link from before the
    function box named sin(x)), else the catalogue's.

    >>> expression_from({"fn": "reciprocal", "expr": "x**2"}), expression_from({"fn": "custom", "expr": "x**2"})
    ('1/x', 'x**2')
    """
    fn = values.get("fn", CUSTOM if "expr" in values else PAGE_DEFAULTS["fn"])
    return validated_expression(values.get("expr", PAGE_DEFAULTS["expr"]) if fn == CUSTOM
                                else CATALOGUE[fn].expression)


def settings_from(values: Mapping[str, Any]) -> GridSettings:
    """The difference the page's widgets holding ``values`` ask for (a GradLabError says what to fix)."""
    v = {**PAGE_DEFAULTS, **values}
    return GridSettings(dtype=v["dtype"], x=float(v["x"]), h=float(v["h"]), expression=expression_from(values))


def preset_views(values: Mapping[str, Any]) -> tuple[tuple[Callable[..., View], Any], ...]:
    """Each ``(view function, settings)`` the page computes when its widgets hold ``values``: one
    view for every step of the slider (:func:`~gradlab.labs.grid.frames.view_of`).

    >>> [(fn.__name__, s.h) for fn, s in preset_views({"h": 1e-7})] == [("view", view_of(settings_from({})).h)]
    True
    """
    return ((view, view_of(settings_from(values))),)
