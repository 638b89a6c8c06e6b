"""The Explorer page's widget values -> its one validated sweep, and the views the page computes of it.

``values`` map widget keys to values as ``st.session_state`` holds them (a preset's
:attr:`~gradlab.teaching.presets.Preset.values`); a key left out takes the page's default
(:data:`~gradlab.labs.explorer.defaults.DEFAULTS`). The steps are derived as the page derives
them: fitted to the dtypes while ``eps_auto`` is on (:func:`~gradlab.labs.explorer.settings.fitted_steps`),
else ``eps_range``; a step range given without ``eps_auto`` means the fit is off, as a link naming
one does. The page and the start-up warm-up (:mod:`gradlab.ui.warm_views`) both build their
settings here, so a preset warmed is the view its link opens.

>>> s = settings_from({"fn": "reciprocal", "x": 0.3, "eps_range": (1e-12, 1.0)})
>>> s.expression, s.eps_min, s.eps_max
('1/x', 1e-12, 1.0)
>>> settings_from({}) == default_sweep_settings()
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gradlab.labs.explorer.defaults import DEFAULTS
from gradlab.labs.explorer.first_view import default_sweep_settings
from gradlab.labs.explorer.page_view import view
from gradlab.labs.explorer.settings import explorer_settings, fitted_steps
from gradlab.step_sweep.engine import SweepSettings
from gradlab.teaching.catalogue import CUSTOM
from gradlab.view import View

__all__ = ["settings_from", "preset_views"]


def settings_from(values: Mapping[str, Any]) -> SweepSettings:
    """The sweep the page's widgets holding ``values`` ask for, validated (the lab's ControlError or
    ExpressionError says what to fix)."""
    v = {**DEFAULTS, **values}
    fitted = values.get("eps_auto", "eps_range" not in values and DEFAULTS["eps_auto"])
    eps_min, eps_max = fitted_steps(v["dtypes"], v["schemes"])[:2] if fitted else v["eps_range"]
    return explorer_settings(v["fn"], v["expr"] if v["fn"] == CUSTOM else "", v["x"], v["dtypes"], v["schemes"],
                             float(eps_min), float(eps_max), v["points"])


def preset_views(values: Mapping[str, Any]) -> tuple[tuple[Callable[..., View], Any], ...]:
    """Each ``(view function, settings)`` the page computes when its widgets hold ``values``: the
    sweep (the formulas wait for their expander to open, the prediction's own sweep for an answer).

    >>> [fn.__name__ for fn, _ in preset_views({})]
    ['view']
    """
    return ((view, settings_from(values)),)
