"""Two formulas equal in mathematics, compared in floating point against the exact value.

Seed 000 asks why autograd's gradient of ``1/x`` differs from ``-1/x**2`` by
~6e-8 in float32. PyTorch computes ``1/x`` as ``reciprocal(x) * 1`` and the
backward of ``reciprocal`` is ``-grad * (result * result)``: autograd returns
``-(r*r)`` with ``r = fl(1/x)`` already rounded, which is bit for bit
``-(1/x)*(1/x)``. ``-1/x**2`` rounds ``x*x`` first and divides once. Each is
within an ulp or two of the truth; this module measures, point by point, which
one is closer.

>>> result = compare(RoundoffSettings("autograd", "-(1/x)*(1/x)", samples=200))
>>> result.summary.bitwise_equal
1.0
>>> result = compare(RoundoffSettings("autograd", "-1/x**2", samples=2000))
>>> 0 < result.summary.bitwise_equal < 1
True
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

import mpmath
import numpy as np
import pandas as pd
import sympy
import torch

from gradlab.numerics.certified_values import TARGET_BITS, ExactValues, distance, exact_values
from gradlab.server.deadline import run_within
from gradlab.errors import GradLabError
from gradlab.numerics.expressions import X, Expression, parse
from gradlab.limits import LIMITS, check_limit
from gradlab.numerics.mp_precision import working_digits
from gradlab.numerics.dtypes import facts
from gradlab.numerics.exact_derivatives import mp_evaluate
from gradlab.numerics.ulp import bit_patterns, hex_of, ulp, ulp_distances

__all__ = [
    "FormulaSpec",
    "with_hex",
    "BUILTIN_FORMULAS",
    "Formula",
    "formula",
    "ComparisonSpec",
    "COMPARISONS",
    "DISTRIBUTIONS",
    "RoundoffSettings",
    "RoundoffSummary",
    "RoundoffResult",
    "sample_inputs",
    "compare",
    "compare_at",
    "ulp_histogram",
    "EXACT_DIGITS",
]

#: Working precision of the exact reference, in decimal digits (float64 needs 17).
EXACT_DIGITS = 50
#: Extra digits per decade of |x| away from 1: a cancellation such as 1 - cos(x)
#: loses about order * |log10 x| digits; order 3 covers x - sin(x) and its kin.
CANCELLATION_ORDER = 3
#: Points on which the two formulas are checked to be equal in mathematics and
#: the reference is recomputed at twice the digits (cheap spot checks).
CHECK_POINTS = 8
#: Two formulas "agree in mathematics" when their exact values match to this many digits.
AGREEMENT_DIGITS = 30
#: The reference is trusted when doubling its digits moves it by less than this fraction of an ulp.
REFERENCE_ULP_FRACTION = 2.0**-10

DISTRIBUTIONS: tuple[str, ...] = ("normal", "uniform", "log-uniform")


# ---------------------------------------------------------------- formulas


@dataclass(frozen=True)
class FormulaSpec:
    """A built-in formula: a short name, the text it stands for, and how it rounds."""

    name: str
    text: str
    label: str
    note: str


BUILTIN_FORMULAS: dict[str, FormulaSpec] = {
    spec.name: spec
    for spec in (
        FormulaSpec(
            "autograd", "grad(1/x)", "autograd of 1/x",
            "torch.autograd.grad of 1/x. PyTorch evaluates 1/x as reciprocal(x)*1, and "
            "reciprocal's backward is -grad*(result*result): the rounded r = fl(1/x) is "
            "squared and rounded again, so this is bit for bit -(1/x)*(1/x).",
        ),
        FormulaSpec(
            "-1/x**2", "-1/x**2", "-1/x**2",
            "Rounds x*x, then divides once: two roundings, each of the same size, so it stays "
            "within 1.5 ulp of the exact value.",
        ),
        FormulaSpec(
            "-(1/x)*(1/x)", "-(1/x)*(1/x)", "-(1/x)*(1/x)",
            "Rounds 1/x, then multiplies it by itself: the first rounding error is doubled by "
            "the square, so the bound is 2.5 ulp.",
        ),
    )
}

_GRAD = re.compile(r"^\s*grad\s*\((.*)\)\s*$", re.DOTALL)


@dataclass(frozen=True, eq=False)
class Formula:
    """A formula of x evaluated in a dtype, with its exact value as a sympy expression.

    >>> f = formula("autograd")
    >>> f.label, f.sympy
    ('autograd of 1/x', -1/x**2)
    >>> f.evaluate(torch.tensor([2.0])).tolist()
    [-0.25]
    """

    text: str
    label: str
    sympy: sympy.Expr
    note: str = ""
    _expression: Expression | None = field(default=None, repr=False)
    _differentiate: bool = field(default=False, repr=False)

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        """The formula at every element of ``x``, computed in ``x``'s dtype (detached)."""
        if not self._differentiate:
            return self._expression(x).detach()
        with torch.enable_grad():
            leaf = x.detach().clone().requires_grad_(True)
            # The sum's backward feeds 1 to every element, as loss.backward() did in the seed.
            (grad,) = torch.autograd.grad(self._expression(leaf).sum(), leaf)
        return grad.detach()


