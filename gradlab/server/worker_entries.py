"""What marks a function as work a page runs in a worker process: its name, time limit and advice.

A lab declares its worker entry where it defines it, with :func:`worker_entry`; the page runs it
through :func:`gradlab.ui.worker_calls.heavy`, which reads the mark. The time limit is a sum of
:class:`~gradlab.limits.Limits` fields, read when the call starts (so ``GRADLAB_LIMITS`` and a
test's patched limits apply), and the over-the-limit sentence names those fields.

>>> @worker_entry("a small sum", "request_seconds", advice="Add fewer numbers.")
... def add(values):
...     return sum(values)
>>> add.worker_entry.limit_name, add.limit_advice
('LIMITS.request_seconds', 'Add fewer numbers.')
>>> add.worker_entry.seconds() > 0
True
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable

import gradlab.limits

__all__ = ["WorkerEntry", "worker_entry", "ENTRIES", "all_entries"]


@dataclass(frozen=True)
class WorkerEntry:
    """How a worker call is named in its messages, and the Limits fields whose sum is its time limit."""

    what: str
    limit_fields: tuple[str, ...]

    @property
    def limit_name(self) -> str:
        """The limit as a message names it, e.g. ``LIMITS.full_check_seconds + LIMITS.request_seconds``."""
        return " + ".join(f"LIMITS.{name}" for name in self.limit_fields)

    def seconds(self) -> float:
        """The limit now (read at the call, not at import)."""
        return sum(getattr(gradlab.limits.LIMITS, name) for name in self.limit_fields)


#: Every marked function of every module imported so far (:func:`all_entries` imports them all).
ENTRIES: dict[Callable, WorkerEntry] = {}


def worker_entry(what: str, *limit_fields: str, advice: str | None = None,
                 forecast: Callable[..., float] | None = None):
    """Mark ``fn`` as a worker entry limited by the sum of ``limit_fields`` of LIMITS.

    ``advice`` ends its over-the-limit sentences (``fn.limit_advice``, read by
    :func:`gradlab.server.pool.run_limited`); ``forecast(*args)`` says roughly how many seconds a
    call takes (``fn.forecast_seconds``: a long one starts in the pool's long lane).
    """
    for name in limit_fields:
        if not hasattr(gradlab.limits.LIMITS, name):
            raise ValueError(f"LIMITS has no field {name!r}")

    def mark(fn):
        fn.worker_entry = ENTRIES[fn] = WorkerEntry(what, limit_fields)
        if advice is not None:
            fn.limit_advice = advice
        if forecast is not None:
            fn.forecast_seconds = forecast
        return fn

    return mark


def all_entries() -> dict[Callable, WorkerEntry]:
    """Every worker entry: each lab package's modules, imported.

    >>> any(entry.what == "the summed loss" for entry in all_entries().values())
    True
    """
    import gradlab.labs

    for module in pkgutil.walk_packages(gradlab.labs.__path__, "gradlab.labs."):
        importlib.import_module(module.name)
    return dict(ENTRIES)
