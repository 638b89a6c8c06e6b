"""The Backward lab: what ``y.backward(gradient=v)`` computes.

Its page (and the page's sections, :mod:`gradlab.ui.backward_sections`) import this package only:
the settings their controls set, :func:`view`, :func:`steps_view` and :func:`matrix_view` (what each
section shows, in a worker) and the few helpers their controls use. Its modules:

- :mod:`~gradlab.labs.backward.engine`: vector-Jacobian products of the question's example,
  accumulation of ``.grad``, ``retain_graph``, a session of backward calls;
- :mod:`~gradlab.labs.backward.matrix_vjp`: a Jacobian that is not diagonal, ``z = W x``;
- :mod:`~gradlab.labs.backward.empty_example`: the question's ``torch.empty`` printout;
- :mod:`~gradlab.labs.backward.answer`: the page's answer sentence;
- :mod:`~gradlab.labs.backward.quiz`: the page's prediction, from the lab's own numbers;
- :mod:`~gradlab.labs.backward.printout`: vectors, tables and code as the page prints them;
- :mod:`~gradlab.labs.backward.figures`: the .grad rows, a Jacobian as a heatmap, vᵀJ as weighted rows;
- :mod:`~gradlab.labs.backward.page_settings`: the page's widget values -> its settings, and the views they make
- :mod:`~gradlab.labs.backward.page_view`: the sections' views, its worker entries.

The names load when first read: the engine's modules need no Plotly.

>>> from gradlab.labs import backward
>>> backward.parse_vector("1, 2"), backward.vector_text((0.5, 2.0))
((1.0, 2.0), '0.5, 2')
"""

from __future__ import annotations

from gradlab.front_door import lazy_names
from gradlab.limits import LIMITS

#: Where each name the page and its sections read lives.
_HOME = {
    "VJPSettings": "gradlab.labs.backward.engine",
    "BackwardSession": "gradlab.labs.backward.engine",
    "STEP_CODES": "gradlab.labs.backward.engine",
    "parse_vector": "gradlab.labs.backward.engine",
    "ExampleVJPSettings": "gradlab.labs.backward.matrix_vjp",
    "MATRIX_EXAMPLES": "gradlab.labs.backward.matrix_vjp",
    "empty_demo": "gradlab.labs.backward.empty_example",
    "empty_demo_code": "gradlab.labs.backward.printout",
    "vector_text": "gradlab.labs.backward.printout",
    "view": "gradlab.labs.backward.page_view",
    "settings_from": "gradlab.labs.backward.page_settings",
    "PAGE_DEFAULTS": "gradlab.labs.backward.page_settings",
    "example_settings": "gradlab.labs.backward.page_settings",
    "preset_views": "gradlab.labs.backward.page_settings",
    "steps_view": "gradlab.labs.backward.page_view",
    "matrix_view": "gradlab.labs.backward.page_view",
}

__all__ = sorted([*_HOME, "EXPRESSION_CHARS"])

#: The longest vector (or list of steps) a visitor may type.
EXPRESSION_CHARS = LIMITS.expression_chars


__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
