"""Which call the worker pool runs next: a short lane kept for quick calls, a long lane taken in turn.

:class:`gradlab.server.pool.WorkerPool` runs each call in one of two lanes of
``slots`` calls each (twice ``LIMITS.pool_workers`` worker processes in all):

* **short**: every call starts here, unless it is known to be long. A call
  that has computed ``LONG_CALL_SECONDS`` leaves it (:meth:`Lanes.overran`),
  and so does one that has computed ``SHORT_TURN_SECONDS`` while another call
  waits for this lane (:meth:`Lanes.contended`), so it is never held by long work: a
  visitor's cheap sweep finds a worker within a fraction of a second however
  many tabs ask for heavy work.
* **long**: calls forecast long by their caller (``long=True``: a bfloat16 sum
  of 200,000 terms, a full check), calls whose arguments overran before
  (:attr:`Lanes.known_long`: a reload of the same heavy URL), and short calls
  that overran. When the long lane is full, an overrunning call is ended and
  queued behind the calls already waiting (it starts again from the
  beginning there); the queue is first come, first served.

Each session has at most one call, waiting or running: a session's new call
ends its previous one (``cancelled`` set; the pool ends its worker). A *visitor*
(:class:`gradlab.server.visitors.Visitor`: a client address and its browser) may
have many tabs, each its own session, so the lanes count visitors, not sessions:

* a visitor runs at most one call in each lane (its other tabs' calls wait), and
  an address at most ``slots - 1`` (at least one): one client, or one script with a
  new cookie per socket, never holds every worker of a lane;
* a freed slot goes to the waiting call whose address runs fewest calls in that
  lane, then whose address, then visitor, was served longest ago (turns go round),
  first come first served among equals: another visitor's request goes ahead of a
  visitor's second to tenth.

A call without a visitor (the CLI, a notebook) counts as a visitor of its own.

Plain bookkeeping, no processes and no lock: the pool calls it under its own.

>>> lanes = Lanes(slots=1)
>>> first, second = Call("tab 1", lane=LONG), Call("tab 2", lane=LONG)
>>> lanes.enter(first); lanes.enter(second)
>>> lanes.admit(first), lanes.admit(second)  # one long slot: the second waits its turn
(True, False)
>>> quick = Call("tab 3")
>>> lanes.enter(quick); lanes.admit(quick)  # the short lane is free for it
True
>>> again = Call("tab 1", lane=LONG)
>>> lanes.enter(again); first.cancelled  # tab 1's new call ends its previous one
True
>>> from gradlab.server.visitors import Visitor
>>> fair = Lanes(slots=2)
>>> hog, other = Visitor("127.0.0.2"), Visitor("127.0.0.3")
>>> tabs = [Call(f"hog tab {i}", lane=LONG, visitor=hog) for i in range(3)]
>>> victim = Call("victim tab", lane=LONG, visitor=other)
>>> for call in [*tabs, victim]: fair.enter(call)
>>> [fair.admit(call) for call in [*tabs, victim]]  # the hog's second and third tabs wait
[True, False, False, True]
"""

from __future__ import annotations

import hashlib
import pickle
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Callable, Hashable

__all__ = ["Lanes", "Call", "SHORT", "LONG", "LONG_CALL_SECONDS", "SHORT_TURN_SECONDS", "busy_message", "call_key"]

SHORT, LONG = "short", "long"
#: A call whose worker has computed this long (CPU seconds; or that has taken WALL_CLOCK_FACTOR
#: times as long on the wall clock) is *long*: it leaves the short lane for the long one, where
#: its worker drops to LONG_CALL_NICENESS, so a short call starts at once on a worker of its
#: own. Without the lanes (load test, every page, 2 cores), with both workers in 5-30 s full
#: checks, round-off reruns of 0.4 s of work wait 2-7 s, and five tabs of heavy work hold
#: every worker so that a cheap sweep waits 8 s.
LONG_CALL_SECONDS = 1.0
#: A short call that has computed this long (CPU seconds) leaves the short lane as soon as
#: another call waits for it: a visitor's cheap call (tens of ms of computing) waits about this
#: long at most behind calls not yet known to be long (five tabs of cold heavy expressions);
#: CPU time, so that a cheap call slowed by a busy machine keeps its place.
SHORT_TURN_SECONDS = 0.25
#: Argument keys of calls that overran, remembered (the oldest forgotten first) so a reload of
#: the same heavy view goes straight to the long lane instead of holding a short slot first.
KNOWN_LONG_KEYS = 256
#: Addresses and visitors whose last start is remembered for taking turns (the oldest forgotten
#: first: a forgotten one only counts as served long ago).
KNOWN_VISITORS = 4096


