"""Built-in functions, each with a default point and one line on what it teaches, and how a
page's function selectbox offers them (:data:`FUNCTION_OPTIONS`, :func:`function_label`: the
Explorer's and the Grid's, whose URLs carry the label).

>>> CATALOGUE["complex_step_classic"].expression
'exp(x)/sqrt(sin(x)**3 + cos(x)**3)'
>>> entry("reciprocal").x
0.3
>>> FUNCTION_OPTIONS[-1] == CUSTOM, function_label(CUSTOM), function_label("sin")
(True, 'custom (type it)', 'sin(x)')
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlab.errors import GradLabError

__all__ = ["CatalogueEntry", "CATALOGUE", "entry", "CUSTOM", "FUNCTION_OPTIONS", "function_label"]


@dataclass(frozen=True)
class CatalogueEntry:
    """A named function of x, the point to look at, and why it is interesting."""

    key: str
    title: str
    expression: str
    x: float
    note: str


CATALOGUE: dict[str, CatalogueEntry] = {
    e.key: e
    for e in (
        CatalogueEntry(
            "complex_step_classic", "Complex-step classic", "exp(x)/sqrt(sin(x)**3 + cos(x)**3)", 1.5,
            "The test function of the complex-step literature (Squire & Trapp): the complex step "
            "reaches round-off with any tiny step, while every difference has a V.",
        ),
        CatalogueEntry(
            "sin", "sin(x)", "sin(x)", 1.0,
            "Smooth and of size 1 with all its derivatives at 1: every scheme follows the theory; the "
            "Grid page's first example.",
        ),
        CatalogueEntry(
            "reciprocal", "1/x", "1/x", 0.3,
            "Autograd computes -(1/x)*(1/x); in float32 it differs from -1/x**2 by an ulp.",
        ),
        CatalogueEntry(
            "exp", "exp(x)", "exp(x)", 1.0,
            "Every derivative equals f, so |f/f''| = 1 and the textbook best steps apply exactly.",
        ),
        CatalogueEntry(
            "sin_flat", "sin(x) near a flat point", "sin(x)", 1.5707963267948966,
            "At pi/2 the derivative is almost 0: relative error explodes, absolute error does not.",
        ),
        CatalogueEntry(
            "sqrt_near_zero", "sqrt(x) near 0", "sqrt(x)", 1e-4,
            "Near the branch point every higher derivative is huge: the best step is tiny, "
            "and a step larger than x leaves the domain (NaN).",
        ),
        CatalogueEntry(
            "abs_kink", "abs(x) at a kink", "abs(x)", 0.0,
            "No derivative exists at 0: central differences give 0, one-sided ones ±1, autograd 0.",
        ),
        CatalogueEntry(
            "abs_near_kink", "abs(x) near a kink", "abs(x)", 1e-3,
            "A step larger than the distance to the kink crosses it: the error jumps to order 1.",
        ),
        CatalogueEntry(
            "log1p_tiny", "log1p(x) for tiny x", "log1p(x)", 1e-10,
            "log1p keeps its digits where 1 + x would round; compare with log(1+x).",
        ),
        CatalogueEntry(
            "log_one_plus", "log(1+x) for tiny x", "log(1+x)", 1e-10,
            "1 + x rounds before the log sees it: in float32 the function is constant near 0.",
        ),
        CatalogueEntry(
            "tanh_saturated", "tanh in saturation", "tanh(x)", 8.0,
            "f' is about 4.5e-7: forward differences in float32 return exactly 0 for most steps.",
        ),
        CatalogueEntry(
            "sigmoid_tanh", "sigmoid(x)*tanh(x)", "sigmoid(x)*tanh(x)", 0.5,
            "A typical activation-style composition: smooth, all schemes behave as the theory says.",
        ),
        CatalogueEntry(
            "cubic", "x**3 (central is exact up to f''')", "x**3", 1.0,
            "f''' is constant, so central truncation is exactly h**2 and the slope is clean.",
        ),
        CatalogueEntry(
            "large_x", "exp at large x", "exp(x)", 10.0,
            "Large f: round-off |f|/h grows, the V moves up; float16 overflows (max 65504).",
        ),
    )
}


def entry(key: str) -> CatalogueEntry:
    """Look up a catalogue entry by key, with a message listing the keys if unknown."""
    if key not in CATALOGUE:
        raise GradLabError(f"Unknown catalogue entry {key!r}; known: {', '.join(CATALOGUE)}.")
    return CATALOGUE[key]


#: The function selectbox's choice of an expression typed by the visitor.
CUSTOM = "custom"
#: What a function selectbox offers: every catalogue entry, then a custom expression.
FUNCTION_OPTIONS: tuple[str, ...] = (*CATALOGUE, CUSTOM)


def function_label(key: str) -> str:
    """What the function selectbox shows (and the URL carries) for a catalogue key."""
    return "custom (type it)" if key == CUSTOM else CATALOGUE[key].title
