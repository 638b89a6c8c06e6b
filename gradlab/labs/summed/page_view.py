"""What the Summed-loss page shows of one settings object: :func:`view`, the page's worker entry.

The lab (every summation method's result, :mod:`~gradlab.labs.summed.loss`) and the check's
forward differences (:mod:`~gradlab.labs.summed.differences`), then the answer, the two charts,
the methods' table, the four numbers and the paragraphs those numbers make. Its sums are Python
loops over up to ``LIMITS.summed_terms`` terms (seconds of one core in bfloat16), so a page runs
it in a worker process.

>>> v = view(SummedLossSettings(shape=(4, 5)))
>>> v.answer.level, sorted(v.charts), list(v.tables["methods"]["method"])[:2]
('success', ['differences', 'errors'], ['naive loop', 'pairwise tree'])
"""

from __future__ import annotations

import math

import pandas as pd

from gradlab.labs.summed.answer import summed_answer
from gradlab.labs.summed.differences import sampled_differences
from gradlab.labs.summed.figures import difference_staircase, summed_error_bars
from gradlab.labs.summed.loss import NO_THRESHOLD, SummedLoss, SummedLossSettings, summed_loss
from gradlab.numerics.dtypes import facts
from gradlab.server.worker_entries import worker_entry
from gradlab.teaching.glossary import term
from gradlab.view import Chart, Number, View

__all__ = ["view"]

#: One term of the lab's Python loops, by dtype (one core measured 23-27 µs in bfloat16, 14-16 µs
#: in float16, 3-4 µs otherwise).
_TERM_SECONDS = {"bfloat16": 20e-6, "float16": 12e-6}


@worker_entry("the summed loss", "request_seconds",
              advice="Pick a smaller shape, or a dtype other than bfloat16 (its sums are Python loops).",
              forecast=lambda settings: math.prod(settings.shape) * _TERM_SECONDS.get(settings.dtype, 3e-6))
def view(settings: SummedLossSettings) -> View:
    """The Summed-loss page's view of ``settings`` (see the module docstring)."""
    result, differences = summed_loss(settings), sampled_differences(settings)
    return View(
        answer=summed_answer(result),
        charts={"differences": Chart(difference_staircase, (differences, result.quantum, settings.h, settings.dtype)),
                "errors": Chart(summed_error_bars, (result,))},
        tables={"methods": _methods_table(result), "differences": differences},
        numbers=_numbers(result),
        texts={"threshold": _threshold_text(result), "lesson": _lesson(result),
               "changed term": f"The change is an increase of the largest term (element {result.term_index}); "
                               "the float64 row moves at the smallest change one float term can make."},
        result=result,
    )


def _methods_table(result: SummedLoss) -> pd.DataFrame:
    """One row per summation method: its L, error, error in ulps, and the smallest change that moves it."""
    half = result.ulp_loss / 2
    return pd.DataFrame({
        "method": [r.label for r in result.rows],
        "L": [r.value for r in result.rows],
        "error": [r.error for r in result.rows],
        "error (ulps of L)": [r.error_ulps for r in result.rows],
        "smallest change that moves it": [r.threshold for r in result.rows],
        "÷ ulp(L)/2": [r.threshold / half for r in result.rows],
        "why none": [NO_THRESHOLD.get(r.threshold_reason, "") for r in result.rows],
    })


def _numbers(result: SummedLoss) -> tuple[Number, ...]:
    s = result.settings
    return (Number("exact L", f"{result.exact_float:.8g}", term("exact value")),
            Number(f"ulp(L) in {s.dtype}", f"{result.ulp_loss:.3g}", term("ulp")),
            Number("quantum ulp(L)/h", f"{result.quantum:.4g}", f"At h = {s.h:g}. " + term("quantum")),
            Number("|dL/dxᵢ| (median)", f"{result.gradient_size:.3g}",
                   "The median size of the gradient the check compares with."))


def _threshold_text(result: SummedLoss) -> str:
    return ("**How large must a one-element change be to move the rounded sum at all?** "
            f"Below about half an ulp of L ({result.ulp_loss / 2:.3g}) a change of one term is "
            "rounded away, so L(x + h·eᵢ) = L(x) and the difference is 0.")


def _lesson(result: SummedLoss) -> str:
    s = result.settings
    finer = round(math.log2(facts(s.dtype).eps / facts("float64").eps))
    return (f"**What this does to a grad check.** Both losses of a forward difference are rounded to "
            f"{s.dtype} numbers near L, so their difference is a whole number k of ulps of L, and "
            f"(L(x + h·eᵢ) − L(x))/h = k · {result.quantum:.4g}. The check can only print 0, "
            f"±{result.quantum:.4g}, ±{2 * result.quantum:.4g}, … whatever the true gradient element "
            f"(about {result.gradient_size:.2g}). A smaller h makes the steps coarser"
            + (f"; float64 makes them 2^{finer} times finer." if finer > 0 else "."))
