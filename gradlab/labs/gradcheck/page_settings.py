"""The Grad check page's widget values -> its one settings object, and the views the page computes of them.

``values`` map widget keys to values as ``st.session_state`` holds them (a preset's
:attr:`~gradlab.teaching.presets.Preset.values`); a key left out takes the page's default
(:data:`PAGE_DEFAULTS`). ``check`` picks the view: a function (a
:class:`~gradlab.check.CheckSettings`, :func:`~gradlab.labs.gradcheck.controls.function_settings`)
or a model layer by layer (:func:`~gradlab.labs.gradcheck.controls.layer_settings`). A control
the page does not draw for these values (the expression of a built-in model, ``grad_outputs``
unless the reduction is none) is not read. The page and the start-up warm-up
(:mod:`gradlab.ui.warm_views`) both build their settings here, so a preset warmed is the view
its link opens.

>>> settings_from({"dtype": "float64", "eps": "1e-03"}).eps
0.001
>>> settings_from({"check": MODEL}).stack == DEFAULT_STACK
True
>>> [fn.__name__ for fn, _ in preset_views({})]
['function_view', 'eps_sweep_view']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from gradlab.check import GRAD_OUTPUTS, LOSSES, MODELS, MODES, REDUCTIONS, CheckSettings, sweep_settings_for
from gradlab.labs.gradcheck.controls import (CHECKS, DEFAULT_INPUT, DEFAULT_STACK, DEFAULT_STEP, MODEL,
                                             function_settings, layer_settings)
from gradlab.labs.gradcheck.page_view import eps_sweep_view, function_view, layer_view
from gradlab.layers.check import CALLS
from gradlab.layers.settings import LOSSES as LAYER_LOSSES
from gradlab.layers.settings import LayerCheckSettings
from gradlab.view import View

__all__ = ["PAGE_DEFAULTS", "FUNCTION_KEYS", "settings_from", "preset_views"]

#: Widget key -> the value the page shows with an empty URL (the float32 check question's loss,
#: the model view's default stack).
PAGE_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "check": CHECKS[0], "shape": "140x120", "reduction": REDUCTIONS[0], "dtype": "float32", "scheme": "central",
    "eps": DEFAULT_STEP, "model": MODELS[0], "expression": "sin(x)", "loss": LOSSES[0], "mode": MODES[0],
    "samples": 5, "seed": 0, "numeric64": False, "grad_outputs": GRAD_OUTPUTS[0],
    "stack": DEFAULT_STACK, "input": DEFAULT_INPUT, "calls": CALLS[0], "model_loss": LAYER_LOSSES[0]})
#: The function view's controls drawn whatever the others hold.
FUNCTION_KEYS = ("shape", "reduction", "dtype", "scheme", "eps", "model", "loss", "mode", "samples", "seed",
                 "numeric64")


def settings_from(values: Mapping[str, Any]) -> CheckSettings | LayerCheckSettings:
    """The check the page's widgets holding ``values`` ask for (a GradLabError says what to fix)."""
    v = {**PAGE_DEFAULTS, **values}
    if v["check"] == MODEL:
        return layer_settings(v["stack"], v["input"], dtype=v["dtype"], mode=v["mode"], seed=v["seed"],
                              calls=v["calls"], loss=v["model_loss"], reduction=v["reduction"])
    drawn = {key: v[key] for key in FUNCTION_KEYS}
    if v["model"] == "expression":
        drawn["expression"] = v["expression"]
    if v["reduction"] == "none":
        drawn["grad_outputs"] = v["grad_outputs"]
    return function_settings(drawn)


def preset_views(values: Mapping[str, Any]) -> tuple[tuple[Callable[..., View], Any], ...]:
    """Each ``(view function, settings)`` the page computes when its widgets hold ``values``: the layer
    view, or the function check and its main chart's eps sweep (a full check is not a cached view:
    it draws its progress, :mod:`gradlab.ui.gradcheck_progress`)."""
    settings = settings_from(values)
    if isinstance(settings, LayerCheckSettings):
        return ((layer_view, settings),)
    check = () if settings.mode == "full" else ((function_view, settings),)
    return (*check, (eps_sweep_view, sweep_settings_for(settings)))
