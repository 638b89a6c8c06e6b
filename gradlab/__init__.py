"""GradLab: why autograd and finite-difference gradients disagree, and which one is right.

The public names are imported lazily so ``import gradlab`` stays light:
``gradcheck`` and ``GradcheckError`` (:mod:`gradlab.check.api`), ``sweep``
(the :mod:`gradlab.sweep` package, which calls :func:`gradlab.sweep.api.sweep` when
called) and ``assert_gradients`` (:mod:`gradlab.testing.assertions`).
"""

__all__ = ["gradcheck", "GradcheckError", "sweep", "assert_gradients"]

_HOME = {
    "gradcheck": "gradlab.check.api",
    "GradcheckError": "gradlab.check.api",
    "assert_gradients": "gradlab.testing.assertions",
}


def __getattr__(name: str):
    if name == "sweep":  # the package: importing it binds gradlab.sweep for good
        import importlib

        return importlib.import_module("gradlab.sweep")
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'gradlab' has no attribute {name!r}")
