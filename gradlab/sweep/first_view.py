"""The Explorer's first view (an empty URL) as the engine takes it: the home page draws it too.

>>> s = default_sweep_settings()
>>> s.dtypes, s.schemes, s.points
(('float32', 'float64'), ('central',), 61)
>>> s.eps_min < 1e-10 < 1e-2 < s.eps_max
True
"""

from __future__ import annotations

from gradlab.sweep.engine import SweepSettings
from gradlab.sweep.step_range import chart_step_range
from gradlab.teaching.catalogue import CATALOGUE
from gradlab.teaching.explorer_defaults import DEFAULTS

__all__ = ["default_sweep_settings"]


def default_sweep_settings() -> SweepSettings:
    """The sweep behind the Explorer's default widgets, its steps fitted to the dtypes' V."""
    eps_min, eps_max = chart_step_range(DEFAULTS["dtypes"], DEFAULTS["schemes"])
    return SweepSettings(CATALOGUE[DEFAULTS["fn"]].expression, float(DEFAULTS["x"]), DEFAULTS["dtypes"],
                         DEFAULTS["schemes"], eps_min, eps_max, DEFAULTS["points"])
