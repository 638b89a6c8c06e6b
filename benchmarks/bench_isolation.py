"""One session's heaviest request against another session's trivial rerun, before and after the pool.

Starts ``streamlit run`` on 127.0.0.1 and, for each case, opens a heavy request in
session A while session B reruns a trivial page over and over; prints A's wall
time and outcome, B's rerun latency (median, p95, max and how many reruns) while
A ran, and the CPU the server's process tree used (cores = CPU seconds / wall
seconds: above 1 means more than one core worked).

Two sets of cases:

* ``--pages`` (the candidates for "the heaviest request any single
  session can make"): the real pages of ``app.py`` with default settings and
  limits (:data:`harness.heavy_requests.PAGE_CASES`: a full check at LIMITS.full_check_elements, a
  100,000-point round-off comparison, a cold exact reference of a long
  expression, the million-element Grad check, ``x**x**x`` at 1e9). B reruns the
  home page. A repeats its request (a cold variant each time: another seed or
  x, so no cache answers it) until B has ``--min-samples`` reruns, so B's p95
  means something even when A's request is stopped within a second.
* the Explorer's work on ``benchmarks/isolation_app.py`` (:data:`CASES`), in
  ``--modes``: ``thread`` runs the sweep in A's own thread (as the pages did
  before the pool), ``pool`` through gradlab.ui.worker_calls (a worker process
  ended at its limit). Thread mode can leave a runaway thread behind, so each
  thread-mode case gets a fresh server, and A's wait is capped at ``--cap``
  seconds.

* ``--hostile 1 3 5`` (pool fairness): that many hostile tabs each load the
  heaviest work of each page that uses the worker pool (:data:`HOSTILE_CASES`:
  a bfloat16 summed loss of 200,000 terms, a full check near its limit, a
  100,000-point round-off comparison, a cold long expression), a cold
  variant each time, reloading (a new session; the old tab's websocket closed)
  every ``--reload-every`` seconds or when the page has answered, while a
  victim alternates a trivial rerun of its home-page tab and a cheap Explorer
  sweep in a new tab (a cold x, so no cache answers it). Prints the victim's median and p95
  of each. ``--together``: the hostile tabs reload at the same instant (a class
  told "reload now", or one visitor's script), so they all want a worker at
  once. ``--app-dir`` serves another checkout's ``app.py`` (a ``git worktree``
  of the code before a change), so before and after are measured in one run,
  alternating, a fresh server for each count.

    python -m benchmarks.bench_isolation --port 8631 --pages
    python -m benchmarks.bench_isolation --port 8631 --modes thread pool
    python -m benchmarks.bench_isolation --hostile 1 3 5 --app-dir /tmp/pool-before --app-dir .
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from harness.heavy_requests import (PAGE_CASES, SIGMOID_8, TRIVIAL_PAGE, PageOutcome, cheap_sweep_query,
                                    measure_page, warm_pages)
from harness.processes import tree_cpu_seconds, tree_rss_mb
from harness.runs import RunResult, plain_text
from harness.server import Server
from harness.session import StreamlitSession
from harness.stats import pct

REPO_ROOT = Path(__file__).resolve().parents[1]

#: name -> (expression, x, whether the Explorer's LaTeX step is included)
CASES = {
    "sigmoid-8-deep": (SIGMOID_8, 1.0, True),
    "x**x**x at 1e9": ("x**x**x", 1e9, False),
    "tower-6 at 2": ("x**x**x**x**x**x", 2.0, True),
    "tan-tower at 1": ("**".join(["tan(x)"] * 8), 1.0, True),  # legitimate, seconds of sympy work
}


@dataclass
class Outcome:
    case: str
    mode: str
    heavy_seconds: float
    heavy_status: str
    heavy_text: str
    trivial_median: float
    trivial_max: float
    trivial_runs: int
    cores: float
    trivial_p95: float = float("nan")

    def line(self) -> str:
        return (f"{self.case:16} {self.mode:6} heavy {self.heavy_seconds:6.2f} s ({self.heavy_status}: "
                f"{self.heavy_text[:70]}) | other session: median {self.trivial_median:.3f} s, "
                f"p95 {self.trivial_p95:.3f} s, max {self.trivial_max:.3f} s over {self.trivial_runs} reruns "
                f"| {self.cores:.2f} cores")


async def measure(base_url: str, server_pid: int, case: str, mode: str, cap: float) -> Outcome:
    expr, x, formulas = CASES[case]
    query = f"heavy=1&mode={mode}&x={x!r}&expr={expr}" + ("&formulas=1" if formulas else "")
    async with StreamlitSession(base_url, run_timeout=cap) as a, StreamlitSession(base_url, run_timeout=60) as b:
        await b.open()  # warm: B's session exists before A starts
        cpu0, t0 = tree_cpu_seconds(server_pid), time.perf_counter()
        heavy = asyncio.create_task(a.open("", query))
        latencies = []
        await asyncio.sleep(0.3)  # A's request is under way
        while not heavy.done():
            run = await b.rerun()
            latencies.append(run.seconds)
            await asyncio.sleep(0.1)
        result = await heavy
        wall = time.perf_counter() - t0
        cores = (tree_cpu_seconds(server_pid) - cpu0) / wall
    text = result.error_alerts[0] if result.error_alerts else ("(still running)" if result.status == "timeout" else "")
    return Outcome(case, mode, result.seconds, result.status, str(text).replace("\n", " "),
                   statistics.median(latencies) if latencies else float("nan"),
                   max(latencies, default=float("nan")), len(latencies), cores, pct(latencies, 95))


async def measure_pair(base_url: str, server_pid: int, case: str, mode: str, cap: float) -> str:
    """Two sessions make the same heavy request (at two points) at once: wall times and cores used."""
    expr, x, formulas = CASES[case]
    queries = [f"heavy=1&mode={mode}&x={x + k * 0.01!r}&expr={expr}" + ("&formulas=1" if formulas else "")
               for k in (1, 2)]
    async with StreamlitSession(base_url, run_timeout=cap) as a, StreamlitSession(base_url, run_timeout=cap) as b:
        cpu0, t0 = tree_cpu_seconds(server_pid), time.perf_counter()
        runs = await asyncio.gather(a.open("", queries[0]), b.open("", queries[1]))
        wall = time.perf_counter() - t0
        cores = (tree_cpu_seconds(server_pid) - cpu0) / wall
    return (f"{case:16} {mode:6} two sessions at once: {runs[0].seconds:.2f} s and {runs[1].seconds:.2f} s "
            f"({runs[0].status}, {runs[1].status}), wall {wall:.2f} s, {cores:.2f} cores")


def run_case(port: int, case: str, mode: str, cap: float, pair: bool = False):
    env = {"PYTHONPATH": str(REPO_ROOT)}
    with Server(port, app="benchmarks/isolation_app.py", extra_env=env) as server:
        async def warm():
            async with StreamlitSession(server.base_url, run_timeout=60) as s:
                await s.open("", "heavy=1&mode=pool&expr=x**2&x=1.0")  # the pool's workers are up
        asyncio.run(warm())
        if pair:
            return asyncio.run(measure_pair(server.base_url, server.proc.pid, case, mode, cap))
        return asyncio.run(measure(server.base_url, server.proc.pid, case, mode, cap))


def run_pages(port: int, cases: list[str], min_samples: int, cap: float) -> list[PageOutcome]:
    """:func:`measure_page` for each case, one after the other, on one ``streamlit run app.py``
    (default settings and limits), printing each line as it comes."""
    outcomes = []
    with Server(port, extra_env={"PYTHONPATH": str(REPO_ROOT)}) as server:
        asyncio.run(warm_pages(server.base_url))
        print(f"server tree RSS after warm-up: {tree_rss_mb(server.pid):.0f} MB", flush=True)
        for case in cases:
            outcome = asyncio.run(measure_page(server.base_url, server.pid, case, min_samples=min_samples,
                                               cap=cap))
            outcomes.append(outcome)
            print(outcome.line(), flush=True)
    return outcomes


#: The heaviest work of each page that runs in the worker pool, as (page, query of the k-th cold
#: variant): each holds a worker for seconds (a new shape or expression each time, so no cache
#: answers it). Alone, 2 cores: the summed loss 1-3 s (up to 10 s, its limit, on a busy
#: machine), the full checks 8-12 s (a result, under LIMITS.full_check_seconds), the others
#: 1-3 s.
HOSTILE_CASES: dict[str, tuple[str, Callable[[int], str]]] = {
    "summed 4NNx4NN bfloat16 mean": ("summed", lambda k: (  # 10,000 shapes of 121,000-200,000 terms
        f"shape={400 - k // 100 % 100}x{500 - k % 100}&dtype=bfloat16&reduction=mean")),
    "full check, mlp 96x2NN": ("gradcheck", lambda k: (
        f"model=mlp&shape=96x{200 - k % 40}&dtype=float64&scheme=Central&mode=full&seed={k}")),
    # 8-9 s alone whatever the seed (the summed loss's cost varies with its data: 1.2-3.3 s)
    "full check, affine 160x160": ("gradcheck", lambda k: (
        f"model=affine&shape=160x160&dtype=float64&scheme=Central&mode=full&seed={k}")),
    "round-off 100k, normal": PAGE_CASES["round-off 100k, normal"],
    "cold long expression": PAGE_CASES["cold long expression"],
}


@dataclass
class HostileOutcome:
    """The victim's latencies while ``tabs`` hostile tabs loaded the heaviest work of each page."""

    label: str
    tabs: int
    trivial: list[float]
    sweep: list[float]
    failed: int  # the victim's runs that did not finish cleanly
    hostile_runs: int  # hostile page loads that answered (a result or a limit's sentence)
    hostile_reloads: int  # hostile page loads abandoned by a reload before they answered
    cores: float
    hostile_answers: dict = field(default_factory=dict)  # "page: what it said" -> how many

    def line(self) -> str:
        def stats(values: list[float]) -> str:
            return (f"median {statistics.median(values) if values else float('nan'):.3f} s, "
                    f"p95 {pct(values, 95):.3f} s, max {max(values, default=float('nan')):.3f} s (n={len(values)})")

        return (f"{self.label:8} {self.tabs} hostile tab(s) | victim trivial rerun: {stats(self.trivial)} | "
                f"cheap Explorer sweep: {stats(self.sweep)} | {self.failed} failed | hostile: "
                f"{self.hostile_runs} answered, {self.hostile_reloads} reloaded mid-run | {self.cores:.2f} cores"
                + "".join(f"\n    hostile answer x{n}: {said}" for said, n in sorted(self.hostile_answers.items())))


