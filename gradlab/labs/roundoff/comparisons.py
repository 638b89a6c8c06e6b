"""The Round-off lab's registry of named, ready-made comparisons: a question and the settings that answer it.

>>> COMPARISONS["log1p"].settings.formula_b
'log1p(x)'
"""

from __future__ import annotations

from dataclasses import dataclass

from gradlab.labs.roundoff.settings import RoundoffSettings

__all__ = ["ComparisonSpec", "COMPARISONS"]


@dataclass(frozen=True)
class ComparisonSpec:
    """A ready-made comparison: a question and the settings that answer it."""

    name: str
    title: str
    settings: RoundoffSettings
    note: str


COMPARISONS: dict[str, ComparisonSpec] = {
    spec.name: spec
    for spec in (
        ComparisonSpec(
            "reciprocal", "autograd of 1/x vs -1/x**2 (float32)",
            RoundoffSettings("autograd", "-1/x**2", "float32", "normal", -1.0, 1.0),
            "The question's case: they differ by an ulp at many x; neither is always the closer.",
        ),
        ComparisonSpec(
            "reciprocal_product", "autograd of 1/x vs -(1/x)*(1/x) (float32)",
            RoundoffSettings("autograd", "-(1/x)*(1/x)", "float32", "normal", -1.0, 1.0),
            "The fix found in the question: the same operations in the same order round the same way.",
        ),
        ComparisonSpec(
            "reciprocal_float64", "-1/x**2 vs -(1/x)*(1/x) in float64",
            RoundoffSettings("-1/x**2", "-(1/x)*(1/x)", "float64", "normal", -1.0, 1.0),
            "An answer's numpy loop: float64 has the same effect, 2**29 times smaller.",
        ),
        ComparisonSpec(
            "log1p", "log(1+x) vs log1p(x) for small x (float32)",
            RoundoffSettings("log(1+x)", "log1p(x)", "float32", "log-uniform", 1e-8, 1e-2),
            "1+x rounds away most digits of a small x before the log sees it.",
        ),
        ComparisonSpec(
            "one_minus_cos", "(1-cos(x))/x**2 vs 2*sin(x/2)**2/x**2 (float32)",
            RoundoffSettings("(1-cos(x))/x**2", "2*sin(x/2)**2/x**2", "float32", "log-uniform", 1e-4, 1e-1),
            "1 - cos(x) cancels; the half-angle form has nothing to cancel.",
        ),
        ComparisonSpec(
            "decimal", "x/100*100 vs x (float64)",
            RoundoffSettings("x/100*100", "x", "float64", "uniform", 1.0, 100.0),
            "Python's 29/100*100 gives 28.999999999999996. Written with numbers only, the "
            "expression is a constant that GradLab folds exactly when parsing, so type it with x.",
        ),
    )
}
