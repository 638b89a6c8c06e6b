"""The Network lab: a network's input gradient, autograd against a quantised central difference.

Its page imports this package only: :class:`NetworkSettings` (what the page's controls set) and
:func:`view` (everything the page shows of them, in a worker). Its modules:

- :mod:`~gradlab.labs.network.model`: the settings, the seeded network and input, autograd's gradient
- :mod:`~gradlab.labs.network.arithmetic`: its forward pass with the same bits on every CPU
  (fixed-order float64 sums rounded once)
- :mod:`~gradlab.labs.network.engine`: the finite difference, its quantum ulp(y)/(2·dx), the error
  against the step
- :mod:`~gradlab.labs.network.answer`: the answer sentence (which gradient is wrong?)
- :mod:`~gradlab.labs.network.figures`: the staircase of estimates and the error against the step
- :mod:`~gradlab.labs.network.quiz`: the prediction (the same network in float64), its choices and reveal
- :mod:`~gradlab.labs.network.page_settings`: the page's widget values -> its settings, and the views they make
- :mod:`~gradlab.labs.network.page_view`: the page's view, its worker entry
"""

from gradlab.labs.network.engine import SCIPY_NOTE
from gradlab.labs.network.model import ACTIVATIONS, NetworkSettings, parse_hidden
from gradlab.labs.network.page_settings import PAGE_DEFAULTS, preset_views, settings_from
from gradlab.labs.network.page_view import view
from gradlab.limits import LIMITS

__all__ = ["NetworkSettings", "settings_from", "preset_views", "PAGE_DEFAULTS", "view", "ACTIVATIONS", "parse_hidden", "SCIPY_NOTE", "MAX_WIDTH", "MAX_DEPTH"]

#: The most units in one layer (and inputs), and the most hidden layers, a network may have.
MAX_WIDTH, MAX_DEPTH = LIMITS.network_width, LIMITS.network_depth
