"""gradlab.server.lanes: which call the worker pool runs next (bookkeeping only, no processes).

The pool's fairness promises, as states of the lanes: heavy sessions take turns in the
long lane and never hold more than one call each; the short lane stays free for a cheap
call however many heavy sessions wait; a short call that overruns leaves the short lane.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gradlab.server.lanes import KNOWN_LONG_KEYS, LONG, SHORT, Call, Lanes, call_key
from gradlab.server.visitors import Visitor

HOG, VICTIM = Visitor("127.0.0.2", "hog's browser"), Visitor("127.0.0.3", "victim's browser")


def _entered(lanes: Lanes, *calls: Call) -> list[Call]:
    for call in calls:
        lanes.enter(call)
    return list(calls)


def test_five_heavy_sessions_take_turns_and_a_cheap_call_is_admitted_at_once():
    lanes = Lanes(slots=2)
    heavy = _entered(lanes, *(Call(f"heavy {i}", lane=LONG) for i in range(5)))
    assert [lanes.admit(call) for call in heavy] == [True, True, False, False, False]
    assert sorted(lanes.sessions(LONG)) == ["heavy 0", "heavy 1"]
    assert list(lanes.waiting[LONG]) == heavy[2:]  # first come, first served
    victim = Call("victim")
    lanes.enter(victim)
    assert lanes.admit(victim) and lanes.sessions(SHORT) == ["victim"]
    lanes.leave(heavy[0])  # one heavy call is over: the next in line, not a later one, starts
    assert not lanes.admit(heavy[3]) and lanes.admit(heavy[2])
    assert sorted(lanes.sessions(LONG)) == ["heavy 1", "heavy 2"]


def test_a_session_s_new_call_ends_its_previous_one_running_or_waiting():
    lanes = Lanes(slots=1)
    first = Call("tab", lane=LONG)
    lanes.enter(first)
    assert lanes.admit(first)
    second = Call("tab", lane=LONG)
    lanes.enter(second)
    assert first.cancelled and not second.cancelled and lanes.by_session["tab"] is second
    assert not lanes.admit(second)  # the slot is free only once the first has left
    lanes.leave(first)  # the pool leaves an ended call: its slot goes to the newer one
    assert lanes.by_session["tab"] is second and lanes.admit(second)
    waiting = Call("tab", lane=LONG)  # a third, while the lane is held: the second is ended too
    lanes.enter(waiting)
    assert second.cancelled and lanes.by_session["tab"] is waiting


def test_a_call_without_a_session_ends_nobody_s():
    lanes = Lanes(slots=1)
    a, b = _entered(lanes, Call(None), Call(None))
    assert not a.cancelled and not b.cancelled and lanes.by_session == {}


def test_an_overrun_moves_on_when_the_long_lane_has_room_and_queues_behind_when_not():
    lanes = Lanes(slots=1)
    quick, slow = _entered(lanes, Call("a", key=b"a"), Call("b", key=b"b"))
    assert lanes.admit(quick)
    assert lanes.overran(quick)  # room in the long lane: it keeps running there
    assert lanes.sessions(LONG) == ["a"] and lanes.sessions(SHORT) == []
    assert lanes.admit(slow)  # the short slot it held is free again
    assert not lanes.overran(slow)  # the long lane is full: it must start again in its turn
    assert lanes.sessions(SHORT) == [] and list(lanes.waiting[LONG]) == [slow] and slow.lane == LONG
    waiting = Call("c", lane=LONG)
    lanes.enter(waiting)
    lanes.leave(quick)
    assert lanes.admit(slow) and not lanes.admit(waiting)  # it was first in line
    assert slow.attempts == 2


def test_an_overrun_does_not_jump_the_queue_of_a_full_long_lane():
    lanes = Lanes(slots=1)
    holder, queued, short = _entered(lanes, Call("h", lane=LONG), Call("q", lane=LONG), Call("s"))
    assert lanes.admit(holder) and not lanes.admit(queued) and lanes.admit(short)
    lanes.leave(holder)  # a free long slot, but q waits for it: s goes behind q
    assert not lanes.overran(short) and list(lanes.waiting[LONG]) == [queued, short]


def test_a_call_that_gave_up_its_turn_is_not_remembered_as_long():
    lanes = Lanes(slots=1)
    running, waiting = _entered(lanes, Call("a", key=b"a"), Call("b", key=b"b"))
    assert lanes.admit(running) and not lanes.admit(waiting)
    assert lanes.contended(SHORT) and not lanes.contended(LONG)
    assert lanes.overran(running, remember=False)  # its turn is over: on to the long lane
    assert lanes.admit(waiting) and not lanes.contended(SHORT)
    assert lanes.known_long == {}


def test_arguments_that_overran_start_in_the_long_lane_next_time():
    lanes = Lanes(slots=1)
    key = call_key(max, (400, 500), {})
    first = Call("tab 1", key=key)
    lanes.enter(first)
    assert lanes.admit(first) and lanes.overran(first)
    lanes.leave(first)
    reload = Call("tab 2", key=key)  # the same heavy view, reloaded: a new session
    lanes.enter(reload)
    assert reload.lane == LONG
    other = Call("tab 3", key=call_key(max, (400, 499), {}))
    lanes.enter(other)
    assert other.lane == SHORT


def test_the_memory_of_long_arguments_is_limited():
    lanes = Lanes(slots=1)
    for i in range(KNOWN_LONG_KEYS + 10):
        call = Call(i, key=i)
        lanes.enter(call)
        assert lanes.admit(call)
        lanes.overran(call)
        lanes.leave(call)
    assert len(lanes.known_long) == KNOWN_LONG_KEYS
    assert 0 not in lanes.known_long and KNOWN_LONG_KEYS + 9 in lanes.known_long


def test_a_waiting_call_that_leaves_lets_the_next_one_in():
    lanes = Lanes(slots=1)
    holder, gone, next_one = _entered(lanes, *(Call(s, lane=LONG) for s in "abc"))
    assert lanes.admit(holder)
    lanes.leave(gone)  # its tab closed while it waited
    lanes.leave(holder)
    assert lanes.admit(next_one)


def test_a_call_key_is_none_for_arguments_that_do_not_pickle():
    assert call_key(max, (lambda: 0,), {}) is None
    assert call_key(max, (1,), {"a": 2}) == call_key(max, (1,), {"a": 2}) != call_key(min, (1,), {"a": 2})


OPS = st.lists(st.tuples(st.sampled_from(["enter short", "enter long", "admit", "overran", "leave"]),
                         st.integers(0, 5)), max_size=80)


@settings(max_examples=150, deadline=None)
@given(OPS, st.integers(1, 3))
def test_no_lane_runs_more_than_its_slots_and_no_session_runs_twice(ops, slots):
    """Any sequence of calls from six sessions, as the pool drives it: a lane never runs more
    than ``slots`` calls; a session never has two calls that are not ended; only the first
    in a lane's queue starts."""
    lanes = Lanes(slots=slots)
    live: dict[int, Call] = {}  # session -> its newest call (not yet left)
    for op, session in ops:
        call = live.get(session)
        if op.startswith("enter"):
            new = Call(session, lane=LONG if op == "enter long" else SHORT)
            lanes.enter(new)
            if call is not None:
                assert call.cancelled
                lanes.leave(call)  # the pool ends the superseded call
            live[session] = new
        elif call is None:
            continue
        elif op == "admit":
            head = lanes.waiting[call.lane][0] if lanes.waiting[call.lane] else None
            was_running = call in lanes.running[call.lane]
            admitted = lanes.admit(call)
            if admitted and not was_running:
                assert head is call
        elif op == "overran" and call in lanes.running[SHORT]:
            lanes.overran(call)
        elif op == "leave":
            lanes.leave(call)
            del live[session]
        for lane in (SHORT, LONG):
            assert len(lanes.running[lane]) <= slots
        sessions = [c.session for lane in (SHORT, LONG) for c in (*lanes.running[lane], *lanes.waiting[lane])
                    if not c.cancelled]
        assert len(sessions) == len(set(sessions))


