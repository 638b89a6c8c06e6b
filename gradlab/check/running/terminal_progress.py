"""The local API's default progress: a line on a terminal's stderr for a check that takes long.

``gradlab.gradcheck(..., progress=None)`` in a terminal reports its perturbations' pace once
a check has run for :data:`QUIET_SECONDS` (a quick check prints nothing), with an estimate
of the time left from that pace (``elapsed · (total - done) / done``), on one line rewritten
in place. When the pass is done the line says the values are being judged (the step search,
noise tables and float64 witness of the values beyond tolerance: two thirds of a 1.2
M-parameter model's check came after its pass), and :meth:`TerminalProgress.close`, at the
check's end, ends the line with the whole time. Not a terminal (a notebook's captured stream,
a log, a test): nothing, and no cost. A ``progress`` callable of the caller's own replaces it.

>>> import io
>>> clock = iter([0.0, 3.0, 6.0, 6.0, 20.0]).__next__
>>> out = io.StringIO()
>>> report = TerminalProgress(out, clock)
>>> report(1, 4); report(4, 4); report.close()
>>> out.getvalue().split("\\r")[1:]
['gradcheck: 1 of 4 perturbations evaluated, 3 s so far, about 9 s left', '\\x1b[Kgradcheck: 4 of 4 perturbations evaluated in 6 s; judging the values beyond tolerance (step search, noise, float64 witness)...', '\\x1b[Kgradcheck: done in 20 s\\n']
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
        self.began = self.started = clock()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        elapsed = self.clock() - self.began
        if elapsed < QUIET_SECONDS and not self.shown:
            return
        if done >= total:  # the pass is done: its values are judged next (close ends the line)
            self.stream.write(f"\r\x1b[Kgradcheck: {done:,} of {total:,} perturbations evaluated in "
                              f"{elapsed:.0f} s; judging the values beyond tolerance (step search, noise, "
                              "float64 witness)...")
            self.stream.flush()
            self.shown, self.began = True, self.clock()  # a later pass (second order) starts afresh
            return
        left = elapsed * (total - done) / max(done, 1)
        self.stream.write(f"\rgradcheck: {done:,} of {total:,} perturbations evaluated, {elapsed:.0f} s so far, "
                          f"about {left:.0f} s left")
        self.stream.flush()
        self.shown = True


    def close(self) -> None:
        """At the check's end: the line, if one was shown, ended with the check's whole time."""
        if self.shown:
            self.stream.write(f"\r\x1b[Kgradcheck: done in {self.clock() - self.started:.0f} s\n")
            self.stream.flush()
            self.shown = False


def terminal_progress(stream: TextIO | None = None) -> TerminalProgress | None:
    """A :class:`TerminalProgress` on ``stream`` (stderr) when it is a terminal, else None."""
    stream = sys.stderr if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        tty = False
    return TerminalProgress(stream) if tty else None
