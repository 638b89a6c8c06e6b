"""The Grid lab: one forward difference on a dtype's grid, and why (x+h) − x is not h.

Its page imports this package only: :class:`GridSettings` (what its controls set), :func:`view`
(everything the page shows of a view, in a worker), :func:`view_of` (the view a step belongs to)
and :func:`at_step` (a view at the page's step), and what its controls offer. Its modules:

- :mod:`~gradlab.labs.grid.representable`: the representable numbers around x, x+h, f(x) and
  f(x+h), the step taken, the bits kept;
- :mod:`~gradlab.labs.grid.story`: what the page and ``python -m gradlab grid`` say of it, its
  answer sentence included, and the secant's slope as h shrinks;
- :mod:`~gradlab.labs.grid.frames`: the difference at every stop of the chart's step slider;
- :mod:`~gradlab.labs.grid.printout`: the facts, numbers and bits under the chart, and the
  precision table, as the page prints them;
- :mod:`~gradlab.labs.grid.figures`: the chart on the grid (with its step slider) and the
  secant's slope against h;
- :mod:`~gradlab.labs.grid.page_settings`: the page's widget values -> its settings, and the views they make
- :mod:`~gradlab.labs.grid.page_view`: the page's view, its worker entry.

The names load when first read, so ``python -m gradlab grid`` (the engine modules, no figures)
imports no Plotly.

>>> from gradlab.labs import grid
>>> grid.view_of(grid.GridSettings(h=1e-7)).h == grid.VIEW_STEP
True
"""

from __future__ import annotations

from gradlab.front_door import lazy_names
from gradlab.limits import LIMITS

#: Where each name the page reads lives.
_HOME = {
    "GridSettings": "gradlab.labs.grid.representable",
    "validated_expression": "gradlab.labs.grid.representable",
    "view": "gradlab.labs.grid.page_view",
    "settings_from": "gradlab.labs.grid.page_settings",
    "PAGE_DEFAULTS": "gradlab.labs.grid.page_settings",
    "expression_from": "gradlab.labs.grid.page_settings",
    "preset_views": "gradlab.labs.grid.page_settings",
    "at_step": "gradlab.labs.grid.page_view",
    "view_of": "gradlab.labs.grid.frames",
    "VIEW_STEP": "gradlab.labs.grid.frames",
    "GRID_STEP_RANGE": "gradlab.labs.grid.frames",
    "grid_steps": "gradlab.labs.grid.frames",
    "CATALOGUE": "gradlab.teaching.catalogue",
    "CUSTOM": "gradlab.teaching.catalogue",
    "FUNCTION_OPTIONS": "gradlab.teaching.catalogue",
    "function_label": "gradlab.teaching.catalogue",
    "ALL_DTYPE_NAMES": "gradlab.numerics.dtypes",
}

__all__ = sorted([*_HOME, "X_MAGNITUDE", "EXPRESSION_CHARS"])

#: The largest |x| the point box takes, and the longest f a visitor may type.
X_MAGNITUDE, EXPRESSION_CHARS = LIMITS.literal_magnitude, LIMITS.expression_chars


__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
