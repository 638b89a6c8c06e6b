"""The Backward page's widget values -> its settings, and the views the page computes of them.

``values`` map widget keys to values as ``st.session_state`` holds them (a preset's
:attr:`~gradlab.teaching.presets.Preset.values`); a key left out takes the page's default
(:data:`PAGE_DEFAULTS`). The page and the start-up warm-up (:mod:`gradlab.ui.warm_views`) both
build their settings here, so a preset warmed is the view its link opens. Section 1's tensors and v
(:func:`settings_from`), section 2's steps on them (``steps``) and section 3's example (``mx``,
``mv``) each make a view.

>>> settings_from({"v": "1, 1, 1"}).v
(1.0, 1.0, 1.0)
>>> [fn.__name__ for fn, _ in preset_views({"steps": "br,b,b"})]
['view', 'steps_view', 'matrix_view']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from gradlab.errors import GradLabError
from gradlab.labs.backward.engine import BackwardSession, VJPSettings, parse_vector
from gradlab.labs.backward.matrix_vjp import MATRIX_EXAMPLES, ExampleVJPSettings
from gradlab.labs.backward.page_view import matrix_view, steps_view, view
from gradlab.labs.backward.printout import vector_text
from gradlab.view import View

__all__ = ["PAGE_DEFAULTS", "VECTORS", "settings_from", "example_settings", "preset_views"]

_D = VJPSettings()
#: The keys of section 1's vectors, in the order y reads them (and their errors are reported).
VECTORS = ("a", "b", "c", "v")
#: Widget key -> the value the page shows with an empty URL (the question's tensors; section 3's v
#: is its example's own: :func:`example_settings`).
PAGE_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    **{key: vector_text(getattr(_D, key)) for key in VECTORS}, "dtype": _D.dtype, "steps": "",
    "mx": next(iter(MATRIX_EXAMPLES))})


def settings_from(values: Mapping[str, Any]) -> VJPSettings:
    """Section 1's tensors and v, from the typed vectors (a GradLabError says what to fix)."""
    v = {**PAGE_DEFAULTS, **values}
    vectors = {key: parse_vector(v[key], key) for key in VECTORS}
    return VJPSettings(vectors["a"], vectors["b"], vectors["c"], vectors["v"], v["dtype"])


def example_settings(values: Mapping[str, Any]) -> ExampleVJPSettings:
    """Section 3's example and its v (by default the example's own; a GradLabError says what to fix).

    >>> example_settings({}) == ExampleVJPSettings(), example_settings({"mv": "2, 0"}).v
    (True, (2.0, 0.0))
    """
    name = values.get("mx", PAGE_DEFAULTS["mx"])
    return ExampleVJPSettings(name, parse_vector(values.get("mv", vector_text(MATRIX_EXAMPLES[name].v)), "v"))


def preset_views(values: Mapping[str, Any]) -> tuple[tuple[Callable[..., View], Any], ...]:
    """Each ``(view function, settings)`` the page computes when its widgets hold ``values``: section
    1's view, section 2's replay of its steps (if any), section 3's example; a section that refuses
    its values computes nothing (it says why instead)."""
    settings = settings_from(values)
    views: list[tuple[Callable[..., View], Any]] = [(view, settings)]
    for of, made in ((steps_view, lambda: BackwardSession.from_text(values.get("steps", ""), settings)),
                     (matrix_view, lambda: example_settings(values))):
        try:
            views.append((of, made()))
        except GradLabError:
            continue
    return tuple((of, s) for of, s in views if of is not steps_view or s.steps)
