"""On a real ``streamlit run serve.py``: one visitor's many tabs never hold the long workers
against another visitor, tested from distinct loopback addresses, directly and through HAProxy.

Eight hog tabs from 127.0.0.2 (one client) each ask for a long bfloat16 summed loss
(forecast long: the pool's long lane, 2 slots on every machine here), all at once;
then a victim from 127.0.0.3 asks for a shorter one. What the machine's speed cannot
change is the order: a visitor runs at most one long call, so the victim's call starts
on the slot the hog may not take and is answered while at most the hog's one running
call (and perhaps the next) finishes. Before visitors were counted, the hog's tabs took
both slots and the victim queued behind six of their calls (first come, first served).
Through HAProxy the replica sees HAProxy's address as the peer; with
GRADLAB_TRUSTED_PROXIES naming it, the client's address comes from ``X-Forwarded-For``
(without it both clients would be one, and the victim would wait behind the hog).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from async_helpers import run_async
from deploy.run_local import Balancer
from harness.server import Server, free_port
from harness.session import StreamlitSession

pytestmark = [pytest.mark.server, pytest.mark.slow]

HOG, VICTIM = "127.0.0.2", "127.0.0.3"
HOG_TABS = 8
# request_seconds: a hog tab's call waits for its turn rather than giving up at 10 s, so a victim
# queued behind the hog's tabs would be seen behind all of them
ENV = {"PYTHONPATH": str(Path(__file__).resolve().parents[1]),
       "GRADLAB_LIMITS": "pool_workers=2, request_seconds=300",
       "GRADLAB_TRUSTED_PROXIES": "127.0.0.1"}


def _hog_query(k: int) -> str:  # ~120,000 bfloat16 terms: seconds of one core each
    return f"shape={300 - k}x{400 - k}&dtype=bfloat16&reduction=mean"


VICTIM_QUERY = "shape=250x241&dtype=bfloat16&reduction=mean"  # 60,250 terms: forecast long, a third of a hog's


async def _hogs_then_victim(url: str) -> tuple[int, int, list[str]]:
    """(hog calls answered before the victim's, hog calls answered in all, the victim's errors)."""
    answered: list[str] = []

    async def hog(k: int) -> None:
        async with StreamlitSession(url, run_timeout=600, source=HOG) as tab:
            run = await tab.open("summed", _hog_query(k))
            answered.append("hog" if run.ok and not run.error_alerts else f"hog failed: {run.status} {[str(a)[:300] for a in run.error_alerts]}")

    tabs = [asyncio.create_task(hog(k)) for k in range(HOG_TABS)]
    await asyncio.sleep(3.0)  # ordering only: every hog tab has asked before the victim does
    async with StreamlitSession(url, run_timeout=600, source=VICTIM) as tab:
        run = await tab.open("summed", VICTIM_QUERY)
    before = sum(said == "hog" for said in answered)
    await asyncio.gather(*tabs)
    errors = [str(alert) for alert in run.error_alerts] + ([] if run.ok else [run.status])
    return before, sum(said == "hog" for said in answered), errors, answered


def _check(before: int, total: int, errors: list[str], answered: list[str]) -> None:
    assert errors == [], errors  # never refused ("waited ... for one of the 2 worker processes")
    assert total == HOG_TABS, answered  # the hog is served too, one call at a time
    assert before <= 2, f"{before} of the hog's calls were answered before the victim's: it queued behind them"


def test_ten_tabs_of_one_address_leave_a_long_worker_to_another_address():
    with Server(free_port(), app="serve.py", extra_env=ENV) as server:
        _check(*run_async(_hogs_then_victim(server.base_url)))


def test_through_haproxy_the_client_address_comes_from_the_trusted_balancer():
    with Server(free_port(), app="serve.py", extra_env=ENV) as server:
        with Balancer(free_port(), [server.port]) as lb:
            _check(*run_async(_hogs_then_victim(lb.url)))