def formula(text: str) -> Formula:
    """A built-in formula by name, ``grad(<expr>)`` for autograd of an expression, or an expression.

    >>> formula("log1p(x)").sympy
    log(x + 1)
    >>> formula("grad(sin(x))").sympy
    cos(x)
    """
    if not isinstance(text, str) or not text.strip():
        raise GradLabError("A formula is needed: type an expression of x such as '-1/x**2', or 'autograd'.")
    text = text.strip()
    spec = BUILTIN_FORMULAS.get(text)
    source = spec.text if spec else text
    match = _GRAD.match(source)
    if match:
        inner = parse(match.group(1))
        label = spec.label if spec else f"autograd of {inner.text}"
        return Formula(text, label, inner.derivative(), spec.note if spec else "", inner, True)
    expression = parse(source)
    return Formula(text, spec.label if spec else expression.text, expression.sympy,
                   spec.note if spec else "", expression, False)


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class RoundoffSettings:
    """What to compare, in which dtype, on which random inputs (plain values, cache-friendly).

    ``normal`` draws mean (low+high)/2 and standard deviation (high-low)/2, so the
    default [-1, 1] is the seed's ``np.random.randn()``; ``log-uniform`` draws
    positive x with log x uniform in [log low, log high].
    """

    formula_a: str = "autograd"
    formula_b: str = "-1/x**2"
    dtype: str = "float32"
    distribution: str = "normal"
    low: float = -1.0
    high: float = 1.0
    samples: int = 10_000
    seed: int = 0

    def validated(self) -> "RoundoffSettings":
        """The same settings with the dtype name normalised; raise GradLabError for misuse."""
        name = facts(self.dtype).name
        if self.distribution not in DISTRIBUTIONS:
            raise GradLabError(
                f"Unknown distribution {self.distribution!r}; choose one of {', '.join(DISTRIBUTIONS)}."
            )
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise GradLabError(
                f"The range needs two finite numbers with low < high; got [{self.low:g}, {self.high:g}]."
            )
        if self.distribution == "log-uniform" and self.low <= 0:
            raise GradLabError(
                f"A log-uniform range must be positive; got low = {self.low:g}. Use e.g. [1e-6, 1]."
            )
        if int(self.samples) < 1:
            raise GradLabError(f"At least one sample is needed; got {self.samples}.")
        check_limit("samples", int(self.samples), LIMITS.roundoff_samples)
        if int(self.seed) < 0:
            raise GradLabError(f"The seed must be a whole number >= 0; got {self.seed}.")
        return replace(self, dtype=name, samples=int(self.samples), seed=int(self.seed))


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
            "reciprocal", "Seed 000: autograd of 1/x vs -1/x**2 (float32)",
            RoundoffSettings("autograd", "-1/x**2", "float32", "normal", -1.0, 1.0),
            "The seed's question: they differ by an ulp at many x; neither is always the closer.",
        ),
        ComparisonSpec(
            "reciprocal_product", "autograd of 1/x vs -(1/x)*(1/x) (float32)",
            RoundoffSettings("autograd", "-(1/x)*(1/x)", "float32", "normal", -1.0, 1.0),
            "The fix found in the seed: the same operations in the same order round the same way.",
        ),
        ComparisonSpec(
            "reciprocal_float64", "-1/x**2 vs -(1/x)*(1/x) in float64",
            RoundoffSettings("-1/x**2", "-(1/x)*(1/x)", "float64", "normal", -1.0, 1.0),
            "The seed answer's numpy loop: float64 has the same effect, 2**29 times smaller.",
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


# ---------------------------------------------------------------- inputs


def sample_inputs(settings: RoundoffSettings) -> torch.Tensor:
    """The seeded random inputs, rounded to the dtype.

    >>> sample_inputs(RoundoffSettings(samples=3, dtype="float16")).dtype
    torch.float16
    """
    s = settings.validated()
    gen = torch.Generator().manual_seed(s.seed)
    # Draw in float64, then round once to the dtype, so every dtype sees the same x.
    if s.distribution == "normal":
        raw = torch.randn(s.samples, generator=gen, dtype=torch.float64) * (s.high - s.low) / 2 + (s.low + s.high) / 2
    elif s.distribution == "uniform":
        raw = torch.rand(s.samples, generator=gen, dtype=torch.float64) * (s.high - s.low) + s.low
    else:
        lo, hi = math.log(s.low), math.log(s.high)
        raw = torch.exp(torch.rand(s.samples, generator=gen, dtype=torch.float64) * (hi - lo) + lo)
    return raw.to(facts(s.dtype).torch_dtype)


# ---------------------------------------------------------------- the exact reference


def _digits_for(xs: np.ndarray) -> int:
    finite = np.abs(xs[np.isfinite(xs) & (xs != 0)])
    spread = int(np.ceil(np.max(np.abs(np.log10(finite))))) if finite.size else 0
    return EXACT_DIGITS + CANCELLATION_ORDER * spread


def _exact_mp(expr: sympy.Expr, xs: np.ndarray, digits: int) -> list:
    """Exact values (mpf, or None where undefined) by mpmath: for the few spot checks."""
    return [_mp_value(expr, float(x), digits) for x in xs]


def _mp_value(expr: sympy.Expr, x: float, digits: int):
    try:
        return mp_evaluate(expr, x, digits)
    except ValueError:  # undefined, or not real, at x
        return None


def _is_monomial(expr: sympy.Expr) -> bool:
    """c * x**k with integer k: products and quotients only, nothing that can cancel."""
    for node in sympy.preorder_traversal(expr):
        if node == X or node.is_Rational or isinstance(node, sympy.Mul):
            continue
        if isinstance(node, sympy.Pow) and node.exp.is_Integer:
            continue
        return False
    return True


@dataclass(frozen=True)
class _Exact:
    values: ExactValues  # hi (float64, nan where undefined) + lo, and how each was found
    method: str


def _exact(expr: sympy.Expr, xs: np.ndarray, dtype: str, wanted: np.ndarray, digits: int) -> _Exact:
    """The exact value at each x; points outside ``wanted`` may be left nan (they are not compared)."""
    if dtype != "float64" and _is_monomial(expr):
        # x is exact in float64 and c*x**k needs a few roundings of 2**-53 each: that is
        # at most ~2**-50 relative, below 2**-13 ulp of float32 (2**-24), so float64 suffices.
        coefficient, power = expr.as_coeff_exponent(X)
        with np.errstate(all="ignore"):
            values = float(coefficient) * np.asarray(xs, dtype=np.float64) ** int(power)
        values[~np.isfinite(values)] = np.nan
        known = np.ones(values.shape, bool)
        return _Exact(ExactValues(values, np.zeros_like(values), known, ~known),
                      "float64 (products and quotients of x only: exact to ~2**-50 relative)")
    values = exact_values(expr, xs, digits, wanted)
    method = f"ball arithmetic (Arb), each value certified to {TARGET_BITS} bits"
    if values.by_mpmath.any():
        method += f"; {int(values.by_mpmath.sum()):,} points Arb could not settle by mpmath at {digits} digits"
    return _Exact(values, method)


def _error_in_ulps(computed: np.ndarray, exact: _Exact, dtype: str) -> np.ndarray:
    """|computed - exact| in ulps of the dtype at the exact value (fractional)."""
    with np.errstate(all="ignore"):
        return distance(computed, exact.values) / ulp(exact.values.hi, dtype)


def _spot_indices(xs: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """A few usable points: the smallest and largest |x| (hardest for the reference) and the first ones."""
    idx = np.flatnonzero(usable)
    if idx.size == 0:
        return idx
    order = idx[np.argsort(np.abs(xs[idx]))]
    picks = list(order[: CHECK_POINTS // 4]) + list(order[-(CHECK_POINTS // 4):]) + list(idx[: CHECK_POINTS // 2])
    return np.unique(np.array(picks, dtype=np.int64))


def _check_same_maths(fa: Formula, fb: Formula, xs: np.ndarray, exact: _Exact, digits: int) -> None:
    """Refuse two formulas that are not equal in exact arithmetic: 'closer to the truth' needs one truth."""
    spots = _spot_indices(xs, np.isfinite(exact.values.hi))
    if spots.size == 0:
        return
    a_mp = _exact_mp(fa.sympy, xs[spots], digits)
    b_mp = _exact_mp(fb.sympy, xs[spots], digits)
    with working_digits(digits):
        for i, a, b in zip(spots, a_mp, b_mp):
            if a is None or b is None:
                continue
            if abs(a - b) > mpmath.mpf(10) ** -AGREEMENT_DIGITS * max(abs(a), abs(b)):
                raise GradLabError(
                    f"The two formulas are not equal in mathematics: at x = {xs[i]:.17g}, "
                    f"{fa.label} = {mpmath.nstr(a, 12)} but {fb.label} = {mpmath.nstr(b, 12)}. "
                    "This lab compares two ways of computing the same value; check both formulas."
                )


def _reference_note(expr: sympy.Expr, xs: np.ndarray, exact: _Exact, dtype: str, digits: int) -> str | None:
    """Arb certifies its values; recompute a few of mpmath's at twice the digits and warn
    if the reference moves by a visible fraction of an ulp."""
    v = exact.values
    spots = _spot_indices(xs, v.by_mpmath & np.isfinite(v.hi))
    finer = _exact_mp(expr, xs[spots], 2 * digits)
    for i, fine in zip(spots, finer):
        if fine is None:
            continue
        with working_digits(2 * digits):
            moved = abs(fine - (mpmath.mpf(v.hi[i]) + mpmath.mpf(v.lo[i])))
        if float(moved) > REFERENCE_ULP_FRACTION * ulp(float(fine), dtype):
            return (
                f"The exact reference is not settled at x = {xs[i]:.6g}: doubling its digits moved it. "
                "Treat the distances to the exact value with care, or narrow the range."
            )
    return None


# ---------------------------------------------------------------- the comparison


@dataclass(frozen=True)
class RoundoffSummary:
    """Fractions are of the compared points (both formulas and the exact value finite)."""

    samples: int
    compared: int
    bitwise_equal: float
    a_closer: float
    b_closer: float
    tie: float
    max_ulps_a_b: int
    max_ulps_a_exact: float
    max_ulps_b_exact: float
    correctly_rounded_a: float  # within 0.5 ulp of the exact value
    correctly_rounded_b: float


@dataclass(frozen=True, eq=False)
class RoundoffResult:
    """Per-point table and summary of one comparison.

    ``table`` columns: x, value_a, value_b, exact, ulps_a_b (Int64, <NA> where not
    comparable), ulps_a_exact, ulps_b_exact (fractional ulps at the exact value),
    bits_a, bits_b (each result's bit pattern as an unsigned integer as wide as the
    dtype; :func:`gradlab.numerics.ulp.hex_of` writes them in hex), closer (categorical "A",
    "B", "tie", or "" where not comparable). No column holds one Python object per
    point: a table of 100,000 points is a handful of arrays.
    """

    dtype: str
    label_a: str
    label_b: str
    note_a: str
    note_b: str
    table: pd.DataFrame
    summary: RoundoffSummary
    exact_method: str
    notes: tuple[str, ...]

    def verdict(self) -> str:
        """One sentence that answers "which one is closer?" in numbers."""
        s = self.summary
        if s.compared == 0:
            return "No point could be compared: every value overflowed, underflowed or was undefined."
        return (
            f"In {self.dtype}, the two agree bit for bit at {s.bitwise_equal:.1%} of {s.compared:,} points. "
            f"{self.label_a} is closer to the exact value at {s.a_closer:.1%}, {self.label_b} at "
            f"{s.b_closer:.1%}, and they are equally close at {s.tie:.1%}; the worst errors are "
            f"{s.max_ulps_a_exact:.2f} and {s.max_ulps_b_exact:.2f} ulp."
        )


def with_hex(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its bit patterns written in hex (hex_a, hex_b), for the rows shown.

    >>> t = compare(RoundoffSettings(samples=3)).table
    >>> bool(with_hex(t)["hex_a"].str.startswith("0x").all())
    True
    """
    shown = table.copy()
    for side in ("a", "b"):
        shown.insert(shown.columns.get_loc(f"bits_{side}"), f"hex_{side}", hex_of(shown[f"bits_{side}"].to_numpy()))
    return shown.drop(columns=["bits_a", "bits_b"])


_CLOSER = ("", "A", "B", "tie")


def _closer(err_a: np.ndarray, err_b: np.ndarray, ok: np.ndarray) -> pd.Categorical:
    codes = np.where(err_a < err_b, 1, np.where(err_b < err_a, 2, 3))
    return pd.Categorical.from_codes(np.where(ok, codes, 0).astype(np.int8), categories=_CLOSER)


def _summary(table: pd.DataFrame, ok: np.ndarray) -> RoundoffSummary:
    used = table[ok]
    n = len(used)

    def frac(mask) -> float:
        return float(np.mean(mask)) if n else float("nan")

    return RoundoffSummary(
        samples=len(table),
        compared=n,
        bitwise_equal=frac(used["ulps_a_b"] == 0),
        a_closer=frac(used["closer"] == "A"),
        b_closer=frac(used["closer"] == "B"),
        tie=frac(used["closer"] == "tie"),
        max_ulps_a_b=int(used["ulps_a_b"].max()) if n else 0,
        max_ulps_a_exact=float(used["ulps_a_exact"].max()) if n else float("nan"),
        max_ulps_b_exact=float(used["ulps_b_exact"].max()) if n else float("nan"),
        correctly_rounded_a=frac(used["ulps_a_exact"] <= 0.5),
        correctly_rounded_b=frac(used["ulps_b_exact"] <= 0.5),
    )


def _compare_on(x: torch.Tensor, fa: Formula, fb: Formula, dtype: str) -> RoundoffResult:
    a, b = fa.evaluate(x), fb.evaluate(x)
    xs = x.to(torch.float64).numpy()
    va, vb = a.to(torch.float64).numpy(), b.to(torch.float64).numpy()
    digits = _digits_for(xs)  # working precision of every mpmath value below
    exact = _exact(fa.sympy, xs, dtype, np.isfinite(va) & np.isfinite(vb), digits)
    _check_same_maths(fa, fb, xs, exact, digits)
    err_a, err_b = _error_in_ulps(va, exact, dtype), _error_in_ulps(vb, exact, dtype)
    hi = exact.values.hi
    # Compared: both results finite, and the exact value defined and inside the dtype's range.
    ok = np.isfinite(va) & np.isfinite(vb) & np.isfinite(hi) & (np.abs(hi) <= facts(dtype).max)
    distances = pd.array(np.where(ok, ulp_distances(a, b), 0), dtype="Int64")
    distances[~ok] = pd.NA
    table = pd.DataFrame({
        "x": xs, "value_a": va, "value_b": vb, "exact": hi, "ulps_a_b": distances,
        "ulps_a_exact": np.where(ok, err_a, np.nan), "ulps_b_exact": np.where(ok, err_b, np.nan),
        "bits_a": bit_patterns(a), "bits_b": bit_patterns(b), "closer": _closer(err_a, err_b, ok),
    })
    notes = [f"Exact values: {exact.method}."]
    if (~ok).any():
        notes.append(
            f"{int((~ok).sum()):,} of {len(xs):,} points are left out: a result overflowed, or the exact "
            f"value is undefined or outside {dtype}'s range there."
        )
    warning = _reference_note(fa.sympy, xs, exact, dtype, digits)
    if warning:
        notes.append(warning)
    return RoundoffResult(dtype, fa.label, fb.label, fa.note, fb.note, table, _summary(table, ok),
                          exact.method, tuple(notes))


def compare(settings: RoundoffSettings) -> RoundoffResult:
    """Compare two formulas on seeded random inputs in one dtype.

    >>> r = compare(RoundoffSettings("log(1+x)", "log1p(x)", "float32", "log-uniform", 1e-7, 1e-3, samples=300))
    >>> r.summary.b_closer > r.summary.a_closer
    True
    """
    s = settings.validated()
    return _bounded_compare(sample_inputs(s), formula(s.formula_a), formula(s.formula_b), s.dtype)


def _bounded_compare(x: torch.Tensor, fa: Formula, fb: Formula, dtype: str) -> RoundoffResult:
    """:func:`_compare_on` within ``LIMITS.roundoff_seconds`` (a LimitError past it)."""
    return run_within(
        LIMITS.roundoff_seconds, f"the comparison at {x.numel():,} points", _compare_on, x, fa, fb, dtype,
        bound_name="LIMITS.roundoff_seconds",
        advice="Use fewer points, or a range closer to 1 (tiny |x| needs many more exact digits).",
    )


def compare_at(formula_a: str, formula_b: str, xs, dtype: str = "float64") -> RoundoffResult:
    """Compare two formulas at given points (each rounded to the dtype).

    >>> r = compare_at("x/100*100", "x", [29.0], "float64")
    >>> float(r.table.loc[0, "value_a"]), int(r.table.loc[0, "ulps_a_b"])
    (28.999999999999996, 1)
    """
    info = facts(dtype)
    values = np.asarray(xs, dtype=np.float64).reshape(-1)
    if values.size == 0:
        raise GradLabError("Give at least one point x to compare the formulas at.")
    check_limit("samples", values.size, LIMITS.roundoff_samples)
    x = torch.as_tensor(values).to(info.torch_dtype)
    return _bounded_compare(x, formula(formula_a), formula(formula_b), info.name)


def ulp_histogram(table: pd.DataFrame, column: str = "ulps_a_b") -> pd.DataFrame:
    """Counts of each ulp distance (compared points only): columns ulps, count, fraction.

    >>> ulp_histogram(pd.DataFrame({"ulps_a_b": pd.array([0, 1, 0, None], dtype="Int64")}))
       ulps  count  fraction
    0     0      2  0.666667
    1     1      1  0.333333
    """
    values = table[column].dropna().astype("int64")
    counts = values.value_counts().sort_index()
    out = pd.DataFrame({"ulps": counts.index.astype("int64"), "count": counts.to_numpy()})
    out["fraction"] = out["count"] / max(len(values), 1)
    return out
