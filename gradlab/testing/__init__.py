"""Gradient checking from a test suite: ``assert_gradients`` (a check as a pytest assertion),
``assert_layers`` (every module of a model checked on its own),
and the corpus of correct functions a checker is held to (:mod:`gradlab.testing.corpus`).

Both are imported lazily, so ``import gradlab.testing`` stays light.
"""

__all__ = ["assert_gradients", "assert_layers"]


def __getattr__(name: str):
    if name in __all__:
        from gradlab.testing import assertions

        return getattr(assertions, name)
    raise AttributeError(f"module 'gradlab.testing' has no attribute {name!r}")
