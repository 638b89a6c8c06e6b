"""A visitor is a client, not a tab: gradlab.server.visitors (who asks) and gradlab.ui.visitor_turns
(script runs in turns per visitor). Bookkeeping and threads only; the end-to-end fairness from
distinct loopback addresses is tests/test_visitor_fairness.py."""

from __future__ import annotations

import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from gradlab.server.visitors import Visitor, browser_token, client_address, parse_networks, visitor_from
from gradlab.ui.visitor_turns import ADDRESS_RUNS, Turns, turn_given_back, visitor_turn

BALANCER = parse_networks("127.0.0.1, 10.0.0.0/8")


def _masked(token: bytes, mask: bytes) -> str:
    """A ``_streamlit_xsrf`` cookie as Streamlit writes it (token XOR repeated mask, hex)."""
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(token))
    return f"2|{mask.hex()}|{masked.hex()}|1700000000"


def test_forwarded_for_is_believed_only_from_a_trusted_balancer():
    assert client_address("127.0.0.3", "6.6.6.6", trusted=BALANCER) == "127.0.0.3"  # a client wrote it
    assert client_address("127.0.0.1", "6.6.6.6, 127.0.0.2", trusted=BALANCER) == "127.0.0.2"
    # two balancers: the client is the first untrusted hop from the right
    assert client_address("10.0.0.4", "203.0.113.9, 10.0.0.7", trusted=BALANCER) == "203.0.113.9"
    assert client_address("127.0.0.1", None, trusted=BALANCER) == "127.0.0.1"
    assert client_address("127.0.0.1", "not an address", trusted=BALANCER) == "127.0.0.1"
    assert client_address(None, "6.6.6.6", trusted=()) == "127.0.0.1"
    assert client_address("::1", "2001:db8::1", trusted=parse_networks("::1")) == "2001:db8::1"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.sampled_from(["127.0.0.2", "203.0.113.5", "::1"]))
def test_any_header_text_leaves_an_untrusted_peer_as_the_client(header, peer):
    assert client_address(peer, header, trusted=()) == peer


def test_every_tab_of_a_browser_is_one_visitor_though_its_cookie_is_masked_anew():
    token, other = bytes(range(16)), bytes(range(1, 17))
    a, b = _masked(token, b"\x01\x02\x03\x04"), _masked(token, b"\xff\x00\x10\x20")
    assert a != b and browser_token(a) == browser_token(b) != browser_token(_masked(other, b"\x01\x02\x03\x04"))
    assert browser_token(None) == browser_token("") == ""
    assert browser_token("garbage|x") != ""  # unreadable: hashed whole, still one id per value
    headers = {"X-Forwarded-For": "6.6.6.6"}
    assert visitor_from("127.0.0.2", headers, {"_streamlit_xsrf": a}) == Visitor("127.0.0.2", browser_token(b))


def test_a_visitor_runs_one_script_at_a_time_and_an_address_at_most_address_runs():
    turns = Turns()
    never = lambda: False  # noqa: E731
    one = Visitor("127.0.0.2", "a")
    assert turns.take(one, never) and not turns.take(one, never, wait=0.05)  # its second tab waits
    others = [Visitor("127.0.0.2", f"b{i}") for i in range(ADDRESS_RUNS)]
    taken = [turns.take(v, never, wait=0.05) for v in others]
    assert taken == [True] * (ADDRESS_RUNS - 1) + [False]  # the address is full
    assert turns.take(Visitor("127.0.0.3"), never, wait=0.0)  # another address never waits for it
    turns.give_back(one)
    assert turns.take(others[-1], never, wait=0.05)


def test_a_waiting_run_starts_when_the_turn_is_given_back_and_gives_up_when_interrupted():
    turns, hog = Turns(), Visitor("127.0.0.2")
    assert turns.take(hog, lambda: False)
    started = threading.Event()

    def second_tab():
        if turns.take(hog, lambda: False, wait=30):
            started.set()

    thread = threading.Thread(target=second_tab)
    thread.start()
    assert not started.wait(0.2)  # it waits while the first tab's run holds the turn
    turns.give_back(hog)
    thread.join(30)
    assert started.is_set()
    assert not turns.take(hog, lambda: True, wait=30)  # a rerun of its own session: it goes on at once


def test_a_turn_given_back_goes_to_the_earliest_waiter_not_to_a_run_arriving_meanwhile():
    """Thirty tabs behind one address: a run that arrives while others wait queues behind them
    (else, turn after turn, an unlucky waiter is overtaken until it gives up after 10 s)."""
    turns, never = Turns(address_runs=1), (lambda: False)
    first, waiter, late = (Visitor("127.0.0.2", name) for name in ("first", "waiter", "late"))
    assert turns.take(first, never)
    got = threading.Event()
    thread = threading.Thread(target=lambda: turns.take(waiter, never, wait=30) and got.set())
    thread.start()
    deadline = time.monotonic() + 30
    while not turns._waiting and time.monotonic() < deadline:  # the waiter is in line
        time.sleep(0.01)
    turns.give_back(first)
    assert not turns.take(late, never, wait=0.0)  # the turn is the waiter's, though it may not have woken yet
    thread.join(30)
    assert got.is_set()
    turns.give_back(waiter)
    assert turns.take(late, never, wait=0.0)  # nobody waits now: it takes the turn at once


def test_a_run_gives_its_turn_back_while_it_waits_for_a_worker_and_takes_it_again():
    turns, hog = Turns(), Visitor("127.0.0.2")
    with visitor_turn(hog, turns) as held:
        assert held and not turns.take(hog, lambda: False, wait=0.0)
        with turn_given_back():
            assert turns.take(hog, lambda: False, wait=0.0)  # the other tab runs meanwhile ...
            turns.give_back(hog)
        assert not turns.take(hog, lambda: False, wait=0.0)  # ... and the turn is this run's again
    assert turns.take(hog, lambda: False, wait=0.0)  # given back at the end


def test_a_run_that_raises_gives_its_turn_back():
    turns, hog = Turns(), Visitor("127.0.0.2")
    try:
        with visitor_turn(hog, turns):
            raise RuntimeError("st.rerun() and st.stop() leave by an exception")
    except RuntimeError:
        pass
    assert turns.take(hog, lambda: False, wait=0.0)
