"""What Linux says about a running process and the machine, read from ``/proc``.

Memory, threads and CPU seconds of one process, the tree of processes below a server (its
fork server and pool workers), and the cores other jobs on the machine used meanwhile:
latencies measured beside them are partly theirs.

>>> import os
>>> rss_kib(os.getpid()) > 0 and threads(os.getpid()) >= 1 and alive(os.getpid())
True
>>> os.getpid() in descendants(os.getpid())
True
"""

from __future__ import annotations

import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _status_field(pid: int, name: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1])
    return 0


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (which may hold spaces)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` in KiB (``VmRSS``).

    >>> rss_kib(os.getpid()) > 1024
    True
    """
    return _status_field(pid, "VmRSS")


def threads(pid: int) -> int:
    """Threads of ``pid``.

    >>> threads(os.getpid()) >= 1
    True
    """
    return _status_field(pid, "Threads")


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` itself; raises OSError once it is gone.

    >>> cpu_seconds(os.getpid()) >= 0
    True
    """
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / _TICKS


def cpu_seconds_of(pid: int, children: bool = True) -> float:
    """CPU seconds (user + system) of one process, with its reaped children's unless ``children``
    is False (a fork server's count jumps when it reaps a killed worker); 0 when gone.

    >>> cpu_seconds_of(2 ** 22 + 1)  # above pid_max: no such process
    0.0
    """
    try:
        fields = _stat(pid)
    except OSError:
        return 0.0
    own = int(fields[11]) + int(fields[12])
    return (own + (int(fields[13]) + int(fields[14]) if children else 0)) / _TICKS


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed and not yet reaped, does not).

    >>> alive(os.getpid()), alive(2 ** 22 + 1)
    (True, False)
    """
    try:
        return _stat(pid)[0] != "Z"
    except OSError:
        return False


def _children() -> dict[int, list[int]]:
    """parent pid -> child pids, of every process alive now."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (the server, its fork server and pool workers).

    >>> descendants(os.getpid())[0] == os.getpid()
    True
    """
    children, out, todo = _children(), [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and every process below it, in MB.

    >>> tree_rss_mb(os.getpid()) > 1
    True
    """
    total = 0
    for p in descendants(pid):
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return total * os.sysconf("SC_PAGE_SIZE") / 2**20


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and every descendant alive now.

    >>> tree_cpu_seconds(os.getpid()) >= cpu_seconds(os.getpid())
    True
    """
    return sum(cpu_seconds_of(p) for p in descendants(pid))


def machine_ticks() -> tuple[int, int, int]:
    """(all CPU ticks, ticks stolen by the hypervisor, idle ticks) of this machine, from /proc/stat.

    >>> total, stolen, idle = machine_ticks()
    >>> total >= idle >= 0 and total >= stolen >= 0
    True
    """
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(fields[:8]), fields[7] if len(fields) > 7 else 0, fields[3] + fields[4]  # idle + iowait


def process_ticks() -> dict[int, tuple[int, int, int, int]]:
    """pid -> (parent pid, CPU ticks of its own (user + system), of its reaped children (their
    user + system, theirs included), start time in ticks since boot), for every process alive now.

    >>> process_ticks()[os.getpid()][0] == os.getppid()
    True
    """
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                f = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                out[int(entry.name)] = (int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14]), int(f[19]))
            except (OSError, ValueError, IndexError):
                continue
    return out


def other_cores(before: dict[int, tuple], after: dict[int, tuple], seconds: float, ours: int = 0) -> float:
    """Cores that processes outside ``ours``'s tree (default: this process: the client, the servers
    and their workers, HAProxy) used between two :func:`process_ticks` snapshots ``seconds`` apart:
    another job on the machine.

    Each process's own time and its reaped children's are counted, so a job's short-lived processes
    count too (their parent reaps them): the gain of every other process alive at both snapshots
    (the same process: same start time), plus all of a new one's, less what a process that ended
    had used by the first snapshot (its parent's children's time gains all of it).

    >>> other_cores({1: (0, 10, 0, 5), 2: (1, 0, 0, 9)}, {1: (0, 10, 0, 5), 2: (1, 2 * _TICKS, 0, 9)}, 2.0, ours=1)
    0.0
    >>> other_cores({1: (0, 10, 0, 5), 3: (0, 0, 0, 7)}, {1: (0, 10, 0, 5), 3: (0, 2 * _TICKS, 0, 7)}, 2.0, ours=1)
    1.0
    """
    ours = ours or os.getpid()
    children: dict[int, list[int]] = {}
    for pid, row in {**before, **after}.items():
        children.setdefault(row[0], []).append(pid)
    mine, todo = set(), [ours]
    while todo:
        pid = todo.pop()
        if pid not in mine:
            mine.add(pid)
            todo += children.get(pid, [])
    ticks = 0
    for pid, (_, own, reaped, started) in after.items():
        if pid in mine:
            continue
        was = before.get(pid)
        if was is not None and was[3] == started:
            ticks += own + reaped - was[1] - was[2]
        else:
            ticks += own + reaped  # started in between
    for pid, (parent, own, reaped, started) in before.items():
        now = after.get(pid)
        if pid not in mine and parent not in mine and (now is None or now[3] != started):
            ticks -= own + reaped  # ended in between: counted whole in its parent's children's time
    return max(0.0, ticks / os.sysconf("SC_CLK_TCK") / max(seconds, 1e-9))
