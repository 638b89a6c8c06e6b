"""Who is asking, from inside a page's script run, and page script runs taken in turns per visitor.

Streamlit runs each session's script in a thread of the one server process, and
every tab is a session: ten tabs of one visitor reloading a page are ten threads
competing for the interpreter with everyone else's (another visitor's reruns 6-17x
slower on pages that compute in the server). :func:`visitor_turn` wraps a script
run (``app.py``): a visitor (:class:`gradlab.server.visitors.Visitor`, an address
and its browser) runs one script at a time, and an address at most
:data:`ADDRESS_RUNS` (a class behind one school NAT shares an address: its
reruns are a few tens of ms each and the interpreter runs one thread at a time
anyway, so a queue of two costs it nothing). A run that waits is woken by its
turn, by a rerun or stop of its own session (it then goes on, to end at its next
Streamlit call), or after :data:`TURN_WAIT_SECONDS` (it then goes on anyway: a
turn is a courtesy, never a deadlock). While a run waits for a worker process
(:func:`gradlab.ui.worker_calls.heavy`), it gives its turn back: it uses no CPU.

>>> with visitor_turn(Visitor("127.0.0.9")) as held:
...     held
True
>>> Turns().take(Visitor("127.0.0.9"), lambda: False, wait=0.0)
True
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from gradlab.server.visitors import LOCAL, Visitor, visitor_from

__all__ = ["current_visitor", "visitor_turn", "turn_given_back", "Turns", "ADDRESS_RUNS", "TURN_WAIT_SECONDS"]

#: Script runs of one client address at once (each of its visitors: one).
ADDRESS_RUNS = 2
#: The longest a script run waits for its turn before it goes on regardless.
TURN_WAIT_SECONDS = 10.0
_POLL_SECONDS = 0.25  # how often a waiting run looks at its own session's reruns


def current_visitor() -> Visitor | None:
    """The visitor of this thread's script run (None outside one): its address, from the
    peer or a trusted balancer's ``X-Forwarded-For``, and its browser's cookie."""
    import streamlit as st

    from gradlab.ui.compat import session_id

    if session_id() is None:
        return None
    try:
        context = st.context
        return visitor_from(context.ip_address or LOCAL, context.headers, context.cookies)
    except Exception:  # noqa: BLE001 - AppTest's mock runtime has no client context
        return Visitor(LOCAL)


class Turns:
    """Which visitors' script runs hold a turn now (one per visitor, ADDRESS_RUNS per address).

    A run that waits sleeps on an event of its own, woken when a turn it may take is given
    back (and every :data:`_POLL_SECONDS` to look at its session's reruns): a burst of ninety
    tabs from one address waits without waking ninety threads at every turn.
    """

    def __init__(self, address_runs: int = ADDRESS_RUNS) -> None:
        self.address_runs = address_runs
        self._lock = threading.Lock()
        self._visitors: dict[Visitor, int] = {}
        self._addresses: dict[str, int] = {}
        self._waiting: list[tuple[Visitor, threading.Event]] = []  # in arrival order

    def _free(self, visitor: Visitor) -> bool:
        return not self._visitors.get(visitor) and self._addresses.get(visitor.address, 0) < self.address_runs

    def _hold(self, visitor: Visitor) -> None:
        self._visitors[visitor] = self._visitors.get(visitor, 0) + 1
        self._addresses[visitor.address] = self._addresses.get(visitor.address, 0) + 1

    def _next_in_line(self) -> tuple[Visitor, threading.Event] | None:
        """The earliest waiter that may take a turn now (its visitor and address have one free)."""
        return next((waiter for waiter in self._waiting if self._free(waiter[0])), None)

    def _wake_next(self) -> None:
        """Wake the earliest waiter that may take a turn now."""
        if (waiter := self._next_in_line()) is not None:
            waiter[1].set()

    def take(self, visitor: Visitor, interrupted: Callable[[], bool], wait: float = TURN_WAIT_SECONDS) -> bool:
        """Take ``visitor``'s turn, waiting up to ``wait`` s or until ``interrupted()``; True if
        taken (then :meth:`give_back` it), False if the run goes on without one.

        First come, first served: a turn given back goes to the earliest waiter that may take
        it, never to a run that arrives meanwhile (thirty tabs behind one school address would
        otherwise leave an unlucky one waiting the whole TURN_WAIT_SECONDS)."""
        end = time.monotonic() + wait
        with self._lock:
            if self._free(visitor) and self._next_in_line() is None:
                self._hold(visitor)
                return True
            me = (visitor, threading.Event())
            self._waiting.append(me)
        while True:
            me[1].wait(max(0.0, min(_POLL_SECONDS, end - time.monotonic())))
            with self._lock:
                me[1].clear()
                mine = self._next_in_line() is me
                if mine or interrupted() or time.monotonic() >= end:
                    self._waiting.remove(me)
                    if mine:
                        self._hold(visitor)
                    self._wake_next()  # a turn this run does not take goes to the next in line
                    return mine

    def give_back(self, visitor: Visitor) -> None:
        with self._lock:
            for table, key in ((self._visitors, visitor), (self._addresses, visitor.address)):
                table[key] -= 1
                if not table[key]:
                    del table[key]
            self._wake_next()


_TURNS = Turns()
_held = threading.local()  # the visitor whose turn this thread holds, if any


def _interrupted() -> bool:
    from gradlab.ui.compat import run_will_be_interrupted

    return run_will_be_interrupted()


@contextmanager
def visitor_turn(visitor: Visitor | None = None, turns: Turns = _TURNS) -> Iterator[bool]:
    """Run the block in ``visitor``'s turn (default: :func:`current_visitor`); yields whether it
    holds one (False: none to take, or waited too long)."""
    visitor = current_visitor() if visitor is None else visitor
    held = visitor is not None and turns.take(visitor, _interrupted)
    _held.turn = (visitor, turns) if held else None
    try:
        yield held
    finally:
        if getattr(_held, "turn", None) is not None:
            _held.turn = None
            turns.give_back(visitor)


@contextmanager
def turn_given_back() -> Iterator[None]:
    """Give this thread's turn back for the block (a wait on a worker process), then take it again."""
    turn = getattr(_held, "turn", None)
    if turn is None:
        yield
        return
    visitor, turns = turn
    turns.give_back(visitor)
    _held.turn = None
    try:
        yield
    finally:
        if turns.take(visitor, _interrupted):
            _held.turn = turn
