"""A visitor with many tabs against another visitor, per page: ratios to the victim alone, same run.

Starts ``streamlit run serve.py`` (the public entry) on 127.0.0.1. For each page, a
victim from 127.0.2.M (an address of its own each measurement) opens that page's ordinary view ``--runs`` times (a new tab each
time, a cold variant: another seed or x, so no cache answers it), first alone, then
while N hog tabs from 127.0.1.P (one client, an address of its own each page, as one browser's tabs or one script's
sockets are) load the page's heaviest request over and over (a cold variant each
time, the tab reloaded once it answered or after ``--reload-every`` s). Prints, per
page and N, the victim's p50 and p95 and their ratios to alone, and how many of its
requests were refused or failed. Then the burst: ``--burst`` websockets from
one address each loading the home page once, all at once, while the victim reruns its
home tab: the victim's p95, and how many of the burst's sockets were refused.

    python -m benchmarks.bench_visitors                     # every page, N = 3 5 10, burst 300
    python -m benchmarks.bench_visitors --pages backward grid --hogs 10 --runs 8
    python -m benchmarks.bench_visitors --balancer           # the same through deploy/haproxy.cfg

Targets (issue 34): p95 <= 3x alone on every page and N, no refusal of the victim;
the burst leaves the victim's trivial rerun p95 < 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import quote_plus

from harness.heavy_requests import CUSTOM, ROUNDOFF_A, ROUNDOFF_B, long_expression
from harness.runs import ProtocolError
from harness.server import Server, free_port
from harness.session import StreamlitSession
from harness.stats import pct

# Each page's hog and each measurement's victim get addresses of their own (127.0.1.P, 127.0.2.M):
# serve.py's per-address door (gradlab/server/edge.py) would otherwise carry one page's hog, and the
# victim's dozen new tabs a measurement, into the next page's budget of new sessions.
HOG, VICTIM = "127.0.1.1", "127.0.2.1"
LAYERS = quote_plus("a model, layer by layer")


def _vector(k: int, n: int = 32) -> str:
    return quote_plus(", ".join(f"{1 + (i * 7 + k) % 13}.{k % 10}" for i in range(n)))


#: page -> (the hog's heaviest request, the victim's ordinary view), each the k-th cold variant
PAGES: dict[str, tuple[Callable[[int], str], Callable[[int], str]]] = {
    "home": (lambda k: "", lambda k: ""),  # nothing to vary: both cached after the first
    "explorer": (lambda k: f"fn={CUSTOM}&expr={quote_plus(long_expression(k))}&x={1.1 + 0.01 * k!r}",
                 lambda k: f"fn={CUSTOM}&expr=sin%28x%29&x={0.5 + 1e-6 * k!r}"),
    "gradcheck": (lambda k: f"check={LAYERS}&stack={quote_plus('linear:512, tanh, linear:512')}&input=4x8&seed={k}",
                  lambda k: f"seed={k}"),
    "roundoff": (lambda k: f"a={quote_plus(ROUNDOFF_A)}&b={quote_plus(ROUNDOFF_B)}&dtype=float64&dist=normal"
                           f"&low=-3.0&high=3.0&n=100000&seed={k}",
                 lambda k: f"seed={k}"),
    "network": (lambda k: f"hidden={quote_plus(', '.join(['512'] * 6))}&inputs=512&seed={k}",
                lambda k: f"seed={k}"),
    "backward": (lambda k: f"a={_vector(k)}&b={_vector(k + 1)}&c={_vector(k + 2)}&v={_vector(k + 3)}",
                 lambda k: f"v={quote_plus(f'0.1, 1, {k + 1}')}"),
    "grid": (lambda k: f"fn={CUSTOM}&expr={quote_plus(long_expression(k))}&x={1.1 + 0.01 * k!r}",
             lambda k: f"x={1.0 + 1e-3 * k!r}"),
    "summed": (lambda k: f"shape={400 - k % 50}x{500 - k % 37}&dtype=bfloat16&reduction=mean",
               lambda k: f"shape=140x{120 - k % 40}"),
}


def _path(page: str) -> str:
    return "" if page == "home" else page


@dataclass
class Victim:
    """The victim's latencies (s) of answered requests, and how many were refused or failed."""

    seconds: list[float] = field(default_factory=list)
    refused: int = 0
    said: list[str] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")

    @property
    def p95(self) -> float:
        return pct(self.seconds, 95)


async def _hog_tab(url: str, page: str, query: Callable[[int], str], index: int, stop: asyncio.Event,
                   reload_every: float, counts: dict, first_k: int, hog: str = HOG) -> None:
    k = first_k + 10_000 * (index + 1)  # no other tab's variant, nor any measurement's before
    while not stop.is_set():
        tab = StreamlitSession(url, run_timeout=reload_every, source=hog)
        try:
            await tab.connect()
            run = await tab.open(_path(page), query(k))
            counts["answered" if run.status != "timeout" else "reloaded"] += 1
        except ProtocolError:
            counts["refused"] += 1
            await asyncio.sleep(0.5)
        finally:
            await tab.close()
        k += 1


async def _victim_runs(url: str, page: str, query: Callable[[int], str], runs: int, first_k: int,
                       source: str = VICTIM) -> Victim:
    victim = Victim()
    for k in range(first_k, first_k + runs):
        tab = StreamlitSession(url, run_timeout=120, source=source)
        started = time.perf_counter()
        try:
            await tab.connect()
            run = await tab.open(_path(page), query(k))
        except ProtocolError as exc:
            victim.refused += 1
            victim.said.append(str(exc)[:80])
            continue
        finally:
            await tab.close()
        if run.ok and not run.exceptions and not run.error_alerts:
            victim.seconds.append(time.perf_counter() - started)
        else:
            victim.refused += 1
            victim.said.append(run.status + (": " + str(run.error_alerts[0])[:80] if run.error_alerts else ""))
        await asyncio.sleep(0.2)
    return victim


