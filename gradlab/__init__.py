"""GradLab: why autograd and finite-difference gradients disagree, and which one is right.

The public names are imported lazily so ``import gradlab`` stays light:
``gradcheck`` and ``GradcheckError`` (:mod:`gradlab.check`), ``sweep``
(:func:`gradlab.step_sweep.api.sweep`, the error-vs-step sweep of :mod:`gradlab.step_sweep`),
``check_layers`` (:mod:`gradlab.layers.check`: each module of a model checked on its own) and ``assert_gradients`` / ``assert_layers`` (:mod:`gradlab.testing.assertions`).
"""

from gradlab.front_door import lazy_names

__all__ = ["gradcheck", "GradcheckError", "sweep", "check_layers", "assert_gradients", "assert_layers"]

_HOME = {
    "gradcheck": "gradlab.check",
    "sweep": "gradlab.step_sweep.api",
    "GradcheckError": "gradlab.check",
    "check_layers": "gradlab.layers.check",
    "assert_gradients": "gradlab.testing.assertions",
    "assert_layers": "gradlab.testing.assertions",
}


__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
