"""``python -m gradlab grid`` and ``python -m gradlab dtypes``: the Grid page's numbers in a terminal.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> register(parser.add_subparsers(dest="command"))
>>> parser.parse_args(["grid", "--h", "1e-7"]).dtype
'float32'
"""

from __future__ import annotations

import json
from decimal import Decimal

from gradlab.cli.common import finite_float, to_json
from gradlab.labs.grid.story import GRID_ADVICE, grid_fields
from gradlab.labs.grid.representable import GridSettings, grid_difference
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES
from gradlab.numerics.precision_table import CENTRAL_THEORY, COLUMNS, precision_table

__all__ = ["register"]


def register(subparsers) -> None:
    """Add the ``grid`` and ``dtypes`` sub-commands to an argparse subparsers object."""
    p = subparsers.add_parser(
        "grid", help="one forward difference on the dtype's grid: bits, ulps, the step taken, kept bits",
        description="Why (x+h) - x is not h: x, x+h, f(x), f(x+h) as the dtype holds them.")
    p.add_argument("--dtype", choices=ALL_DTYPE_NAMES, default="float32",
                   help="the 8-bit ones are emulated (float32 arithmetic, every result rounded)")
    p.add_argument("--at", dest="x", type=finite_float, default=1.0, help="the point x (default 1)")
    p.add_argument("--h", type=finite_float, default=1e-4, help="the step h > 0 (default 1e-4)")
    p.add_argument("--expression", default="sin(x)", help="a function of x (default sin(x))")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(run=_run_grid)
    d = subparsers.add_parser("dtypes", help="the precision table: every dtype's eps, u, range, best step",
                              description="Bits, precision, eps, unit round-off, range and the central "
                                          "difference's best step and error, per dtype.")
    d.add_argument("--format", choices=("table", "json"), default="table")
    d.set_defaults(run=_run_dtypes)


def _run_grid(args) -> int:
    import sys

    from gradlab.limits import LIMITS
    from gradlab.server.pool import run_in_child

    # In a child process, as on the server: the exact derivative's sympy and mpmath work can hold
    # one C call for many seconds (1/(x**x**x) at 1e9), which only a kill ends at the limit.
    sys.stdout.write(run_in_child(_grid_output, args.dtype, args.x, args.h, args.expression, args.format,
                                  seconds=LIMITS.request_seconds, what=f"the grid's difference of {args.expression}",
                                  advice=GRID_ADVICE))
    return 0


def _grid_output(dtype: str, x: float, h: float, expression: str, form: str) -> str:
    """What ``grid`` prints, as one string (run in the child)."""
    fields = grid_fields(grid_difference(GridSettings(dtype, x, h, expression)))
    if form == "json":
        return json.dumps(to_json(fields), indent=2) + "\n"
    width = max(map(len, fields))
    lines = []
    for key, value in fields.items():
        if key == "answer":
            continue
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 15:
            value = f"{Decimal(value):.6e}"  # steps_in_ulps at x = 0: exact in JSON, hundreds of digits
        lines.append(f"{key:<{width}}  {value!r}" if isinstance(value, float) else f"{key:<{width}}  {value}")
    return "\n".join(lines) + f"\n\n{fields['answer']}\n"


def _run_dtypes(args) -> int:
    table = precision_table()
    if args.format == "json":
        print(json.dumps(to_json(table.to_dict(orient="records")), indent=2))
        return 0
    print(table.rename(columns=COLUMNS).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print()
    print(CENTRAL_THEORY)
    return 0
