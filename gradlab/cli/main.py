"""``python -m gradlab``: the engine from a terminal, a notebook or CI.

Every page's numbers come from the same engine calls, so what the browser
shows can be reproduced here. Bad input exits 2 with one line ``error: ...``
on stderr and no traceback.

>>> main(["sweep", "x**2", "--at", "3", "--dtype", "float64", "--scheme", "central",
...       "--points", "5", "--format", "csv"]) == 0  # doctest: +ELLIPSIS
dtype,scheme,eps,step,...
True
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from typing import Sequence

from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES, DTYPE_NAMES
from gradlab.numerics.schemes import SCHEME_NAMES

__all__ = ["main", "OneLineParser", "finite_float", "to_json"]

class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str):  # noqa: D102 - argparse's hook
        if "required: expression" in message:
            # argparse reads '-x**2' as an option, so the expression looks missing.
            message += " (an expression starting with '-' goes after '--', as in: sweep --at 1 -- '-x**2')"
        self.exit(2, f"error: {message}\n")


def finite_float(text: str) -> float:
    """An argparse type: a finite float, with a message naming what was given."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def to_json(value):
    """Make a value JSON-safe: non-finite floats become null, numpy scalars plain numbers."""
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ---------------------------------------------------------------- sweep


def _add_sweep(subparsers) -> None:
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
    p.set_defaults(run=_run_sweep)


def _run_sweep(args) -> int:
    from gradlab.limits import LIMITS
    from gradlab.server.pool import run_in_child

    # In a child process, text included: a runaway step (a big-integer power, the digits of
    # a huge number) is ended at the bound, as on the server, not waited for.
    sys.stdout.write(run_in_child(_sweep_output, args, seconds=LIMITS.request_seconds,
                                  what=f"the sweep of {args.expression}"))
    return 0


def _sweep_output(args) -> str:
    """What ``sweep`` prints, as one string (run in the child)."""
    import io

    from gradlab.sweep.engine import SweepSettings, run_sweep

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


def _records(frame) -> list[dict]:
    return [to_json(row) for row in frame.astype(object).to_dict(orient="records")]


def _sweep_json(result) -> dict:
    ref = result.reference
    return to_json({
        "expression": result.settings.expression,
        "derivative": result.derivative_text,
        "x": result.settings.x,
        "reference": float(ref.d1) if ref.defined else None,
        "reference_text": _digits(ref.d1) if ref.defined else None,
        "undefined_reason": ref.reason,
        "rows": _records(result.table),
        "autograd": _records(result.autograd[["dtype", "value", "abs_error", "rel_error"]]),
        "best": _records(result.best[["dtype", "scheme", "eps", "rel_error", "robust_eps",
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


# ---------------------------------------------------------------- entry point


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m gradlab", description=__doc__.split("\n")[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    # Imported here, not at the top: gradlab.cli.check uses this module's to_json.
    from gradlab.cli import check, grid, summed

    _add_sweep(subparsers)
    check.register(subparsers)
    grid.register(subparsers)
    summed.register(subparsers)
    return parser


def _join_negative_numbers(argv: Sequence[str]) -> list[str]:
    """Write ``--opt -1e-3`` as ``--opt=-1e-3``.

    argparse takes a token like ``-1e-3`` for an option (its negative-number
    pattern has no exponent), so ``--at -1e-3`` would fail with "expected one
    argument"; joined with ``=``, it is unambiguous.

    >>> _join_negative_numbers(["sweep", "x", "--at", "-1e-3", "--points", "5"])
    ['sweep', 'x', '--at=-1e-3', '--points', '5']
    """
    out: list[str] = []
    for token in argv:
        if out and out[-1].startswith("--") and out[-1] != "--" and "=" not in out[-1] \
                and _NEGATIVE_NUMBER.match(token):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|nan|infinity)$", re.IGNORECASE)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the process exit status."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(_join_negative_numbers(list(argv)))
    try:
        return int(args.run(args) or 0)
    except GradLabError as err:
        print(f"error: {_one_line(str(err))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, ArithmeticError, RuntimeError, MemoryError, RecursionError) as err:
        # A bug, not the user's fault; still one line and no traceback (tests look for this text).
        print(f"error: {UNEXPECTED} ({type(err).__name__}: {_one_line(str(err))})", file=sys.stderr)
        return 2


#: Start of the message for an error GradLab did not anticipate (a bug to report).
UNEXPECTED = "GradLab failed unexpectedly; please report the command line"


def _one_line(text: str) -> str:
    return " ".join(text.split())
