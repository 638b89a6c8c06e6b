"""The Explorer's answer in one sentence: how close each dtype's best difference and autograd get.

Built from the sweep's tables (the best row per dtype and autograd's row), never
from prose: the page shows :func:`sweep_answer`'s note as it is, by its level.

>>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
>>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float32",), ("central",), 1e-9, 0.1, points=41))
>>> print(sweep_answer(r).text)  # doctest: +ELLIPSIS
At its best step (h ≈ ...) the float32 central difference is within ... of the exact derivative (relative error); autograd is within 1 ulp. Round-off dominates left of its best step, truncation right.

Each error it quotes is the typical one around the best step (the ``robust_rel_error``
column: the median over about a decade of steps), never below what the dtype can hold: an
error under the unit round-off u says only that the exact value sits near a rounded number,
so it reads "within its rounding (6e-8)". The complex step reaches that floor:

>>> r = run_sweep(SweepSettings("exp(x)", 1.0, ("float32",), ("complex_step",), 1e-20, 1e-3, points=31))
>>> print(sweep_answer(r).text)  # doctest: +ELLIPSIS
At its best step (h ≈ ...) the float32 complex step estimate is within its rounding (6e-8) ...
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from gradlab.step_sweep.engine import AROUND_BEST, SweepResult
from gradlab.step_sweep.regimes import regime_sentence
from gradlab.view import Answer
from gradlab.numerics.dtypes import facts
from gradlab.numerics.precision_table import best_error_scale
from gradlab.numerics.schemes import get_scheme
from gradlab.numerics.ulp import ulp

__all__ = ["sweep_answer", "theory_words", "ulps_off", "short_number", "percent", "best_error_words"]


def short_number(value: float) -> str:
    """One significant digit, as a second-year student writes it: ``3e-6``, ``0.004``.

    >>> short_number(3.2e-6), short_number(0.0039), short_number(0.26)
    ('3e-6', '0.004', '0.3')
    """
    if value == 0 or not math.isfinite(value):
        return str(value)
    if 1e-3 <= abs(value) < 1e3:
        return f"{value:.1g}"
    mantissa, exponent = f"{value:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def ulps_off(value: float, exact: float, dtype: str) -> float:
    """How many of the dtype's ulps (at ``value``) lie between ``value`` and ``exact``.

    >>> ulps_off(1.0, 1.0, "float32"), ulps_off(1.0 + 2 ** -23, 1.0, "float32")
    (0.0, 1.0)
    """
    return abs(value - exact) / float(ulp(value, dtype))


def _ulp_words(n: float) -> str:
    if n == 0:
        return "exact"
    return f"within {max(1, math.ceil(n - 1e-9))} ulp"


def percent(value: float) -> str:
    """A relative error as a percentage with two significant digits: ``25 %``, ``1.7 %``.

    >>> percent(0.2497), percent(0.01698), percent(0.0009), percent(4.5)
    ('25 %', '1.7 %', '0.09 %', '450 %')
    """
    return f"{value * 100:.2g} %" if value < 1 else f"{value * 100:.0f} %"


def _emulated_error(result: SweepResult, row) -> str:
    """An 8-bit float's error around its best step, as a range: on so coarse a grid x ± h lands
    on a few values, and the best of a sweep is partly luck (the theory beside it is
    :func:`theory_words`'s, under the chart: in the answer it made five lines at 1280 px)."""
    t = result.table
    near = t[(t["dtype"] == row["dtype"]) & (t["scheme"] == row["scheme"]) & (t["step"] != 0)
             & (t["eps"] >= row["predicted_eps"] / AROUND_BEST) & (t["eps"] <= row["predicted_eps"] * AROUND_BEST)]
    errors = near["rel_error"].astype(float)
    errors = errors[np.isfinite(errors)]
    lo, hi = (float(errors.min()), float(errors.max())) if len(errors) else (row["rel_error"],) * 2
    u = facts(row["dtype"]).unit_roundoff
    if lo < u:  # a sample closer than the format's rounding was lucky: quote the rounding instead
        return f"off by up to {percent(hi)} (no closer than its rounding, {percent(u)})"
    span = percent(lo) if percent(lo) == percent(hi) else f"{percent(lo)[:-2]}–{percent(hi)}"
    return f"off by {span}"


def _theory(row) -> str:
    """The theory of an 8-bit float's best error, as the precision table states it: the scale
    ε^(p/(p+1)) times this f's factor k (the best-step table's prediction divided by the scale;
    :mod:`gradlab.numerics.precision_table`)."""
    order = get_scheme(row["scheme"]).order
    scale, predicted = best_error_scale(row["dtype"], order), float(row["predicted_rel_error"])
    theory = f"ε^({order}/{order + 1}) = {percent(scale)}"
    if math.isfinite(predicted):
        theory += f", times this f's factor k = {predicted / scale:.2g}: {percent(predicted)}"
    return theory


def theory_words(result: SweepResult) -> str | None:
    """The theory of each 8-bit float's best error, for the words under the chart; None without one.

    >>> from gradlab.step_sweep.engine import SweepSettings, run_sweep
    >>> print(theory_words(run_sweep(SweepSettings("sin(x)", 1.0, ("float8_e4m3fn",), ("central",)))))
    The theory's best error (gradlab's precision table): float8_e4m3fn central ε^(2/3) = 25 %, times this f's factor k = 1.5: 37 %.
    """
    rows = [r for r in result.best_rows if facts(r["dtype"]).emulated and math.isfinite(r["predicted_eps"])
            and not get_scheme(r["scheme"]).complex_step]
    best = {}
    for r in rows:  # each dtype's best scheme, as the answer names it
        if r["dtype"] not in best or r["robust_rel_error"] < best[r["dtype"]]["robust_rel_error"]:
            best[r["dtype"]] = r
    if not best:
        return None
    return ("The theory's best error (gradlab's precision table): "
            + "; ".join(f"{d} {get_scheme(r['scheme']).curve_label} {_theory(r)}" for d, r in best.items()) + ".")


def best_error_words(near_best: float, dtype: str, exact) -> str:
    """How close a dtype's best estimate comes, as the answer says it: ``near_best`` is the typical
    relative error around the best step (:func:`gradlab.step_sweep.engine.robust_best`). Below the
    dtype's unit round-off u it is "within the dtype's rounding": no result in the dtype can be
    trusted closer, whatever one sample shows. "exact" only where every error there is 0 and
    the exact derivative is itself a float64 number (so 0 is not just the reference's rounding).

    >>> best_error_words(3.2e-6, "float32", 2.5), best_error_words(7e-10, "float32", 2.5)
    ('within 4e-6', 'within its rounding (6e-8)')
    >>> with mpmath.workdps(30):
    ...     third = mpmath.mpf(1) / 3
    >>> best_error_words(0.0, "float64", 2.0), best_error_words(0.0, "float64", third)
    ('exact', 'within its rounding (1e-16)')
    """
    u = facts(dtype).unit_roundoff
    if near_best == 0 and exact is not None and mpmath.mpf(float(exact)) == exact:
        return "exact"
    if near_best < u:
        return f"within its rounding ({short_number(u)})"  # the sentence names the dtype just before
    return f"within {_at_most(near_best)}"


def _at_most(value: float) -> str:
    """:func:`short_number` rounded up, as a bound that says "within" must be: never below ``value``.

    >>> _at_most(6.4e-6), _at_most(7e-6), _at_most(1.12e-16), _at_most(0.0041), _at_most(9.99)
    ('7e-6', '7e-6', '2e-16', '0.005', '10')
    """
    exponent = math.floor(math.log10(value))
    digit = math.ceil(value / 10.0 ** exponent * (1 - 1e-12))
    bound = float(f"{digit}e{exponent}")  # one digit, at least value (a 10 becomes 1e(exponent+1))
    return short_number(bound) if bound < 1 else f"{bound:g}"  # 100 % or more off: "10", not "1e+01"


def _best_clauses(result: SweepResult) -> list[tuple[str, str, str, str]]:
    """(step, 'float32', 'central difference', 'within 3e-6') for each dtype's best scheme."""
    clauses = []
    rows = result.best_rows
    for dtype in dict.fromkeys(r["dtype"] for r in rows):  # in the table's order
        finite = [r for r in rows if r["dtype"] == dtype and math.isfinite(r["robust_rel_error"])]
        if not finite:
            continue
        row = min(finite, key=lambda r: r["robust_rel_error"])  # the first of equals, as idxmin
        name = get_scheme(row["scheme"]).curve_label
        kind = "estimate" if get_scheme(row["scheme"]).complex_step else "difference"
        reference = result.references.get(dtype)
        error = best_error_words(float(row["robust_rel_error"]), dtype,
                                 reference.d1 if reference is not None and reference.defined else None)
        if facts(dtype).emulated and math.isfinite(row["predicted_eps"]):
            error = _emulated_error(result, row)
        clauses.append((f"h ≈ {short_number(row['robust_eps'])}", dtype, f"{name} {kind}", error))
    return clauses


def _autograd_clause(result: SweepResult) -> str:
    """Autograd against the exact value, per dtype: one ulp count said once when they agree, the
    8-bit floats' percentages after it ("within 1 ulp in every dtype (4.1 % off in float8_e4m3fn)")."""
    said = []  # (dtype, ulp words, percent off or None)
    table = result.autograd
    for dtype, value, reference, rel_error in zip(*(table[c].tolist() for c in ("dtype", "value", "reference", "rel_error"))):
        if math.isfinite(value) and math.isfinite(reference):
            said.append((dtype, _ulp_words(ulps_off(value, reference, dtype)),
                         percent(rel_error) if facts(dtype).emulated else None))
    if not said:
        return ""
    ulps = {w for _, w, _ in said}
    if len(ulps) > 1:
        return "autograd is " + ", ".join(f"{w}{f' ({p} off)' if p else ''} in {d}" for d, w, p in said)
    off = [f"{p} off in {d}" for d, _, p in said if p]
    return (f"autograd is {ulps.pop()}" + ("" if len(said) == 1 else " in every dtype")
            + (f" ({', '.join(off)})" if off else ""))


def sweep_answer(result: SweepResult) -> Answer:
    """The page's one sentence: each dtype's best finite difference and autograd, against the exact value."""
    if not result.reference.defined:
        return Answer("warning", f"There is no exact derivative here ({result.reference.reason.rstrip('.')}), "
                            "so nothing can be closest: the chart shows what each method returns.")
    clauses = _best_clauses(result)
    autograd = _autograd_clause(result)
    if not clauses:
        return Answer("warning", "No finite difference gave a finite estimate at these steps; "
                            + (autograd + "." if autograd else "try a wider step range."))
    if len(clauses) == 1:
        step, dtype, what, error = clauses[0]
        of = " of the exact derivative" if error != "exact" else ""
        text = f"At its best step ({step}) the {dtype} {what} is {error}{of} (relative error)"
    elif len({what for _, _, what, _ in clauses}) == 1 and all(e.startswith("within") for *_, e in clauses):
        # one scheme for every dtype: named once (a line shorter: the chart keeps its height)
        said = [f"{e} in {d}" for _, d, _, e in clauses]
        text = (f"At their best steps the {clauses[0][2]} is " + ", ".join(said[:-1]) + f" and {said[-1]}"
                + " (relative error against the exact derivative)")
    else:
        (_, dtype, what, error), rest = clauses[0], clauses[1:]
        text = (f"At their best steps the {dtype} {what} is {error}, "
                + ", ".join(f"the {d} {w} {e}" for _, d, w, e in rest)
                + " (relative error against the exact derivative)")
    regimes = regime_sentence(result)  # the chart's two sides, named as its bands name them
    return Answer("info", text + (f"; {autograd}." if autograd else ".") + (f" {regimes}" if regimes else ""))
