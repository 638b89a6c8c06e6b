"""The local API's default progress: a line on a terminal's stderr for a check that takes long.

``gradlab.gradcheck(..., progress=None)`` in a terminal reports its perturbations' pace once
a check has run for :data:`QUIET_SECONDS` (a quick check prints nothing), with an estimate
of the time left from that pace (``elapsed · (total - done) / done``), on one line rewritten
in place and ended when the pass is done. Not a terminal (a notebook's captured stream, a
log, a test): nothing, and no cost. A ``progress`` callable of the caller's own replaces it.

>>> import io
>>> clock = iter([0.0, 3.0, 6.0, 6.0]).__next__
>>> out = io.StringIO()
>>> report = TerminalProgress(out, clock)
>>> report(1, 4); report(4, 4)
>>> out.getvalue()
'\\rgradcheck: 1 of 4 perturbations evaluated, 3 s so far, about 9 s left\\r\\x1b[Kgradcheck: 4 of 4 perturbations evaluated in 6 s\\n'
>>> terminal_progress(io.StringIO()) is None  # not a terminal
True
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

__all__ = ["QUIET_SECONDS", "TerminalProgress", "terminal_progress"]

#: A check quicker than this prints nothing.
QUIET_SECONDS = 2.0


class TerminalProgress:
    """``progress(done, total)`` writing its pace and estimate to ``stream`` past QUIET_SECONDS."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.perf_counter):
        self.stream, self.clock = stream, clock
        self.began = clock()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        elapsed = self.clock() - self.began
        if elapsed < QUIET_SECONDS and not self.shown:
            return
        if done >= total:  # the pass's line ended (written whole when it is the first)
            self.stream.write(f"\r\x1b[Kgradcheck: {done:,} of {total:,} perturbations evaluated in "
                              f"{elapsed:.0f} s\n")
            self.stream.flush()
            self.shown, self.began = False, self.clock()  # a later pass (second order) starts afresh
            return
        left = elapsed * (total - done) / max(done, 1)
        self.stream.write(f"\rgradcheck: {done:,} of {total:,} perturbations evaluated, {elapsed:.0f} s so far, "
                          f"about {left:.0f} s left")
        self.stream.flush()
        self.shown = True


def terminal_progress(stream: TextIO | None = None) -> TerminalProgress | None:
    """A :class:`TerminalProgress` on ``stream`` (stderr) when it is a terminal, else None."""
    stream = sys.stderr if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        tty = False
    return TerminalProgress(stream) if tty else None
