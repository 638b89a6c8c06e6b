"""Server CPU of one rerun that changes nothing, per page view, against the floor app's, same run.

A class's server CPU per rerun (``load_test.py --against-floor``) mixes two costs: reruns whose
results come from the caches (most of a class's clicks once the views are warm) and reruns that
compute something new. This measures the first alone, view by view: one tab opens each of a
page's preset links (and the bare page), then reruns it ``--reruns`` times with every widget as it
is, while the server's own CPU time (``/proc``) is read around the reruns. The floor app
(``benchmarks/floor_app.py``: one slider, one chart) is measured the same way in the same run, so
the ratios hold on a busy machine. Nothing is judged: it says where a page's fixed cost is.

    python -m benchmarks.rerun_cost --page roundoff --page gradcheck --reruns 30

``--against DIR`` compares two trees instead (``DIR``: an earlier tree, e.g. a ``git archive`` of
the commit before a change): a server of each is up at once and the rounds alternate between them,
so both see the same load from other jobs; per page, the median per rerun of each and their ratio.

    python -m benchmarks.rerun_cost --against /tmp/before --page roundoff --page backward --links 3 --rounds 8
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from benchmarks.class_links import page_links
from harness.processes import cpu_seconds
from harness.server import Server, free_port
from harness.session import StreamlitSession

FLOOR_APP = "benchmarks/floor_app.py"


async def view_cost(base_url: str, pid: int, page: str, query: str, reruns: int, rounds: int) -> float:
    """Median over ``rounds`` of the server's CPU seconds per rerun of one view (caches warm)."""
    async with StreamlitSession(base_url) as tab:
        await tab.open(page, query)
        await tab.rerun()  # the second run: what a click that changes nothing costs from now on
        per_round = []
        for _ in range(rounds):
            before = cpu_seconds(pid)
            for _ in range(reruns):
                result = await tab.rerun()
                if not result.ok:
                    raise RuntimeError(f"{page}?{query}: {result.status} {result.exceptions[:1]}")
            per_round.append((cpu_seconds(pid) - before) / reruns)
        return statistics.median(per_round)


async def main_async(args: argparse.Namespace) -> None:
    with Server(free_port(), app=FLOOR_APP) as floor:
        floor_s = await view_cost(floor.base_url, floor.pid, "", "", args.reruns, args.rounds)
    print(f"floor app: {floor_s * 1000:.1f} ms of server CPU per rerun")
    with Server(free_port()) as server:
        for page in args.page:
            links = page_links(page)[: args.links]
            costs = []
            for query in links:
                s = await view_cost(server.base_url, server.pid, page, query, args.reruns, args.rounds)
                costs.append(s)
                print(f"  {page:10s} {s * 1000:6.1f} ms  {s / floor_s:4.2f}x  ?{query[:90]}")
            med = statistics.median(costs)
            print(f"{page}: median over {len(costs)} views {med * 1000:.1f} ms, {med / floor_s:.2f}x the floor's")


async def against_async(args: argparse.Namespace) -> None:
    """Both trees' servers at once, rounds alternating between them (see the module docstring)."""
    with Server(free_port(), cwd=Path(args.against)) as old, Server(free_port()) as new:
        for page in args.page:
            tabs: dict[str, list] = {"before": [], "this tree": []}
            for name, server in (("before", old), ("this tree", new)):
                for query in page_links(page)[: args.links]:
                    tab = StreamlitSession(server.base_url)
                    await tab.__aenter__()
                    await tab.open(page, query)
                    await tab.rerun()
                    tabs[name].append(tab)
            per_round: dict[str, list[float]] = {name: [] for name in tabs}
            for _ in range(args.rounds):
                for name, server in (("before", old), ("this tree", new)):
                    before = cpu_seconds(server.pid)
                    for _ in range(args.reruns):
                        for tab in tabs[name]:
                            result = await tab.rerun()
                            if not result.ok:
                                raise RuntimeError(f"{name} {page}: {result.status} {result.exceptions[:1]}")
                    per_round[name].append((cpu_seconds(server.pid) - before) / (args.reruns * len(tabs[name])))
            a, b = (statistics.median(per_round[n]) * 1000 for n in ("before", "this tree"))
            print(f"{page:10s} before {a:5.2f} ms  this tree {b:5.2f} ms  ratio {b / a:.3f}", flush=True)
            for name_tabs in tabs.values():
                for tab in name_tabs:
                    await tab.__aexit__(None, None, None)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--page", action="append", required=True, help="url path of a page (repeatable)")
    p.add_argument("--reruns", type=int, default=20, help="reruns per round (default 20)")
    p.add_argument("--rounds", type=int, default=3, help="rounds per view; the median is printed (default 3)")
    p.add_argument("--links", type=int, default=20, help="at most this many of each page's links (default 20)")
    p.add_argument("--against", default="", metavar="DIR", help="an earlier tree: both servers, rounds alternating")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    asyncio.run(against_async(args) if args.against else main_async(args))
    print(f"({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
