"""Every term GradLab uses, in one plain sentence a second-year student knows.

Pages define a term where it first appears, as the hover help of the widget or
metric that uses it (``help=define("ulp")``) or as one line under it. One
definition per term, here, so every page says the same thing.

>>> define("ulp")  # doctest: +ELLIPSIS
'ulp: unit in the last place: the gap between a number and the next larger number the dtype can store.'
>>> define("nonsense")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
KeyError: "No glossary entry 'nonsense'; known terms: ulp, unit round-off, ..."
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["GLOSSARY", "PAGE_TERMS", "define", "definition", "term"]

GLOSSARY: Mapping[str, str] = MappingProxyType({
    "ulp": "unit in the last place: the gap between a number and the next larger number the "
           "dtype can store.",
    "unit round-off": "the largest relative error of rounding one exact result to the dtype, "
                      "half of machine epsilon (2^-24, about 6e-8, for float32).",
    "machine epsilon": "the distance from 1 to the next larger number the dtype can store "
                       "(2^-23, about 1.2e-7, for float32).",
    "correctly rounded": "the stored result is the number of the dtype nearest the exact one, "
                         "so it is off by at most half an ulp.",
    "round-off error": "the error that comes from storing every intermediate result with a fixed "
                       "number of binary digits; in a finite difference it is divided by the step, "
                       "so it grows as the step gets smaller.",
    "truncation error": "the error a formula makes by stopping a Taylor series after a few terms; "
                        "in a finite difference it shrinks as the step gets smaller (like h, or h "
                        "squared for a central difference).",
    "catastrophic cancellation": "the loss of correct digits when two nearly equal rounded numbers "
                                 "are subtracted: their common leading digits cancel and mostly "
                                 "rounding error is left.",
    "relative error": "|estimate - exact| / |exact|; 1e-6 means about six correct digits.",
    "quantum": "the spacing ulp(L)/h of the values a forward difference of a rounded loss L can take: "
               "two rounded losses differ by a whole number of ulp(L), divided by h.",
    "sum threshold": "the smallest increase of one term that changes a rounded sum at all; for a "
                     "sum rounded once it is about half an ulp of the sum.",
    "exact value": "the formula computed at high precision (mpmath) at the same rounded input, "
                   "then compared without rounding.",
    "central difference": "the slope (f(x + h) - f(x - h)) / 2h, whose truncation error "
                          "shrinks like h squared.",
    "forward difference": "the slope (f(x + h) - f(x)) / h, whose truncation error shrinks like h.",
    "complex step": "f'(x) is taken as Im f(x + ih) / h: there is no subtraction, so no round-off "
                    "blow-up, but f must be holomorphic.",
    "holomorphic": "a function of a complex variable that has a complex derivative everywhere nearby, "
                   "like sin, exp or a polynomial, but not abs or max.",
    "Richardson extrapolation": "combining two estimates made with steps h and h/2 so that their "
                                "leading truncation errors cancel, giving a more accurate estimate "
                                "than either.",
    "rho": "the relative perturbation ρ = h·|∂L/∂xᵢ| / |L|: the fraction of the loss one step "
           "changes; near the dtype's machine epsilon, the difference of two losses is mostly rounding.",
    "relative_perturbation": "ρ = h·|∂L/∂xᵢ| / |L|: the fraction of the loss one step changes; "
                             "near the dtype's machine epsilon, the difference of two losses is "
                             "mostly rounding.",
    "atol": "the absolute tolerance: a difference smaller than this number passes, "
            "whatever the size of the values compared (it matters near 0).",
    "rtol": "the relative tolerance: a difference smaller than this fraction of the "
            "expected value's size passes.",
    "atol/rtol": "a value passes when |autograd - finite difference| <= atol + rtol·|finite "
                 "difference|: atol is absolute (it matters near 0), rtol a fraction of the value.",
    "Jacobian": "the table of every partial derivative ∂yᵢ/∂xⱼ, one row per output, one column "
                "per input.",
    "VJP": "vector-Jacobian product: the vector v times the matrix of partial derivatives, "
           "which is what backward(gradient=v) computes without building the matrix.",
    "JVP": "Jacobian-vector product: the matrix of partial derivatives times a direction vector, "
           "the change of every output when the input moves a little in that direction.",
    "random direction": "a vector of random signs over many input elements: one finite difference along "
                        "it checks all of them at once, since an element whose gradient is wrong moves "
                        "that difference away from autograd's.",
    "float64 twin": "the same function computed in float64 from the same numbers: GradLab re-estimates a "
                    "float32 value on it, where rounding is 2^29 times smaller.",
})

#: The words each page uses, by its URL path: listed under "Words on this page" at its end
#: (gradlab.ui.page_chrome), where a phone, which has no hover for a widget's help, can read them.
PAGE_TERMS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "": ("round-off error", "truncation error", "ulp"),
    "explorer": ("relative error", "ulp", "machine epsilon", "unit round-off", "round-off error", "truncation error",
                 "forward difference", "central difference", "complex step", "holomorphic",
                 "Richardson extrapolation"),
    "grid": ("ulp", "machine epsilon", "unit round-off", "correctly rounded", "catastrophic cancellation"),
    "gradcheck": ("round-off error", "truncation error", "relative_perturbation", "machine epsilon", "ulp",
                  "quantum", "atol/rtol", "random direction", "float64 twin", "Richardson extrapolation", "VJP"),
    "summed": ("ulp", "quantum", "sum threshold", "exact value"),
    "roundoff": ("ulp", "correctly rounded", "unit round-off", "catastrophic cancellation", "exact value"),
    "network": ("ulp", "unit round-off", "central difference", "round-off error", "truncation error", "quantum"),
    "backward": ("Jacobian", "VJP"),
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


#: Terms the Representable grid page shows on the dtype's grid, under its Definitions:
#: wherever another page defines one, it links there.
GRID_DEFINITIONS = "/grid#definitions"
_ON_THE_GRID = frozenset({"ulp", "unit round-off", "machine epsilon"})


def term(name: str) -> str:
    """What a page puts where ``name`` first appears (a widget's or metric's ``help=``, which
    renders Markdown): :func:`define`, and for the grid's own terms a link to where the
    Representable grid page shows them.

    >>> term("ulp").startswith("ulp: unit in the last place"), term("ulp").endswith("(/grid#definitions).")
    (True, True)
    """
    text = define(name)
    return f"{text} See them on the grid: [Representable grid]({GRID_DEFINITIONS})." \
        if name in _ON_THE_GRID else text
