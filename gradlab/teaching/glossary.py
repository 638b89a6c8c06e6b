"""Every term GradLab uses, in one plain sentence a second-year student knows.

Pages define a term where it first appears, as the hover help of the widget or
metric that uses it (``help=define("ulp")``) or as one line under it. One
definition per term, here, so every page says the same thing.

>>> define("ulp")
'ulp: the gap between a number and the next larger number the dtype can store, the unit in which small rounding differences are counted.'
>>> define("nonsense")
Traceback (most recent call last):
...
KeyError: "No glossary entry 'nonsense'; known terms: ulp, unit round-off, ..."
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["GLOSSARY", "define", "definition"]

GLOSSARY: Mapping[str, str] = MappingProxyType({
    "ulp": "the gap between a number and the next larger number the dtype can store, "
           "the unit in which small rounding differences are counted.",
    "unit round-off": "the largest relative error of rounding one exact result to the dtype, "
                      "half of machine epsilon (about 6e-8 for float32).",
    "round-off error": "the error that comes from storing every intermediate result with a fixed "
                       "number of binary digits; in a finite difference it grows as the step gets smaller.",
    "truncation error": "the error a formula makes by stopping a Taylor series after a few terms; "
                        "in a finite difference it shrinks as the step gets smaller.",
    "rho": "the relative error of a computed derivative, |computed - exact| / |exact|, "
           "measured against the exact value worked out at high precision.",
    "holomorphic": "a function of a complex variable that has a complex derivative everywhere nearby, "
                   "like sin, exp or a polynomial, but not abs or max.",
    "Richardson extrapolation": "combining two estimates made with steps h and h/2 so that their "
                                "leading errors cancel, giving a more accurate estimate than either.",
    "atol": "the absolute tolerance: a difference smaller than this number passes, "
            "whatever the size of the values compared.",
    "rtol": "the relative tolerance: a difference smaller than this fraction of the "
            "expected value's size passes.",
    "relative_perturbation": "a step chosen as a fraction of the input's size, h = fraction × |x|, "
                             "so large and small inputs are nudged by the same proportion.",
    "VJP": "vector-Jacobian product: the vector v times the matrix of partial derivatives, "
           "which is what backward(gradient=v) computes without building the matrix.",
    "JVP": "Jacobian-vector product: the matrix of partial derivatives times a direction vector, "
           "the change of every output when the input moves a little in that direction.",
    "central difference": "the slope (f(x + h) - f(x - h)) / 2h, whose truncation error "
                          "shrinks like h squared.",
    "forward difference": "the slope (f(x + h) - f(x)) / h, whose truncation error shrinks like h.",
    "machine epsilon": "the distance from 1 to the next larger number the dtype can store "
                       "(2^-23, about 1.2e-7, for float32).",
    "catastrophic cancellation": "the loss of correct digits when two nearly equal rounded numbers "
                                 "are subtracted: their common leading digits cancel and mostly "
                                 "rounding error is left.",
})


def definition(term: str) -> str:
    """The one-sentence definition of ``term``; ``KeyError`` lists the known terms.

    >>> definition("atol").startswith("the absolute tolerance")
    True
    """
    try:
        return GLOSSARY[term]
    except KeyError:
        known = ", ".join(GLOSSARY)
        raise KeyError(f"No glossary entry {term!r}; known terms: {known}") from None


def define(term: str) -> str:
    """``"term: definition"``, ready for a widget's or a metric's ``help=``.

    >>> define("VJP").startswith("VJP: vector-Jacobian product")
    True
    """
    return f"{term}: {definition(term)}"
