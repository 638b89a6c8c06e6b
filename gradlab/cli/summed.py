"""``python -m gradlab sum``: the Summed-loss page's numbers from a terminal.

``register(subparsers)`` adds the sub-command; ``run(args)`` prints the table (or
JSON) and returns 0; bad input raises GradLabError, which ``main`` turns into one
``error: ...`` line and exit status 2.

>>> from gradlab.cli.main import main
>>> main(["sum", "--shape", "4x5", "--dtype", "float64", "--format", "json"])  # doctest: +ELLIPSIS
{...
0
"""

from __future__ import annotations

import json
import sys

from gradlab.cli.common import finite_float, to_json
from gradlab.check import parse_shape
from gradlab.labs.summed.differences import sampled_differences
from gradlab.labs.summed.loss import NO_THRESHOLD, SummedLoss, SummedLossSettings, summed_loss
from gradlab.numerics.dtypes import DTYPE_NAMES
from gradlab.labs.summed.answer import summed_answer

__all__ = ["register", "run", "result_json"]


def register(subparsers) -> None:
    """Add the ``sum`` sub-command to an argparse subparsers object."""
    p = subparsers.add_parser(
        "sum", help="a loss summed five ways against its exact sum; the quantum ulp(L)/h",
        description="Sum the per-element squared errors of the grad check's loss (affine model, mse) "
                    "naively, pairwise, as torch.sum, compensated and in float64, against the exact "
                    "sum (same engine as the Summed loss page).")
    p.add_argument("--shape", default="140x120", help="e.g. 140x120")
    p.add_argument("--dtype", choices=DTYPE_NAMES, default="float32")
    p.add_argument("--reduction", choices=("sum", "mean"), default="sum")
    p.add_argument("--h", type=finite_float, default=1e-3, help="the finite-difference step")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(run=run)


def result_json(result: SummedLoss, differences=None) -> dict:
    """The lab's numbers as plain JSON values (the exact sum as a fraction's text, too), and the
    check's forward differences at sampled elements when given (the page's main chart)."""
    s = result.settings
    answer = summed_answer(result)
    return to_json({
        "shape": list(s.shape), "dtype": s.dtype, "reduction": s.reduction, "h": s.h,
        "exact": result.exact_float, "exact_fraction": f"{result.exact.numerator}/{result.exact.denominator}",
        "ulp": result.ulp_loss, "quantum": result.quantum, "gradient_size": result.gradient_size,
        "answer": {"level": answer.level, "text": answer.text},
        "threshold_term": {"index": result.term_index, "value": float(result.terms[result.term_index])},
        "rows": [{"method": r.method, "label": r.label, "value": r.value, "error": r.error,
                  "error_ulps": r.error_ulps, "threshold": r.threshold,
                  "threshold_reason": r.threshold_reason} for r in result.rows],
        "differences": [] if differences is None else differences.to_dict("records"),
    })


def _printed(differences) -> str:
    """What the check printed at the sampled elements: each value and how often."""
    counts = differences["difference"].value_counts().sort_index()
    return ", ".join(f"{n} × {v:.6g}" for v, n in counts.items())


def _text(result: SummedLoss, differences) -> str:
    j = result.term_index
    lines = [summed_answer(result).text, "",
             f"exact L  {result.exact_float:.17g}", f"ulp(L)   {result.ulp_loss:.6g}",
             f"quantum  {result.quantum:.6g}  (ulp(L)/h)",
             f"the check prints at {len(differences)} elements: {_printed(differences)}", "",
             f"moves at: the smallest increase of the largest term (element {j}, {float(result.terms[j]):.6g}) "
             "that changes the method's L", "",
             f"{'method':<16}{'L':>22}{'error':>12}{'ulps':>10}{'moves at':>20}"]
    reasons = []
    for r in result.rows:
        moves = f"{r.threshold:>20.3g}" if r.threshold_reason is None else f"{'none (' + r.threshold_reason + ')':>20}"
        lines.append(f"{r.label:<16}{r.value:>22.17g}{r.error:>12.3g}{r.error_ulps:>10.3g}{moves}")
        if r.threshold_reason is not None and r.threshold_reason not in reasons:
            reasons.append(r.threshold_reason)
    lines += [f"{reason}: {NO_THRESHOLD[reason]}" for reason in reasons]
    return "\n".join(lines) + "\n"


def run(args) -> int:
    """Sum the loss the parsed ``args`` describe and print it."""
    settings = SummedLossSettings(shape=parse_shape(args.shape), dtype=args.dtype,
                                  reduction=args.reduction, h=args.h)
    result, differences = summed_loss(settings), sampled_differences(settings)
    if args.format == "json":
        json.dump(result_json(result, differences), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_text(result, differences))
    return 0
