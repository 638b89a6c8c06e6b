"""One-line definitions of the terms the Network and Backward pages use, shown where each first appears.

The shared glossary (``gradlab.teaching.glossary.GLOSSARY``, issue 15's page chrome)
wins when it defines a term; until it is merged, these words are used.

>>> term("ulp").startswith("ulp")
True
"""

from __future__ import annotations

__all__ = ["TERMS", "term"]

try:  # the shared glossary, once merged; the words below until then
    from gradlab.teaching.glossary import GLOSSARY as _SHARED
except ImportError:  # pragma: no cover - depends on the merge order
    _SHARED = {}

TERMS: dict[str, str] = {
    "ulp": "ulp (unit in the last place): the gap between a float and the next one of its dtype. "
           "For float32 numbers in [0.25, 0.5) it is 2⁻²⁵ ≈ 3e-8.",
    "round-off": "Round-off: the error of storing each result to the dtype's precision. In a finite "
                 "difference it is divided by the step, so it grows as the step shrinks.",
    "truncation": "Truncation: the error of the finite-difference formula itself (the Taylor terms it "
                  "leaves out). It shrinks as the step shrinks.",
    "VJP": "VJP (vector–Jacobian product): vᵀJ, a weighted sum of the rows of the Jacobian J. "
           "backward(v) computes it without ever forming J.",
    "Jacobian": "Jacobian: the table of every ∂yᵢ/∂xⱼ, one row per output, one column per input.",
    "central difference": "Central difference: (f(x+dx) − f(x−dx)) / (2·dx), what scipy.misc.derivative "
                          "computed with its default order.",
}


def term(name: str) -> str:
    """The one-line definition of ``name``: the shared glossary's, else this module's."""
    return _SHARED.get(name) or TERMS[name]
