"""The Explorer lab: the error of finite differences and autograd against the step size.

Its pages import this package only (the Explorer; the home page, which draws its first view):
:func:`explorer_settings` (the one validated sweep the controls ask for), :func:`view` (everything
the page shows of it, in a worker) and what the controls offer and say. The sweep itself is the
library's :mod:`gradlab.step_sweep`. Its modules:

- :mod:`~gradlab.labs.explorer.defaults`: the widgets' defaults, the step slider's ends
- :mod:`~gradlab.labs.explorer.settings`: the controls -> validated settings, the fitted steps
- :mod:`~gradlab.labs.explorer.first_view`: the first view's settings and the home page's chart of it
- :mod:`~gradlab.labs.explorer.answer`: the answer sentence (how close each dtype's best difference
  and autograd get)
- :mod:`~gradlab.labs.explorer.figures`: the error (or estimate) against the step
- :mod:`~gradlab.labs.explorer.chart_marks`: the chart's decorations (regime bands, ε marks, axes)
- :mod:`~gradlab.labs.explorer.chart_slider`: its step slider and compact legend
- :mod:`~gradlab.labs.explorer.chart_play`: its Play button (the V drawn as h sweeps)
- :mod:`~gradlab.labs.explorer.tables`: the tables under the chart (rounding, best steps, autograd)
- :mod:`~gradlab.labs.explorer.quiz`: the prediction (where is a dtype's best step?) and its reveal
- :mod:`~gradlab.labs.explorer.page_settings`: the page's widget values -> its settings, and the views they make
- :mod:`~gradlab.labs.explorer.page_view`: the page's view, its worker entries
"""

from gradlab.figures.step_slider import step_label
from gradlab.labs.explorer.defaults import (DEFAULTS, EPS_LARGEST, EPS_SMALLEST, POINTS_MIN, POINTS_STEP,
                                            STEP_DEFAULT)
from gradlab.labs.explorer.first_view import default_sweep_settings
from gradlab.labs.explorer.page_settings import preset_views, settings_from
from gradlab.labs.explorer.page_view import ChartOptions, ExplorerView, formulas, main_chart, view
from gradlab.labs.explorer.settings import (EMULATED_HELP, STEPS, ControlError, explorer_settings, fitted_steps,
                                            picked_point)
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES
from gradlab.numerics.expression_syntax import ExpressionError
from gradlab.teaching.catalogue import CUSTOM, FUNCTION_OPTIONS, function_label

__all__ = ["explorer_settings", "settings_from", "preset_views", "ControlError", "ExpressionError", "view", "ExplorerView", "formulas",
           "ChartOptions", "main_chart", "default_sweep_settings", "fitted_steps", "picked_point",
           "DEFAULTS", "FUNCTION_OPTIONS", "CUSTOM", "function_label", "ALL_DTYPE_NAMES", "EMULATED_HELP",
           "EPS_SMALLEST", "EPS_LARGEST", "POINTS_MIN", "POINTS_STEP", "STEP_DEFAULT", "STEPS", "step_label",
           "MAX_X", "MAX_EXPRESSION_CHARS", "MAX_POINTS"]

#: The largest |x| the point control takes, the longest expression, the most points in a sweep.
MAX_X, MAX_EXPRESSION_CHARS, MAX_POINTS = LIMITS.literal_magnitude, LIMITS.expression_chars, LIMITS.sweep_points