_measurements = 0


async def measure(url: str, page: str, hogs: int, runs: int, reload_every: float, first_k: int) -> tuple[Victim, dict]:
    global _measurements
    _measurements += 1
    heavy, ordinary = PAGES[page]
    hog = f"127.0.1.{list(PAGES).index(page) + 1}"
    victim_address = f"127.0.2.{_measurements % 250 + 1}"
    stop, counts = asyncio.Event(), {"answered": 0, "reloaded": 0, "refused": 0}
    tasks = [asyncio.create_task(_hog_tab(url, page, heavy, i, stop, reload_every, counts, first_k, hog))
             for i in range(hogs)]
    if hogs:
        await asyncio.sleep(2.0)  # every hog tab's first request is under way
    try:
        victim = await _victim_runs(url, page, ordinary, runs, first_k, victim_address)
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    return victim, counts


BURSTER = "127.0.3.1"  # the burst's own address: no page's hog has spent its budget of new sessions


async def burst(url: str, sockets: int, seconds: float = 20.0) -> tuple[Victim, int, int]:
    """``sockets`` tabs from the hog's address each loading home once, at once; the victim's home
    tab reruns meanwhile. Returns the victim, and how many of the burst loaded and were refused."""
    done = {"loaded": 0, "refused": 0}

    async def one() -> None:
        tab = StreamlitSession(url, run_timeout=seconds, source=BURSTER)
        try:
            await tab.connect()
            run = await tab.open("")
            done["loaded" if run.ok else "refused"] += 1
        except ProtocolError:
            done["refused"] += 1
        finally:
            await tab.close()

    victim = Victim()
    async with StreamlitSession(url, run_timeout=60, source=VICTIM) as home:
        await home.open("")
        flood = [asyncio.create_task(one()) for _ in range(sockets)]
        end = time.perf_counter() + seconds
        # the victim reruns until the burst is over, and at least 20 times (a p95 of fewer is a max)
        while time.perf_counter() < end and (not all(task.done() for task in flood) or len(victim.seconds) < 20):
            run = await home.rerun()
            (victim.seconds.append(run.seconds) if run.ok else victim.said.append(run.status))
            await asyncio.sleep(0.1)
        await asyncio.gather(*flood, return_exceptions=True)
    return victim, done["loaded"], done["refused"]


def _row(page: str, hogs: int, victim: Victim, alone: Victim, counts: dict) -> str:
    return (f"{page:10} {hogs:>3} hog tabs | victim p50 {victim.p50:6.3f} s ({victim.p50 / alone.p50:5.2f}x) "
            f"p95 {victim.p95:6.3f} s ({victim.p95 / alone.p95:5.2f}x) refused/failed {victim.refused} "
            f"| hogs: {counts['answered']} answered, {counts['reloaded']} reloaded, {counts['refused']} refused"
            + (f" | victim told: {victim.said[0]}" if victim.said else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=list(PAGES), metavar="PAGE")
    parser.add_argument("--hogs", nargs="+", type=int, default=[3, 5, 10])
    parser.add_argument("--runs", type=int, default=10, help="victim requests per measurement")
    parser.add_argument("--reload-every", type=float, default=15.0)
    parser.add_argument("--burst", type=int, default=300, help="sockets in the burst (0: none)")
    parser.add_argument("--entry", default="serve.py")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    port = args.port or free_port()
    print(f"streamlit run {args.entry}; hogs from {HOG}, the victim from {VICTIM}; load {os.getloadavg()}")
    worst = 0.0
    with Server(port, app=args.entry) as server:
        for page in args.pages:
            asyncio.run(_victim_runs(server.base_url, page, PAGES[page][1], 3, 0))  # the page's code warm
            # alone before and after the hogs, pooled: the machine's own load drifts over a page's rounds
            alone, _ = asyncio.run(measure(server.base_url, page, 0, args.runs, args.reload_every, 100))
            rounds = []
            for n, hogs in enumerate(args.hogs, 1):
                rounds.append((hogs, *asyncio.run(measure(server.base_url, page, hogs, args.runs, args.reload_every,
                                                          100 + 1_000_000 * n))))
            after, _ = asyncio.run(measure(server.base_url, page, 0, args.runs, args.reload_every, 500))
            alone = Victim(alone.seconds + after.seconds, alone.refused + after.refused, alone.said + after.said)
            print(f"{page:10}   alone        | victim p50 {alone.p50:6.3f} s p95 {alone.p95:6.3f} s "
                  f"refused/failed {alone.refused} (before and after the hogs)", flush=True)
            for hogs, victim, counts in rounds:
                worst = max(worst, victim.p95 / alone.p95)
                print(_row(page, hogs, victim, alone, counts), flush=True)
        if args.burst:
            victim, loaded, refused = asyncio.run(burst(server.base_url, args.burst))
            print(f"burst of {args.burst} sockets from {BURSTER}: {loaded} loaded, {refused} refused | victim's home "
                  f"rerun p50 {victim.p50:.3f} s, p95 {victim.p95:.3f} s over {len(victim.seconds)} reruns "
                  f"({len(victim.said)} failed)", flush=True)
    print(f"worst victim p95 ratio: {worst:.2f}x (target <= 3x); load {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