def test_heavy_starts_a_call_forecast_long_in_the_long_lane(monkeypatch):
    """gradlab.ui.worker_calls asks the pool for the long lane when the function's forecast from its
    arguments is over LONG_CALL_SECONDS: a 200,000-term bfloat16 sum (its loops: seconds), a full
    check of 65,536 elements (4e9 element evaluations); not the default views, nor a sweep
    (no forecast: the pool learns it by watching)."""
    from gradlab.check.lab.settings import CheckSettings
    from gradlab.step_sweep.engine import SweepSettings
    from gradlab.labs.summed import SummedLossSettings, view as summed
    from gradlab.labs.explorer import view as explorer
    from gradlab.labs.gradcheck import function_view as check
    from gradlab.ui import worker_calls

    asked = []
    monkeypatch.setattr(worker_calls, "run_limited", lambda fn, *args, long, **kw: asked.append(long))
    worker_calls.heavy(summed, SummedLossSettings(shape=(400, 500), dtype="bfloat16"))
    worker_calls.heavy(summed, SummedLossSettings())
    worker_calls.heavy(check, CheckSettings(shape=(256, 256), mode="full"), 1)
    worker_calls.heavy(check, CheckSettings(), 1)
    worker_calls.heavy(explorer, SweepSettings("x**2", 1.0))
    assert asked == [True, False, True, False, False]


