"""Caches every pool worker starts with: the pages' default views computed once, in the fork server.

Importing this module (it is last in :data:`gradlab.server.worker.PRELOAD`, which the fork
server imports before forking any worker) runs the engine's most common calls once at a
small size: the parsed formulas, derivatives and exact references they cache are then in the
fork server's memory, and every worker forked from it starts with them. Without it, the first
cheap call on a fresh worker pays for them itself (a 0.01 s round-off comparison costs 0.26 s of
CPU there), and a worker is fresh after every long call (a long call's worker cannot get its
priority back, so it is replaced): under a visitor reloading heavy work, another visitor's
cheap comparison would take 1-2 s on a loaded machine instead of 0.1 s (benchmarks/bench_visitors.py).

A failure here is only a colder start: nothing is raised.

>>> WARMED  # the calls that ran (all of them, unless one failed)
('roundoff', 'check', 'sweep')
"""

from __future__ import annotations

import logging

__all__ = ["WARMED", "warm_up"]

_LOG = logging.getLogger(__name__)


def _calls():
    from gradlab.check import CheckSettings
    from gradlab.labs.explorer import view as explorer_view
    from gradlab.labs.gradcheck import function_view
    from gradlab.labs.roundoff import RoundoffSettings
    from gradlab.labs.roundoff import view as roundoff_view
    from gradlab.step_sweep.engine import SweepSettings

    return (("roundoff", lambda: roundoff_view(RoundoffSettings(samples=500))),
            ("check", lambda: function_view(CheckSettings())),
            ("sweep", lambda: explorer_view(SweepSettings("sin(x)", 1.0, points=7, frames=True))))


def warm_up() -> tuple[str, ...]:
    """Run each call once; the names of those that ran."""
    done = []
    for name, call in _calls():
        try:
            call()
            done.append(name)
        except Exception:  # noqa: BLE001 - a colder start, never a failed one
            _LOG.warning("warming the worker caches: %s failed", name, exc_info=True)
    return tuple(done)


WARMED = warm_up()
