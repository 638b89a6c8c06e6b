"""The words the Round-off lab uses, each defined in one sentence a second-year student knows.

The page shows a term's sentence where the term first appears (a line under the
answer, or a widget's hover help). Issue 15 plans one glossary for every page
(``gradlab/teaching/glossary.py``); until it exists, the Round-off lab's terms live here.

>>> TERMS["ulp"].startswith("1 ulp (unit in the last place)")
True
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["TERMS"]

TERMS = MappingProxyType({
    "ulp": "1 ulp (unit in the last place) = the gap between two neighbouring floats of that size.",
    "correctly rounded": ("correctly rounded: the stored result is the float nearest the exact one, "
                          "so it is off by at most half an ulp (0.5 ulp)."),
    "unit round-off": ("unit round-off u: the largest relative error of one correctly rounded operation, "
                       "half of machine epsilon (u = 2⁻²⁴ ≈ 6e-8 in float32)."),
    "exact value": ("exact value: the formula computed at high precision (mpmath) from the same rounded x, "
                    "then compared without rounding."),
})