_MAX_TABS = 20  # hostile tabs at most: tab i's k-th request is variant 20 k + i, no other tab's


async def _hostile_tab(base_url: str, index: int, stop: asyncio.Event, reload_every: float,
                       counts: dict[str, int], cases: list[str], together: asyncio.Barrier | None = None) -> None:
    """One hostile tab: the heaviest work of each page in turn (starting at page ``index``), a
    cold variant each time, reloaded (a new session, the old websocket closed) every
    ``reload_every`` s or once the page answered; with ``together``, every tab reloads at once
    (each waits for the others' pages first)."""
    cases = [HOSTILE_CASES[name] for name in cases]
    k = 0
    while not stop.is_set():
        if together is not None:
            try:
                await together.wait()
            except asyncio.BrokenBarrierError:
                return
        page, query = cases[(index + k) % len(cases)]
        tab = StreamlitSession(base_url, run_timeout=reload_every)
        try:
            await tab.connect()
            run = await tab.open(page, query(_MAX_TABS * k + index))  # no other tab's, no cache's
            counts["answered" if run.status != "timeout" else "reloaded"] += 1
            if run.status != "timeout":
                said = plain_text(run.error_alerts[0])[:60] if run.error_alerts else "a result"
                counts[f"{page}: {said}"] = counts.get(f"{page}: {said}", 0) + 1
        finally:
            await tab.close()
        k += 1


