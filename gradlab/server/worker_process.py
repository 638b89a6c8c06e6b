"""A pool worker process as the parent sees it: its memory, its CPU time, ending it, its priority.

:class:`gradlab.server.pool.WorkerPool` holds one per process it started (the
process runs :func:`gradlab.server.worker.serve`); both readings come from
``/proc`` and are 0 where it cannot be read (the process is gone).
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass

from gradlab.server.lanes import Call
from gradlab.server.worker import LONG_CALL_NICENESS

__all__ = ["WorkerProcess"]

@dataclass
class WorkerProcess:
    """One worker process, its pipe, and the call it runs (None: idle)."""

    process: multiprocessing.process.BaseProcess
    conn: object
    call: Call | None = None
    long: bool = False  # ran a long call, at LONG_CALL_NICENESS (see gradlab.server.lanes.LONG_CALL_SECONDS)

    def rss_mb(self) -> float:
        try:
            with open(f"/proc/{self.process.pid}/statm") as f:
                return int(f.read().split()[1]) * _PAGE / 2**20
        except (OSError, ValueError, IndexError):
            return 0.0

    def cpu_seconds(self) -> float:
        """CPU seconds the worker has used (user + system), from /proc; 0 where unreadable."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / _TICKS
        except (OSError, ValueError, IndexError):
            return 0.0

    def kill(self) -> None:
        try:
            self.process.kill()
        except (OSError, AttributeError, ValueError):
            pass

    def lower_priority(self) -> None:
        self.long = True
        try:  # raising one's own process's niceness needs no privilege
            os.setpriority(os.PRIO_PROCESS, self.process.pid, LONG_CALL_NICENESS)
        except (OSError, TypeError):
            pass


_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICKS = os.sysconf("SC_CLK_TCK")  # /proc/<pid>/stat counts CPU time in these
