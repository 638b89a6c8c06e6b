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

import os
import re
import sys
from typing import Sequence

from gradlab.cli.common import OneLineParser, finite_float, to_json
from gradlab.errors import GradLabError
from gradlab.limits import server_limits

__all__ = ["main", "build_parser", "OneLineParser", "finite_float", "to_json"]


def build_parser() -> OneLineParser:
    """The parser of every subcommand: each a module of :mod:`gradlab.cli` whose
    ``register(subparsers)`` adds its parser and sets ``run`` as its default.

    >>> [build_parser().parse_args(argv).run.__module__ for argv in (["sweep", "x", "--at", "1"], ["dtypes"])]
    ['gradlab.cli.sweep', 'gradlab.cli.grid']
    """
    # Imported when the parser is built, so `import gradlab.cli.main` stays light.
    from gradlab.cli import check, grid, layers, summed, sweep

    parser = OneLineParser(prog="python -m gradlab", description=__doc__.split("\n")[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for subcommand in (sweep, check, layers, grid, summed):  # the order --help lists them
        subcommand.register(subparsers)
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
        with server_limits():  # the server's size limits bind the CLI too (gradlab.limits.size_limit)
            return int(args.run(args) or 0)
    except GradLabError as err:
        print(f"error: {_one_line(str(err))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # a reader that stopped early (| head): no traceback, as cat or grep
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the interpreter's flush at exit finds a sink
        return 0
    except (ValueError, TypeError, ArithmeticError, RuntimeError, MemoryError, RecursionError) as err:
        # A bug, not the user's fault; still one line and no traceback (tests look for this text).
        print(f"error: {UNEXPECTED} ({type(err).__name__}: {_one_line(str(err))})", file=sys.stderr)
        return 2


#: Start of the message for an error GradLab did not anticipate (a bug to report).
UNEXPECTED = "GradLab failed unexpectedly; please report the command line"


def _one_line(text: str) -> str:
    return " ".join(text.split())