async def measure_hostile(base_url: str, server_pid: int, label: str, tabs: int, *, duration: float,
                          reload_every: float, cases: list[str], together: bool = False,
                          gap: float = 0.2) -> HostileOutcome:
    """``tabs`` hostile tabs (:func:`_hostile_tab`, over ``cases``; ``together``: reloading at once)
    for ``duration`` s while a victim tab alternates a trivial rerun of the home page and a cheap
    Explorer sweep, ``gap`` s apart."""
    stop, counts = asyncio.Event(), {"answered": 0, "reloaded": 0}
    barrier = asyncio.Barrier(tabs) if together and tabs else None
    hostile = [asyncio.create_task(_hostile_tab(base_url, i, stop, reload_every, counts, cases, barrier))
               for i in range(tabs)]
    trivial, sweep, failed = [], [], 0

    async def cheap_sweep(k: int) -> RunResult:
        # A new tab each time: a session seeds its widgets from the URL it was opened with, so
        # reopening another x in the same session would sweep the first x again (from the cache)
        async with StreamlitSession(base_url, run_timeout=120) as explorer:
            return await explorer.open("explorer", cheap_sweep_query(k))

    async with StreamlitSession(base_url, run_timeout=120) as home:
        await home.open(TRIVIAL_PAGE)
        k = 10_000 * (tabs + 1)  # an x no earlier sweep had: cold, not cached
        await asyncio.sleep(2.0)  # every hostile tab's first request is under way
        cpu0, t0 = tree_cpu_seconds(server_pid), time.perf_counter()
        while time.perf_counter() - t0 < duration:
            k += 1
            for runs, request in ((trivial, home.rerun), (sweep, lambda: cheap_sweep(k))):
                run = await request()
                if run.ok and not run.exceptions and not run.error_alerts:
                    runs.append(run.seconds)
                else:
                    failed += 1
                await asyncio.sleep(gap)
        cores = (tree_cpu_seconds(server_pid) - cpu0) / (time.perf_counter() - t0)
    stop.set()
    if barrier is not None:
        await barrier.abort()
    await asyncio.gather(*hostile, return_exceptions=True)
    answers = {key: n for key, n in counts.items() if ":" in key}
    return HostileOutcome(label, tabs, trivial, sweep, failed, counts["answered"], counts["reloaded"], cores,
                          answers)