@dataclass(eq=False)
class Call:
    """One call to the pool: its session (None: no session), lane and whether it was ended."""

    session: Hashable | None
    lane: str = SHORT
    key: Hashable | None = None  # the call's function and arguments, hashed (None: not known)
    cancelled: bool = False  # a newer call of the same session ended it
    attempts: int = 0  # starts on a worker: 2 when it overran the short lane and started again
    visitor: Hashable | None = None  # a Visitor (an ``address`` and a browser); None: its own visitor
    seq: int = 0  # its place in arrival order (set by Lanes.enter)

    @property
    def address(self) -> Hashable:
        """The client address the lanes count (the call itself when it has no visitor)."""
        return getattr(self.visitor, "address", self) if self.visitor is not None else self

    @property
    def who(self) -> Hashable:
        """The visitor the lanes count (the call itself when it has none)."""
        return self if self.visitor is None else self.visitor


@dataclass
class Lanes:
    """The pool's two lanes of ``slots`` calls each (see the module docstring)."""

    slots: int
    running: dict[str, set] = field(default_factory=lambda: {SHORT: set(), LONG: set()})
    waiting: dict[str, deque] = field(default_factory=lambda: {SHORT: deque(), LONG: deque()})
    by_session: dict = field(default_factory=dict)
    known_long: OrderedDict = field(default_factory=OrderedDict)
    arrivals: int = 0
    #: When each address and visitor last started a call (a count of starts; the oldest forgotten
    #: first): among equals a slot goes to whoever was served longest ago, so turns go round.
    served: OrderedDict = field(default_factory=OrderedDict)
    starts: int = 0

    @property
    def address_slots(self) -> int:
        """The most calls one client address runs at once in a lane: all but one slot."""
        return max(1, self.slots - 1)

    def enter(self, call: Call) -> None:
        """Queue ``call`` in its lane; the same session's previous call is ended."""
        if call.session is not None:
            previous = self.by_session.get(call.session)
            if previous is not None:
                previous.cancelled = True
            self.by_session[call.session] = call
        if call.key is not None and call.key in self.known_long:
            call.lane = LONG
        self.arrivals += 1
        call.seq = self.arrivals
        self.waiting[call.lane].append(call)

    def admit(self, call: Call) -> bool:
        """True when ``call`` may start now (it then holds a slot): the lane has a free slot
        and ``call`` is its next (:meth:`next_call`)."""
        if call in self.running[call.lane]:
            return True
        if len(self.running[call.lane]) >= self.slots or self.next_call(call.lane) is not call:
            return False
        self.waiting[call.lane].remove(call)
        self.running[call.lane].add(call)
        call.attempts += 1
        if call.visitor is not None:
            self.starts += 1
            for who in (("address", call.address), ("visitor", call.who)):
                self.served[who] = self.starts
                self.served.move_to_end(who)
            while len(self.served) > KNOWN_VISITORS:
                self.served.popitem(last=False)
        return True

    def next_call(self, lane: str) -> Call | None:
        """The waiting call a free slot of ``lane`` goes to: among those whose visitor runs
        nothing in the lane and whose address is under :attr:`address_slots`, the one whose
        address runs fewest, then whose address, then visitor, was served longest ago, then the
        earliest (None: nobody may start). Turns go round the addresses, then their visitors."""
        best, best_rank = None, None
        for waiting in self.waiting[lane]:
            on_address = self._fits(waiting, lane)
            if on_address is None:
                continue
            rank = (on_address, self.served.get(("address", waiting.address), 0),
                    self.served.get(("visitor", waiting.who), 0), waiting.seq)
            if best_rank is None or rank < best_rank:
                best, best_rank = waiting, rank
        return best

    def _fits(self, call: Call, lane: str) -> int | None:
        """How many calls of ``call``'s address run in ``lane``, or None when ``call`` may not join
        them: its visitor runs one there already, or its address runs :attr:`address_slots`."""
        others = [c for c in self.running[lane] if c is not call and c.address == call.address]
        if any(c.who == call.who for c in others) or len(others) >= self.address_slots:
            return None
        return len(others)

    def shares_address(self, call: Call) -> bool:
        """Whether another call of ``call``'s client address runs now, in either lane (the pool
        then runs ``call`` at the long lane's priority: one client's second call never takes a
        core from another client's first)."""
        return call.visitor is not None and any(other is not call and other.address == call.address
                                                for lane in (SHORT, LONG) for other in self.running[lane])

    def contended(self, lane: str) -> bool:
        """Whether a call waits for a slot of ``lane``."""
        return bool(self.waiting[lane])

    def overran(self, call: Call, remember: bool = True) -> bool:
        """A short call still running at the long-call mark (or at its turn's end, while another
        waits for its slot) moves to the long lane: True when it keeps running there (a slot was
        free and nobody waited for one), False when it must be ended and start again from the
        long lane's queue, behind those waiting. ``remember``: its arguments start in the long
        lane next time (a call that ran long, not one that only gave up its turn)."""
        if remember and call.key is not None:
            self.known_long[call.key] = True
            self.known_long.move_to_end(call.key)
            while len(self.known_long) > KNOWN_LONG_KEYS:
                self.known_long.popitem(last=False)
        self.running[call.lane].discard(call)
        call.lane = LONG
        if not self.waiting[LONG] and len(self.running[LONG]) < self.slots and self._fits(call, LONG) is not None:
            self.running[LONG].add(call)
            return True
        self.arrivals += 1
        call.seq = self.arrivals  # behind the calls already waiting, as a new arrival
        self.waiting[LONG].append(call)
        return False

    def leave(self, call: Call) -> None:
        """``call`` is over (answered, failed or ended): its slot or place in a queue is freed."""
        for lane in (SHORT, LONG):
            self.running[lane].discard(call)
            if call in self.waiting[lane]:
                self.waiting[lane].remove(call)
        if call.session is not None and self.by_session.get(call.session) is call:
            del self.by_session[call.session]

    def sessions(self, lane: str) -> list:
        """The sessions with a call running in ``lane`` (``WorkerPool.snapshot``)."""
        return [call.session for call in self.running[lane]]


