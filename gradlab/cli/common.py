"""What every ``python -m gradlab`` subcommand shares: the parser class, argument types, JSON output.

The subcommands (:mod:`gradlab.cli.sweep`, :mod:`~gradlab.cli.check`, :mod:`~gradlab.cli.grid`,
:mod:`~gradlab.cli.summed`) and :mod:`gradlab.cli.main` import this module; it imports none of
them, so the CLI's imports run one way: main -> subcommand -> common.

>>> finite_float("1e-3"), to_json({"x": float("inf"), "n": [1.5, float("nan")]})
(0.001, {'x': None, 'n': [1.5, None]})
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Callable

__all__ = ["OneLineParser", "finite_float", "to_json", "records", "run_check_command"]


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


def records(frame) -> list[dict]:
    """A DataFrame's rows as JSON-safe dicts."""
    return [to_json(row) for row in frame.astype(object).to_dict(orient="records")]


def run_check_command(settings: Callable, output: Callable, format: str, *, what: str, advice: str) -> int:
    """What ``check`` and ``layers`` do: ``settings()`` (the one frozen, validated settings object),
    then ``output(settings, format) -> (text, status)`` in a child process, as on the server (over
    LIMITS.full_check_seconds projected from its pace, LIMITS.request_seconds more, or
    LIMITS.worker_memory_mb it is ended); the text printed and the status returned, or a
    GradLabError as one ``error:`` line and status 2."""
    from gradlab.errors import GradLabError
    from gradlab.limits import LIMITS
    from gradlab.server.pool import run_in_child

    try:
        text, status = run_in_child(output, settings(), format,
                                    seconds=LIMITS.full_check_seconds + LIMITS.request_seconds, what=what,
                                    limit_name="LIMITS.full_check_seconds + LIMITS.request_seconds", advice=advice)
    except GradLabError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return status
