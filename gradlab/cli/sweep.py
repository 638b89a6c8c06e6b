"""``python -m gradlab sweep``: the Explorer's error-vs-step sweep from a terminal (table, csv, json).

>>> from gradlab.cli.main import main
>>> main(["sweep", "x**2", "--at", "3", "--dtype", "float64", "--scheme", "central",
...       "--points", "5", "--format", "csv"]) == 0  # doctest: +ELLIPSIS
dtype,scheme,eps,step,...
True
"""

from __future__ import annotations

import json
import sys

from gradlab.cli.common import finite_float, records, to_json
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, DTYPE_NAMES
from gradlab.numerics.schemes import SCHEME_NAMES

__all__ = ["register", "run"]



def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep", help="error of finite differences against eps, per dtype and scheme",
        description="Sweep the step eps for f'(x) and compare every estimate with the exact derivative.",
    )
    p.add_argument("expression", help="a function of x, e.g. 'exp(x)/sqrt(sin(x)**3 + cos(x)**3)'")
    p.add_argument("--at", dest="x", type=finite_float, required=True, help="the point x")
    p.add_argument("--dtype", action="append", choices=ALL_DTYPE_NAMES,
                   help="repeatable; default: the four native ones (float8_* are emulated: x, x+h "
                        "and every function value rounded to the 8-bit format)")
    p.add_argument("--scheme", action="append", choices=SCHEME_NAMES, help="repeatable; default: all six")
    p.add_argument("--eps-min", type=finite_float, default=1e-16)
    p.add_argument("--eps-max", type=finite_float, default=1.0)
    p.add_argument("--points", type=int, default=61)
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.set_defaults(run=run)


def run(args) -> int:
    from gradlab.limits import LIMITS
    from gradlab.server.pool import run_in_child

    # In a child process, text included: a runaway step (a big-integer power, the digits of
    # a huge number) is ended at the limit, as on the server, not waited for.
    sys.stdout.write(run_in_child(_sweep_output, args, seconds=LIMITS.request_seconds,
                                  what=f"the sweep of {args.expression}"))
    return 0


def _sweep_output(args) -> str:
    """What ``sweep`` prints, as one string (run in the child)."""
    import io

    from gradlab.step_sweep.engine import SweepSettings, run_sweep

    out = io.StringIO()
    settings = SweepSettings(
        args.expression, args.x,
        tuple(args.dtype or DTYPE_NAMES), tuple(args.scheme or SCHEME_NAMES),
        args.eps_min, args.eps_max, args.points,
    )
    result = run_sweep(settings)
    if args.format == "csv":
        out.write(result.table.to_csv(index=False))
    elif args.format == "json":
        json.dump(_sweep_json(result), out, indent=1, allow_nan=False)
        out.write("\n")
    else:
        out.write(_sweep_text(result))
    return out.getvalue()


def _sweep_json(result) -> dict:
    ref = result.reference
    return to_json({
        "expression": result.settings.expression,
        "derivative": result.derivative_text,
        "x": result.settings.x,
        "reference": float(ref.d1) if ref.defined else None,
        "reference_text": _digits(ref.d1) if ref.defined else None,
        "undefined_reason": ref.reason,
        "rows": records(result.table),
        "autograd": records(result.autograd[["dtype", "value", "abs_error", "rel_error"]]),
        "best": records(result.best[["dtype", "scheme", "eps", "rel_error", "robust_eps",
                                      "robust_rel_error", "predicted_eps", "predicted_rel_error"]]),
        "notes": [{"level": n.level, "text": n.text} for n in result.notes],
    })


def _digits(value, digits: int = 30) -> str:
    from gradlab.numerics.mp_format import format_mp

    return format_mp(value, digits)


def _sweep_text(result) -> str:
    ref = result.reference
    lines = [
        f"f(x)  = {result.settings.expression}",
        f"f'(x) = {result.derivative_text}",
        f"x     = {result.settings.x!r}",
        "exact f'(x) = " + (_digits(ref.d1) if ref.defined else f"undefined: {ref.reason}"),
        "",
        "autograd (error against the exact value at x rounded to the dtype):",
        _frame_text(result.autograd[["dtype", "x", "value", "abs_error", "rel_error"]]),
        "",
        "best step per dtype and scheme (observed on the sweep; predicted by the theory):",
        _frame_text(result.best),
        "(rel_error is the best step's own error, partly luck; robust_eps is the step whose neighbours",
        " within a factor 3 do best, robust_rel_error their median error. An error below the dtype's",
        " unit round-off u is its rounding: no result in the dtype is closer than that.)",
    ]
    if result.notes:
        lines += ["", "notes:"] + [f"  - {'warning: ' if n.is_warning else ''}{n.text}" for n in result.notes]
    return "\n".join(lines) + "\n"


def _frame_text(frame) -> str:
    return frame.to_string(index=False, float_format=lambda v: f"{v:.3g}")