def run_hostile(port: int, app_dirs: list[Path], tab_counts: list[int], duration: float,
                reload_every: float, cases: list[str], together: bool = False) -> list[HostileOutcome]:
    """:func:`measure_hostile` for each count of hostile tabs, on ``streamlit run app.py`` of each
    directory in turn, a fresh server each time (default settings and limits; no cache or worker
    carried over), alternating the directories so that both see the machine's load alike;
    prints each line as it comes, then a table of every count's outcomes side by side."""
    outcomes = []
    for app_dir in app_dirs:
        print(f"{_label(app_dir)}: {app_dir} at {_commit(app_dir)}", flush=True)
    print(f"hostile tabs cycle over: {', '.join(cases)}; a reload every {reload_every:g} s at most"
          + (", every tab at once" if together else ""), flush=True)
    for tabs in tab_counts:
        for app_dir in app_dirs:
            with Server(port, cwd=app_dir, extra_env={"PYTHONPATH": str(app_dir)}) as server:
                asyncio.run(warm_pages(server.base_url))
                outcome = asyncio.run(measure_hostile(server.base_url, server.pid, _label(app_dir), tabs,
                                                      duration=duration, reload_every=reload_every,
                                                      cases=cases, together=together))
            outcomes.append(outcome)
            print(outcome.line(), os.getloadavg(), flush=True)
    print("\nvictim p95 (median) in seconds   " + "   ".join(f"{t} tab(s)" for t in tab_counts))
    for app_dir in app_dirs:
        for what in ("trivial", "sweep"):
            cells = [f"{pct(getattr(o, what), 95):.3f} ({statistics.median(getattr(o, what)) if getattr(o, what) else float('nan'):.3f})"
                     for o in outcomes if o.label == _label(app_dir)]
            print(f"{_label(app_dir):8} {what:8}            " + "   ".join(cells))
    return outcomes


def _label(app_dir: Path) -> str:
    return "this" if app_dir.resolve() == REPO_ROOT else app_dir.name


def _commit(directory: Path) -> str:
    import subprocess

    done = subprocess.run(["git", "-C", str(directory), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True)
    return done.stdout.strip()[:80] or "(not a git checkout)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8621)
    parser.add_argument("--pages", action="store_true",
                        help="the heaviest-request candidates on the real pages of app.py (PAGE_CASES), not the "
                             "isolation app's sweeps")
    parser.add_argument("--page-cases", nargs="+", default=list(PAGE_CASES), choices=list(PAGE_CASES))
    parser.add_argument("--min-samples", type=int, default=30,
                        help="with --pages: B's reruns to collect per case (A repeats its request till then)")
    parser.add_argument("--modes", nargs="+", default=["thread", "pool"], choices=["thread", "pool"])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--cap", type=float, default=30.0, help="seconds A's request is waited for")
    parser.add_argument("--pair", action="store_true", help="two sessions make the heavy request at once")
    parser.add_argument("--hostile", nargs="+", type=int, metavar="TABS",
                        help="pool fairness: the victim's latencies with this many hostile tabs (each count)")
    parser.add_argument("--hostile-cases", nargs="+", choices=list(HOSTILE_CASES),
                        default=[name for name in HOSTILE_CASES if name != "full check, affine 160x160"],
                        help="with --hostile: the requests the hostile tabs cycle over (default: every page's)")
    parser.add_argument("--together", action="store_true",
                        help="with --hostile: the hostile tabs reload at the same instant, each round")
    parser.add_argument("--app-dir", action="append", type=Path,
                        help="with --hostile: serve this checkout's app.py (repeat: one after the other)")
    parser.add_argument("--duration", type=float, default=30.0, help="with --hostile: seconds per count")
    parser.add_argument("--reload-every", type=float, default=15.0,
                        help="with --hostile: a hostile tab reloads after this many seconds without an answer")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    if args.hostile:
        run_hostile(args.port, args.app_dir or [REPO_ROOT], [max(0, min(t, _MAX_TABS)) for t in args.hostile],
                    max(5.0, min(args.duration, 300.0)), max(0.5, args.reload_every), args.hostile_cases,
                    args.together)
        print(f"load average after: {os.getloadavg()}")
        return 0
    if args.pages:
        run_pages(args.port, args.page_cases, max(1, min(args.min_samples, 200)), args.cap)
        print(f"load average after: {os.getloadavg()}")
        return 0
    for case in args.cases:
        for mode in args.modes:
            outcome = run_case(args.port, case, mode, args.cap, args.pair)
            print(outcome if args.pair else outcome.line(), flush=True)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
