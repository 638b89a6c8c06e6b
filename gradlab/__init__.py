"""GradLab: why autograd and finite-difference gradients disagree, and which one is right.

``gradlab.gradcheck`` is imported lazily so ``import gradlab`` stays light.
"""

__all__ = ["gradcheck", "GradcheckError"]


def __getattr__(name: str):
    if name in __all__:
        from gradlab.check import api as check

        return getattr(check, name)
    raise AttributeError(f"module 'gradlab' has no attribute {name!r}")
