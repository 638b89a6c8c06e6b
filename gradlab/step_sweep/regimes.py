"""Where round-off and where truncation dominates a sweep's curves: each real difference's
predicted best step h* splits its curve, round-off left of it (the error grows as h shrinks),
truncation right (it grows with h). The complex step has no round-off V, so no split.

The answer names the two regimes, the chart shades them per curve, and the page ties the
words to the shading (:mod:`gradlab.ui.regime_links`); all three read :func:`regime_steps`.

>>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
>>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float32", "float64"), ("central",), points=9))
>>> [(d, s, 1e-6 < h < 1e-1) for d, s, h in regime_steps(r)]
[('float32', 'central', True), ('float64', 'central', True)]
>>> regime_of(1e-6, 5e-3), regime_of(1e-2, 5e-3)
('round-off', 'truncation')
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gradlab.numerics.schemes import get_scheme

if TYPE_CHECKING:  # a protocol, not the engine's class: the engine's result draws these (gradlab.step_sweep.swept)
    from gradlab.step_sweep.swept import Swept

__all__ = ["REGIMES", "regime_steps", "regime_of", "band_name", "regime_sentence"]

#: The two regimes, left (small steps) to right.
REGIMES = ("round-off", "truncation")


def regime_steps(result: Swept) -> list[tuple[str, str, float]]:
    """(dtype, scheme, h*) of every curve whose regimes split inside the swept steps: each real
    difference (not the complex step) with a finite predicted best step between the sweep's ends,
    dtype by dtype in the order the settings name them."""
    settings = result.settings
    lo, hi = settings.eps_min, settings.eps_max
    return [(dtype, str(r["scheme"]), float(r["predicted_eps"])) for dtype in settings.dtypes for r in result.best_rows
            if r["dtype"] == dtype and not get_scheme(r["scheme"]).complex_step
            and math.isfinite(r["predicted_eps"]) and lo < r["predicted_eps"] < hi]


def regime_of(step: float, h_star: float) -> str:
    """The regime that dominates a curve at ``step``, for its best step ``h_star``."""
    return REGIMES[0] if step < h_star else REGIMES[1]


def band_name(regime: str, dtype: str, scheme: str) -> str:
    """The one name a curve's regime carries on the chart (its band and its highlight).

    >>> band_name("round-off", "float32", "central")
    'round-off · float32 central'
    """
    return f"{regime} · {dtype} {scheme}"


def regime_sentence(result: Swept) -> str | None:
    """What the chart's two sides are, for the answer; None when no curve splits in the sweep.
    Short: on a phone each line of the answer costs the chart its bottom.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> regime_sentence(run_sweep(SweepSettings("exp(x)", 1.0, ("float32",), ("central",), points=9)))
    'Round-off dominates left of its best step, truncation right.'
    >>> regime_sentence(run_sweep(SweepSettings("exp(x)", 1.0, ("float32",), ("central", "complex_step"), points=9)))
    "Round-off dominates left of each difference's best step, truncation right."
    """
    steps = regime_steps(result)
    if not steps:
        return None
    curves = len(result.best)  # one row per (dtype, scheme)
    whose = ("its" if curves == 1 else "each") if len(steps) == curves else "each difference's"
    return f"{REGIMES[0].capitalize()} dominates left of {whose} best step, {REGIMES[1]} right."
