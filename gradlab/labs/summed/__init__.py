"""The Summed-loss lab: a float32 loss summed five ways against its exact sum, and what a check of it prints.

Its page imports this package only: :class:`SummedLossSettings` (what the page's controls set) and
:func:`view` (everything the page shows of them, in a worker). Its modules:
:mod:`~gradlab.labs.summed.loss` (the loss's terms, each summation method's result and error in
ulps of the exact sum), :mod:`~gradlab.labs.summed.differences` (the finite differences a grad
check of it prints: multiples of ulp(L)/h), :mod:`~gradlab.labs.summed.answer` (the answer
sentence), :mod:`~gradlab.labs.summed.figures` (its two charts),
:mod:`~gradlab.labs.summed.page_settings` (the page's widget values -> its settings, and the views
they make) and :mod:`~gradlab.labs.summed.page_view` (the page's view).
"""

from gradlab.check import parse_shape
from gradlab.labs.summed.loss import SUM_METHODS, SummedLossSettings
from gradlab.labs.summed.page_settings import PAGE_DEFAULTS, preset_views, settings_from
from gradlab.labs.summed.page_view import view
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import DTYPE_NAMES

__all__ = ["SummedLossSettings", "settings_from", "preset_views", "PAGE_DEFAULTS", "view", "parse_shape", "SUM_METHODS", "DTYPE_NAMES", "MAX_TERMS"]

#: The most squared errors a loss may sum (its shape's element count).
MAX_TERMS = LIMITS.summed_terms