def test_a_checks_forecast_counts_the_blocks_of_the_default_mode():
    """The default mode evaluates one direction per block of elements (up to
    LIMITS.directional_checks), not `samples` of them: its forecast lies between a 5-sample
    check's and a full check's, and grows with the elements up to the cap."""
    from gradlab.check.running.blocks import block_count
    from gradlab.check.lab.settings import CheckSettings
    from gradlab.labs.gradcheck import function_view as check

    def seconds(**options):
        return check.forecast_seconds(CheckSettings(**options))

    small = dict(shape=(4, 10), dtype="float64")  # 40 elements: 5 blocks of 8
    assert block_count(40) == 5
    assert seconds(mode="sampled", samples=5, **small) == seconds(mode="blocks", **small)
    big = dict(shape=(256, 256))
    assert seconds(mode="sampled", samples=5, **big) < seconds(mode="blocks", **big) < seconds(mode="full", **big)


# ---------------------------------------------------------------- visitors, not tabs


def _tabs(visitor: Visitor, n: int, lane: str = LONG, name: str = "tab") -> list[Call]:
    return [Call(f"{visitor.address} {name} {i}", lane=lane, visitor=visitor) for i in range(n)]


def test_ten_tabs_of_one_visitor_hold_one_slot_of_each_lane_and_another_visitor_starts_at_once():
    lanes = Lanes(slots=2)
    for lane in (LONG, SHORT):
        hog = _entered(lanes, *_tabs(HOG, 10, lane))
        assert [lanes.admit(call) for call in hog] == [True] + [False] * 9  # a free slot stays free
        victim = _entered(lanes, *_tabs(VICTIM, 1, lane))[0]
        assert lanes.admit(victim)  # arrived last, starts at once: the second slot was kept
        assert sorted(c.visitor.address for c in lanes.running[lane]) == ["127.0.0.2", "127.0.0.3"]


def test_turns_go_round_the_visitors_another_visitor_goes_ahead_of_a_visitor_s_second_to_tenth():
    lanes = Lanes(slots=1)
    hog = _entered(lanes, *_tabs(HOG, 10))
    assert lanes.admit(hog[0])
    victim = _entered(lanes, *_tabs(VICTIM, 2))
    lanes.leave(hog[0])  # the slot frees: the victim's call, not the hog's second tab
    assert lanes.next_call(LONG) is victim[0] and lanes.admit(victim[0])
    lanes.leave(victim[0])  # then the hog's (served longest ago), then the victim's again
    assert lanes.next_call(LONG) is hog[1] and lanes.admit(hog[1])
    lanes.leave(hog[1])
    assert lanes.next_call(LONG) is victim[1]


def test_one_address_with_a_new_browser_per_socket_never_holds_every_slot():
    lanes = Lanes(slots=3)
    script = _entered(lanes, *(Call(f"s{i}", lane=LONG, visitor=Visitor("127.0.0.2", f"cookie {i}"))
                               for i in range(6)))
    assert [lanes.admit(call) for call in script] == [True, True, False, False, False, False]
    victim = _entered(lanes, *_tabs(VICTIM, 1))[0]
    assert lanes.admit(victim)


def test_a_school_behind_one_address_shares_the_address_s_slots_in_arrival_order():
    lanes = Lanes(slots=3)
    students = _entered(lanes, *(Call(f"student {i}", lane=LONG, visitor=Visitor("198.51.100.7", f"b{i}"))
                                 for i in range(4)))
    assert [lanes.admit(call) for call in students] == [True, True, False, False]
    lanes.leave(students[0])
    assert not lanes.admit(students[3]) and lanes.admit(students[2])


def test_an_overrun_of_a_visitor_already_in_the_long_lane_waits_its_turn():
    lanes = Lanes(slots=2)
    long_tab, short_tab = _entered(lanes, Call("t1", lane=LONG, visitor=HOG), Call("t2", visitor=HOG))
    assert lanes.admit(long_tab) and lanes.admit(short_tab)
    assert not lanes.overran(short_tab)  # a long slot is free, but the hog holds one already
    other = _entered(lanes, *_tabs(VICTIM, 1))[0]
    assert lanes.admit(other)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.booleans()), min_size=1, max_size=25),
       st.integers(1, 3))
def test_no_visitor_ever_runs_two_calls_in_a_lane_nor_an_address_every_slot(events, slots):
    lanes = Lanes(slots=slots)
    calls: list[Call] = []
    for address, browser, leave in events:
        if leave and calls:
            lanes.leave(calls.pop(0))
        else:
            call = Call(None, lane=LONG, visitor=Visitor(f"127.0.0.{address + 2}", str(browser)))
            lanes.enter(call)
            calls.append(call)
        for call in calls:
            lanes.admit(call)
        running = list(lanes.running[LONG])
        assert len(running) <= slots
        assert len({c.visitor for c in running}) == len(running)
        by_address = [sum(c.visitor.address == a for c in running) for a in {c.visitor.address for c in running}]
        assert all(n <= max(1, slots - 1) for n in by_address)
        # work-conserving: a free slot is idle only when every waiting call is barred by its visitor or address
        if len(running) < slots:
            assert lanes.next_call(LONG) is None
