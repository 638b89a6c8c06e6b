"""GradLab: why autograd and finite-difference gradients disagree, and which one is right.

The public names are imported lazily so ``import gradlab`` stays light:
``gradcheck`` and ``GradcheckError`` (:mod:`gradlab.check`), ``sweep``
(:func:`gradlab.step_sweep.api.sweep`, the error-vs-step sweep of :mod:`gradlab.step_sweep`),
``check_layers`` (:mod:`gradlab.layers.check`: each module of a model checked on its own) and ``assert_gradients`` / ``assert_layers`` (:mod:`gradlab.testing.assertions`).
"""

__all__ = ["gradcheck", "GradcheckError", "sweep", "check_layers", "assert_gradients", "assert_layers"]

_HOME = {
    "gradcheck": "gradlab.check",
    "sweep": "gradlab.step_sweep.api",
    "GradcheckError": "gradlab.check",
    "check_layers": "gradlab.layers.check",
    "assert_gradients": "gradlab.testing.assertions",
    "assert_layers": "gradlab.testing.assertions",
}


def __getattr__(name: str):
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'gradlab' has no attribute {name!r}")
