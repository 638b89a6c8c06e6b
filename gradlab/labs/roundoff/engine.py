"""Two formulas equal in mathematics, compared in floating point against the exact value.

The 1/x question asks why autograd's gradient of ``1/x`` differs from ``-1/x**2`` by
~6e-8 in float32. PyTorch computes ``1/x`` as ``reciprocal(x) * 1`` and the
backward of ``reciprocal`` is ``-grad * (result * result)``: autograd returns
``-(r*r)`` with ``r = fl(1/x)`` already rounded, which is bit for bit
``-(1/x)*(1/x)``. ``-1/x**2`` rounds ``x*x`` first and divides once. Each is
within an ulp or two of the truth; this module measures, point by point, which
one is closer.

This module runs a comparison and holds its result; the lab's other parts are
:mod:`~gradlab.labs.roundoff.settings` (what to compare, on which inputs),
:mod:`~gradlab.labs.roundoff.formulas` (the formulas),
:mod:`~gradlab.labs.roundoff.reference` (the exact values) and
:mod:`~gradlab.labs.roundoff.comparisons` (the named comparisons). Their public
names are importable from here too.

>>> result = compare(RoundoffSettings("autograd", "-(1/x)*(1/x)", samples=200))
>>> result.summary.bitwise_equal
1.0
>>> result = compare(RoundoffSettings("autograd", "-1/x**2", samples=2000))
>>> 0 < result.summary.bitwise_equal < 1
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from gradlab.errors import GradLabError
from gradlab.labs.roundoff.comparisons import COMPARISONS, ComparisonSpec
from gradlab.labs.roundoff.formulas import BUILTIN_FORMULAS, Formula, FormulaSpec, formula
from gradlab.labs.roundoff.reference import (EXACT_DIGITS, digits_for, error_in_ulps, exact_reference,
                                             reference_note, refuse_different_maths)
from gradlab.labs.roundoff.settings import DISTRIBUTIONS, RoundoffSettings, sample_inputs
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import facts
from gradlab.numerics.ulp import bit_patterns, hex_of, ulp_distances
from gradlab.server.deadline import run_within

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
    "ROUNDOFF_ADVICE",
]

#: How an over-the-limit sentence about a comparison ends.
ROUNDOFF_ADVICE = "Use fewer points, or a range closer to 1 (tiny |x| needs many more exact digits)."


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

    def closer_more_often(self) -> str:
        """"B" when formula B is closer to the exact value at more points than A, else "A".

        >>> compare(RoundoffSettings("log(1+x)", "log1p(x)", "float32", "log-uniform", 1e-7, 1e-3,
        ...                          samples=300)).summary.closer_more_often()
        'B'
        """
        return "B" if self.b_closer > self.a_closer else "A"


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

    def distance_histogram(self) -> pd.DataFrame:
        """How often each A–B distance in ulps occurs: :func:`ulp_histogram` of the table.

        >>> compare(RoundoffSettings("autograd", "-(1/x)*(1/x)", samples=50)).distance_histogram()
           ulps  count  fraction
        0     0     50       1.0
        """
        return ulp_histogram(self.table)


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
    digits = digits_for(xs)  # working precision of every mpmath value below
    exact = exact_reference(fa.sympy, xs, dtype, np.isfinite(va) & np.isfinite(vb), digits)
    refuse_different_maths(fa, fb, xs, exact, digits)
    err_a, err_b = error_in_ulps(va, exact, dtype), error_in_ulps(vb, exact, dtype)
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
    warning = reference_note(fa.sympy, xs, exact, dtype, digits)
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
    return _compare_within_limit(sample_inputs(s), formula(s.formula_a), formula(s.formula_b), s.dtype)


def _compare_within_limit(x: torch.Tensor, fa: Formula, fb: Formula, dtype: str) -> RoundoffResult:
    """:func:`_compare_on` within ``LIMITS.roundoff_seconds`` (a LimitError past it)."""
    return run_within(
        LIMITS.roundoff_seconds, f"the comparison at {x.numel():,} points", _compare_on, x, fa, fb, dtype,
        limit_name="LIMITS.roundoff_seconds", advice=ROUNDOFF_ADVICE,
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
    within_limit("samples", values.size, LIMITS.roundoff_samples)
    x = torch.as_tensor(values).to(info.torch_dtype)
    return _compare_within_limit(x, formula(formula_a), formula(formula_b), info.name)


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
