"""A pool worker process as the parent sees it: its memory, its CPU time, ending it, its priority.

:class:`gradlab.server.pool.WorkerPool` holds one per process it started (the
process runs :func:`gradlab.server.worker.serve`); both readings come from
``/proc`` and are 0 where it cannot be read (the process is gone).
"""

from __future__ import annotations

import multiprocessing
import os
import select
from dataclasses import dataclass, field
from typing import Callable

from gradlab.server.lanes import Call
from gradlab.server.worker import LONG_CALL_NICENESS

__all__ = ["WorkerProcess", "readiness", "warmest", "coldest", "CORES"]


def warmest(workers: list) -> int:
    """The index of the idle worker that answered most calls: a worker started to replace one
    that ran a long call begins with cold caches (a cheap round-off comparison takes ~1 s more
    there than on a worker that has answered calls before), so it is used last.

    >>> warmest([WorkerProcess(None, None, served=2), WorkerProcess(None, None, served=5)])
    1
    """
    return max(range(len(workers)), key=lambda i: workers[i].served)


def coldest(workers: list) -> int:
    """The index of the idle worker that answered fewest calls: the one to end when too many wait."""
    return min(range(len(workers)), key=lambda i: workers[i].served)

@dataclass
class WorkerProcess:
    """One worker process, its pipe, and the call it runs (None: idle)."""

    process: multiprocessing.process.BaseProcess
    conn: object
    call: Call | None = None
    long: bool = False  # ran a long call, at LONG_CALL_NICENESS (see gradlab.server.lanes.LONG_CALL_SECONDS)
    served: int = 0  # calls it answered: its caches (parsed expressions, exact references) warm with them
    # /proc/<pid>/statm and stat, opened once and re-read (pread at 0): opening them again
    # for each reading costs ~170 µs of the waiting server's CPU against ~40 µs.
    _files: dict = field(default_factory=dict, repr=False)

    def _read(self, name: str) -> bytes:
        fd = self._files.get(name)
        if fd is None:
            fd = self._files[name] = os.open(f"/proc/{self.process.pid}/{name}", os.O_RDONLY)
        return os.pread(fd, 1024, 0)  # a process that ended (and was reaped) reads as an error

    def rss_mb(self) -> float:
        """Resident memory of the worker in MB, from /proc; 0 where unreadable."""
        try:
            return int(self._read("statm").split()[1]) * _PAGE / 2**20
        except (OSError, ValueError, IndexError):
            return 0.0

    def cpu_seconds(self) -> float:
        """CPU seconds the worker has used (user + system), from /proc; 0 where unreadable."""
        try:
            fields = self._read("stat").rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / _TICKS
        except (OSError, ValueError, IndexError):
            return 0.0

    def kill(self) -> None:
        try:
            self.process.kill()
        except (OSError, AttributeError, ValueError):
            pass
        files, self._files = self._files, {}  # no reading after this: a closed fd's number is reused
        for fd in files.values():
            os.close(fd)

    def lower_priority(self) -> None:
        self.long = True
        try:  # raising one's own process's niceness needs no privilege
            os.setpriority(os.PRIO_PROCESS, self.process.pid, LONG_CALL_NICENESS)
        except (OSError, TypeError):
            pass


_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICKS = os.sysconf("SC_CLK_TCK")  # /proc/<pid>/stat counts CPU time in these


#: Cores a worker's threads may compute on at once: its CPU time grows at most this fast.
CORES = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def readiness(conn) -> Callable[[float], bool]:
    """``ready(timeout)``: whether ``conn`` has a message (or was closed) within ``timeout`` seconds.

    One poll object registered once per wait: ``conn.poll(timeout)`` builds a selector on
    every call (30 µs of CPU), most of a wake-up's cost at a wake-up every POLL_SECONDS.
    A connection without a file descriptor (a test's) is asked ``conn.poll(timeout)``.

    >>> import multiprocessing
    >>> a, b = multiprocessing.Pipe()
    >>> ready = readiness(a)
    >>> ready(0), b.send("hello"), ready(0)
    (False, None, True)
    """
    try:
        fd = conn.fileno()
    except (AttributeError, OSError, ValueError):
        return conn.poll
    poller = select.poll()
    poller.register(fd, select.POLLIN)  # a closed pipe (POLLHUP) is reported too: recv then raises
    return lambda timeout: bool(poller.poll(timeout * 1000))
