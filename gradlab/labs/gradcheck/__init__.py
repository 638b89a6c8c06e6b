"""The Grad check lab: a finite-difference gradient check explained, of a function or of a model layer by layer.

Its page imports this package only: what the controls offer and the settings they make, and one
view of each of the page's two views, in a worker: :func:`function_view` (a function or built-in
model checked as a whole, beside its main chart, :func:`eps_sweep_view`) and :func:`layer_view`
(a model built from named layers, each module checked on its own beside the whole model). The
check itself is the library's (:mod:`gradlab.check`, :func:`gradlab.check_layers`). Its modules:

- :mod:`~gradlab.labs.gradcheck.controls`: the page's switch, the controls' values -> settings
- :mod:`~gradlab.labs.gradcheck.answer`: the answer sentences (is the gradient wrong? which layer?)
- :mod:`~gradlab.labs.gradcheck.diagnosis`: the function check's diagnosis, numbers and sentences
- :mod:`~gradlab.labs.gradcheck.tables`: the values and modules tables, their columns and colours
- :mod:`~gradlab.labs.gradcheck.figures`: the eps sweep, the Taylor test, the layer chart
- :mod:`~gradlab.labs.gradcheck.python_call`: the Python lines that reproduce a layer check
- :mod:`~gradlab.labs.gradcheck.page_settings`: the page's widget values -> its settings, and the views they make
- :mod:`~gradlab.labs.gradcheck.page_view`: the page's views, its worker entries
"""

from gradlab.check import GRAD_OUTPUTS, LOSSES, MODELS, MODES, REDUCTIONS, sweep_settings_for
from gradlab.labs.gradcheck.answer import LAYER_QUESTION, QUESTION
from gradlab.labs.gradcheck.controls import (CHECKS, DEFAULT_INPUT, DEFAULT_STACK, DEFAULT_STEP, FUNCTION,
                                             LAYER_VOCABULARY, MODE_HELP, MODEL, appended_layer,
                                             function_settings, layer_settings)
from gradlab.labs.gradcheck.page_settings import preset_views, settings_from
from gradlab.labs.gradcheck.page_view import eps_sweep_view, function_view, layer_view, marked
from gradlab.labs.gradcheck.tables import MODULE_COLUMNS, VALUE_COLUMNS, state_styler
from gradlab.layers.check import CALLS
from gradlab.layers.settings import LOSSES as LAYER_LOSSES
from gradlab.layers.vocabulary import LAYERS
from gradlab.limits import LIMITS

__all__ = ["function_view", "settings_from", "preset_views", "eps_sweep_view", "marked", "layer_view", "sweep_settings_for",
           "function_settings", "layer_settings", "appended_layer", "CHECKS", "FUNCTION", "MODEL",
           "QUESTION", "LAYER_QUESTION", "DEFAULT_STEP", "MODE_HELP", "DEFAULT_STACK", "DEFAULT_INPUT",
           "LAYER_VOCABULARY", "LAYERS", "MODELS", "LOSSES", "LAYER_LOSSES", "MODES", "REDUCTIONS",
           "GRAD_OUTPUTS", "CALLS", "VALUE_COLUMNS", "MODULE_COLUMNS", "state_styler",
           "MAX_ELEMENTS", "MAX_SAMPLES", "MAX_EXPRESSION_CHARS"]

#: The most elements an input may have, the most samples (or directions) a check takes, the
#: longest expression (and stack).
MAX_ELEMENTS, MAX_SAMPLES, MAX_EXPRESSION_CHARS = (LIMITS.tensor_elements, LIMITS.sampled_elements,
                                                   LIMITS.expression_chars)