def busy_message(what: str, seconds: float, limit_name: str, workers: int, lane: str = LONG) -> str:
    """The sentence for a call that waited its whole time limit for a turn in its lane.

    >>> print(busy_message("the check", 30, "LIMITS.request_seconds", 2))  # doctest: +NORMALIZE_WHITESPACE
    Computing the check waited 30 s (LIMITS.request_seconds) for one of the 2 worker processes
    that run long requests: other visitors' requests held them, each in its turn, so that
    one request cannot slow the server for everyone. Try again in a minute, or ask for less.
    """
    return (f"Computing {what} waited {seconds:g} s ({limit_name}) for one of the {workers} worker "
            f"processes that run {lane} requests: other visitors' requests held them, each in its "
            f"turn, so that one request cannot slow the server for everyone. Try again in a minute, "
            f"or ask for less.")


def call_key(fn: Callable, args: tuple, kwargs: dict) -> bytes | None:
    """A call's function and arguments, hashed: the same heavy view asked again has the same key.

    >>> call_key(max, (1, 2), {}) == call_key(max, (1, 2), {}) != call_key(max, (1, 3), {})
    True
    """
    try:
        return hashlib.blake2b(pickle.dumps((fn, args, sorted(kwargs.items()))), digest_size=16).digest()
    except Exception:  # noqa: BLE001 - not picklable: the send says so; no key, no memory of it
        return None
