"""The loop a pool worker process runs (:mod:`gradlab.server.pool` is the parent's side).

A worker receives ``(fn, args, kwargs, wants_progress)``, calls ``fn`` and sends
back one of ``("done", result)`` or ``("error", kind, payload)``; a MemoryError
(an allocation refused: Python's own, not the parent's limit) is
``("error", "memory", megabytes held)``, for the parent to word with its limit. While ``fn``
runs it reports to the parent, on the same pipe:

* ``("phase", (what, seconds, limit_name, advice))`` / ``("phase", None)`` when a
  :func:`gradlab.server.deadline.run_within` block starts and ends, so the parent
  can end the worker when one C call holds it past that block's limit;
* ``("progress", done, total)`` when the caller asked for progress (the parent
  calls the caller's callback, which may stop the work by raising).

Only the parent kills; the worker never exits on its own while the pipe is open.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
import pickle
import signal
import traceback

from gradlab.errors import GradLabError, LimitError

__all__ = ["serve", "PRELOAD", "preload", "memory_message", "refused_memory_message", "died_message",
           "unpack_reply", "WorkerFailed", "WORKER_NICENESS", "LONG_CALL_NICENESS"]

#: A server's worker runs at this niceness: when heavy work and the server's own reruns
#: want the same cores, the reruns (every other visitor's page) come first: at normal priority,
#: workers running full checks put trivial pages' p95 at 1.2 s on 2 cores.
WORKER_NICENESS = 10
#: A call still running after gradlab.server.pool.LONG_CALL_SECONDS drops to this niceness
#: (CFS weight 15 against a fresh worker's 110), and the pool admits another call beside
#: it: a full check's 30 s do not hold up the next visitor's 0.1 s round-off comparison.
LONG_CALL_NICENESS = 19

#: Imported once, before the first job (in the fork server, so every forked worker has them);
#: the last computes the pages' default views once, so forked workers start with warm caches.
PRELOAD = ("torch", "sympy", "mpmath", "pandas", "gradlab.step_sweep.engine", "gradlab.check.lab.settings",
           "gradlab.check.lab.reduction_sweep", "gradlab.labs.roundoff.engine", "gradlab.labs.gradcheck",
           "gradlab.server.warm_up")


def preload() -> None:
    """Import :data:`PRELOAD` and keep torch to one thread (a worker is one core's work)."""
    for name in PRELOAD:
        importlib.import_module(name)
    import torch

    torch.set_num_threads(1)


def memory_message(what: str, megabytes: float, limit: float) -> str:
    """The sentence shown when ``what`` went over the memory limit of a worker (and was killed)."""
    return (f"Computing {what} needed more than {limit:g} MB of memory (it had reached "
            f"{megabytes:,.0f} MB), GradLab's limit per request (LIMITS.worker_memory_mb), so it "
            f"was stopped: one request cannot slow the server for everyone. Simplify the "
            f"expression or ask for less.")


def refused_memory_message(what: str, megabytes: float, limit: float) -> str:
    """The sentence shown when ``what`` raised MemoryError: one allocation was refused, most
    often a single huge one (a big integer's digits), while the worker held ``megabytes``.

    >>> print(refused_memory_message("the sweep", 231.6, 1536))  # doctest: +NORMALIZE_WHITESPACE
    Computing the sweep asked for more memory at once than the system would give (an allocation
    was refused when the process held 232 MB; GradLab's limit per request,
    LIMITS.worker_memory_mb, is 1536 MB), so it was stopped: one request cannot slow the server
    for everyone. Simplify the expression or ask for less.
    """
    return (f"Computing {what} asked for more memory at once than the system would give (an "
            f"allocation was refused when the process held {megabytes:,.0f} MB; GradLab's limit per "
            f"request, LIMITS.worker_memory_mb, is {limit:g} MB), so it was stopped: one request "
            f"cannot slow the server for everyone. Simplify the expression or ask for less.")


def died_message(what: str, exitcode: int | None, limit: float) -> str:
    """The sentence for a worker that ended by itself (the kernel's out-of-memory killer)."""
    return (f"Computing {what} ended the process that ran it (exit code {exitcode}), "
            f"most likely for want of memory (GradLab's limit is LIMITS.worker_memory_mb = {limit:g} MB "
            f"per request): one request cannot slow the server for everyone. Simplify the expression "
            f"or ask for less.")


class WorkerFailed(RuntimeError):
    """The work raised something other than a GradLabError (a bug): shown generically."""


def unpack_reply(reply: tuple):
    """The result of a ``("done", result)`` reply; an ``("error", kind, payload)`` one raised as
    what the caller shows: a GradLabError as itself, a bug as :class:`WorkerFailed`.

    >>> unpack_reply(("done", 42))
    42
    >>> unpack_reply(("error", "limit", "Too many points."))
    Traceback (most recent call last):
    ...
    gradlab.errors.LimitError: Too many points.
    """
    if reply[0] == "done":
        return reply[1]
    _, kind, payload = reply
    if isinstance(payload, GradLabError):
        raise payload
    if kind == "limit":
        raise LimitError(payload)
    if kind == "gradlab":
        raise GradLabError(payload)
    raise WorkerFailed(payload)


def serve(conn, imports: bool = True) -> None:
    """Run jobs from ``conn`` until it closes; ``imports``: import :data:`PRELOAD` first."""
    from gradlab.server.deadline import set_phase_reporter

    _die_with_parent()
    if imports:
        preload()  # a server's worker; a CLI's forked child keeps the parent's modules and threads
        os.nice(max(0, WORKER_NICENESS - os.nice(0)))  # behind the server's reruns (a CLI child: the user's own work)
    elif "torch" in sys.modules:
        # A forked child: the parent's OpenMP threads did not come along, and libgomp waits for them
        # forever at the child's first parallel op (a 1000x1000 matmul, once the parent has run one on
        # 2 threads). On one thread torch runs no parallel region at all.
        sys.modules["torch"].set_num_threads(1)
    set_phase_reporter(lambda phase: conn.send(("phase", phase)))
    while True:
        try:
            fn, args, kwargs, wants_progress = conn.recv()
        except (EOFError, OSError):
            return
        if wants_progress:
            kwargs = {**kwargs, "progress": lambda done, total: conn.send(("progress", done, total))}
        try:
            reply = ("done", fn(*args, **kwargs))
        except MemoryError:
            # Python's own allocation was refused (a huge integer), under the parent's limit or not:
            # the parent words it (refused_memory_message) with the limit it enforces.
            reply = ("error", "memory", _rss_mb())
        except GradLabError as err:
            reply = ("error", "limit" if isinstance(err, LimitError) else "gradlab", err)
        except Exception as err:  # noqa: BLE001 - the parent turns it into a generic failure
            reply = ("error", "other", f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=-8)}")
        del kwargs
        _send(conn, reply)


def _die_with_parent() -> None:
    """Be killed when the parent process goes (Linux's PR_SET_PDEATHSIG): a server stopped
    while a worker runs away must not leave it behind (it stops reading its pipe only
    between jobs). The parent is the fork server, which exits with the server."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # elsewhere: the worker ends at its next job's end-of-file


_PR_SET_PDEATHSIG = 1  # from linux/prctl.h


def _send(conn, reply: tuple) -> None:
    """Send the reply; an exception or result that does not pickle goes as its text."""
    try:
        conn.send(reply)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        if reply[0] == "error" and reply[1] in ("limit", "gradlab"):
            conn.send(("error", reply[1], str(reply[2])))
        else:
            conn.send(("error", "other", f"the result could not be sent back: {type(err).__name__}: {err}"))


def _rss_mb() -> float:
    try:
        with open(f"/proc/{os.getpid()}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")
