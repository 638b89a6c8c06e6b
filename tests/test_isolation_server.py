"""On a real ``streamlit run`` server: one session's heaviest request leaves another responsive.

``benchmarks/isolation_app.py`` runs the Explorer's work through
gradlab.ui.heavy as the pages do; the heaviest request found is ``x**x**x`` at
1e9 (a big-integer power that, in the session's own thread, held the
interpreter lock for 20 s and grew the server by 8 GB). Session B reruns a
trivial page while session A makes it. A second test: a new rerun by the same
session ends its previous heavy work instead of waiting for it.
Set GRADLAB_TEST_PORT to choose the port (else a free one).
"""

from __future__ import annotations

import os

from async_helpers import run_async
from benchmarks.bench_isolation import measure
from benchmarks.load_test import Server, free_port
from benchmarks.st_client import StreamlitSession
from gradlab.limits import LIMITS

ENV = {"PYTHONPATH": str(__import__("pathlib").Path(__file__).resolve().parents[1])}
SLACK = 4.0


def _server() -> Server:
    port = int(os.environ.get("GRADLAB_TEST_PORT", "0")) or free_port()
    return Server(port, app="benchmarks/isolation_app.py", extra_env=ENV)


async def _warm(base_url: str) -> None:
    async with StreamlitSession(base_url, run_timeout=90) as tab:
        run = await tab.open("", "heavy=1&mode=pool&expr=x**2&x=1.0")  # the workers are up
        assert run.ok and not run.error_alerts, run.error_alerts


def test_another_session_stays_responsive_during_the_heaviest_request():
    with _server() as server:
        run_async(_warm(server.base_url))
        outcome = run_async(measure(server.base_url, server.proc.pid, "x**x**x at 1e9", "pool", cap=60))
    print(outcome.line())
    assert outcome.heavy_status == "ok"
    assert "LimitError" in outcome.heavy_text and "LIMITS" in outcome.heavy_text, outcome.heavy_text
    assert outcome.heavy_seconds < LIMITS.evaluation_seconds + SLACK
    assert outcome.trivial_median < 0.5, outcome.line()


async def _rerun_during_heavy_work(base_url: str) -> tuple[float, float]:
    """A starts a sweep of several seconds, then reruns the trivial page: how long each took."""
    heavy = "heavy=1&mode=pool&formulas=1&x=1.0&expr=" + "**".join(["tan(x)"] * 8)
    async with StreamlitSession(base_url, run_timeout=60) as tab:
        alone = await tab.open("", heavy.replace("x=1.0", "x=1.1"))  # how long the heavy work takes alone
        assert alone.ok
        tab.run_timeout = 0.5
        await tab.rerun(query_string=heavy)  # under way when the next rerun arrives
        tab.run_timeout = 60
        trivial = await tab.rerun(query_string="")
        assert trivial.ok and not trivial.error_alerts, trivial.error_alerts
        return alone.seconds, trivial.seconds


def test_a_new_rerun_of_the_same_session_ends_its_previous_heavy_work():
    with _server() as server:
        run_async(_warm(server.base_url))
        alone, trivial = run_async(_rerun_during_heavy_work(server.base_url))
    print(f"heavy alone {alone:.2f} s; trivial rerun sent 0.5 s into it answered in {trivial:.2f} s")
    assert alone > 1.5  # the heavy work is long enough that waiting for it would show
    assert trivial < min(1.0, alone - 0.5), (alone, trivial)
