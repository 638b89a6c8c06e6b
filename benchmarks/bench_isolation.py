"""One session's heaviest request against another session's trivial rerun, before and after the pool.

Starts ``streamlit run`` on 127.0.0.1 and, for each case, opens a heavy request in
session A while session B reruns a trivial page over and over; prints A's wall
time and outcome, B's rerun latency (median, p95, max and how many reruns) while
A ran, and the CPU the server's process tree used (cores = CPU seconds / wall
seconds: above 1 means more than one core worked).

Two sets of cases:

* ``--pages`` (issue 16's candidates for "the heaviest request any single
  session can make"): the real pages of ``app.py`` with default settings and
  limits (:data:`PAGE_CASES`: a full check at LIMITS.full_check_elements, a
  100,000-point round-off comparison, a cold exact reference of a long
  expression, the Grad check of issue 16, ``x**x**x`` at 1e9). B reruns the
  home page. A repeats its request (a cold variant each time: another seed or
  x, so no cache answers it) until B has ``--min-samples`` reruns, so B's p95
  means something even when A's request is stopped within a second.
* the Explorer's work on ``benchmarks/isolation_app.py`` (:data:`CASES`), in
  ``--modes``: ``thread`` runs the sweep in A's own thread (as the pages did
  before the pool), ``pool`` through gradlab.ui.heavy (a worker process ended
  at its bound). Thread mode can leave a runaway thread behind, so each
  thread-mode case gets a fresh server, and A's wait is capped at ``--cap``
  seconds.

    python benchmarks/bench_isolation.py --port 8631 --pages
    python benchmarks/bench_isolation.py --port 8631 --modes thread pool
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import quote_plus

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.load_test import Server, pct  # noqa: E402
from benchmarks.st_client import StreamlitSession  # noqa: E402

SIGMOID_8 = "sigmoid(" * 8 + "x" + ")" * 8
#: name -> (expression, x, whether the Explorer's LaTeX step is included)
CASES = {
    "sigmoid-8-deep": (SIGMOID_8, 1.0, True),
    "x**x**x at 1e9": ("x**x**x", 1e9, False),
    "tower-6 at 2": ("x**x**x**x**x**x", 2.0, True),
    "tan-tower at 1": ("**".join(["tan(x)"] * 8), 1.0, True),  # legitimate, seconds of sympy work
}
_TICKS = os.sysconf("SC_CLK_TCK")

GRADCHECK_EXPRESSION = "+".join(["x**sin(x)"] * 20)  # issue 16's Grad check: 1M elements, complex step


def long_expression(k: int) -> str:
    """A long expression (~100 nodes; LIMITS.expression_nodes is 120) whose every term is new for
    each k: its exact derivatives (sympy, mpmath) and LaTeX start cold, as no cache of the pages'
    or of sympy's (a worker process keeps sympy's between requests) has seen any part of it."""
    terms = [f"sin(exp({4 * k + i + 1}*x))*cos(log({4 * k + i + 1}+x*x))" for i in range(4)]
    return "+".join(terms) + f"+tan(sin({k + 1}*x))*exp(cos(x))"


TAN_TOWER = "**".join(["tan(x)"] * 8)
#: Round-off: both formulas at 100,000 points (LIMITS.roundoff_samples), exact references of
#: tiny |x| in float64 (many bits), and the page's three figures of 100,000 points.
ROUNDOFF_A = "+".join(["sin(exp(x))*cos(log(1+x*x))"] * 6)
ROUNDOFF_B = "6*(sin(exp(x))*cos(log(1+x*x)))"
CUSTOM = quote_plus("custom (type it)")

#: name -> (page, the query of the k-th cold variant of the request): issue 16's candidates
PAGE_CASES: dict[str, tuple[str, Callable[[int], str]]] = {
    "grad check of issue 16": ("gradcheck", lambda k: (
        f"model=expression&expression={quote_plus(GRADCHECK_EXPRESSION)}&shape=1024x1024&dtype=float64"
        f"&scheme=Complex+step&samples=1000&seed={7 + k}")),
    "full check, mlp 256x256": ("gradcheck", lambda k: (  # 65,536 elements: LIMITS.full_check_elements
        f"model=mlp&shape=256x256&dtype=float64&scheme=Central&mode=full&seed={k}")),
    "full check, expr 256x256": ("gradcheck", lambda k: (
        f"model=expression&expression={quote_plus(GRADCHECK_EXPRESSION)}&shape=256x256&dtype=float64"
        f"&scheme=Central&mode=full&seed={k}")),
    "round-off 100k, tiny x": ("roundoff", lambda k: (
        f"a={quote_plus(ROUNDOFF_A)}&b={quote_plus(ROUNDOFF_B)}&dtype=float64&dist=log-uniform"
        f"&low=1e-300&high=1e-200&n=100000&seed={k}")),
    "round-off 100k, normal": ("roundoff", lambda k: (
        f"a={quote_plus(ROUNDOFF_A)}&b={quote_plus(ROUNDOFF_B)}&dtype=float64&dist=normal"
        f"&low=-3.0&high=3.0&n=100000&seed={k}")),
    # the Explorer: a new term each time, so the symbolic work (derivatives, LaTeX) is cold too
    "cold long expression": ("explorer", lambda k: (
        f"fn={CUSTOM}&expr={quote_plus(long_expression(k))}&x={1.1 + 0.01 * k!r}")),
    "cold tan tower (8)": ("explorer", lambda k: (
        f"fn={CUSTOM}&expr={quote_plus(f'{TAN_TOWER}+{k + 1}*x')}&x=1.0")),
    "cold sigmoid 8 deep": ("explorer", lambda k: (
        f"fn={CUSTOM}&expr={quote_plus(f'{SIGMOID_8}+{k + 1}*x')}&x=1.0")),
    "x**x**x at 1e9": ("explorer", lambda k: f"fn={CUSTOM}&expr={quote_plus('x**x**x')}&x={1e9 + k!r}"),
}
TRIVIAL_PAGE = ""  # the home page: B's trivial rerun on app.py


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


@dataclass
class PageOutcome:
    """Issue 16's measure of one candidate: A's requests, and B's trivial reruns meanwhile."""

    case: str
    heavy_seconds: list[float]  # each of A's requests (cold variants), in order
    heavy_statuses: list[str]
    heavy_texts: list[str]  # the first st.error of each (a bound's sentence), else ""
    heavy_exceptions: int
    trivial: list[float]  # B's rerun latencies while A's requests ran
    trivial_failed: int  # B's reruns that did not finish cleanly
    cores: float
    peak_rss_mb: float  # of the server's process tree (server, fork server, workers)

    @property
    def trivial_median(self) -> float:
        return statistics.median(self.trivial) if self.trivial else float("nan")

    @property
    def trivial_p95(self) -> float:
        return pct(self.trivial, 95)

    @property
    def trivial_max(self) -> float:
        return max(self.trivial, default=float("nan"))

    def line(self) -> str:
        heavy = ", ".join(f"{s:.2f}" for s in self.heavy_seconds)
        return (f"{self.case:26} A: {len(self.heavy_seconds)} request(s) of {heavy} s "
                f"({self.heavy_statuses[0]}: {self.heavy_texts[0][:90] or 'a result'}) | B: "
                f"median {self.trivial_median:.3f} s, p95 {self.trivial_p95:.3f} s, max {self.trivial_max:.3f} s "
                f"over {len(self.trivial)} reruns ({self.trivial_failed} failed) | {self.cores:.2f} cores, "
                f"peak tree RSS {self.peak_rss_mb:.0f} MB")


def _children() -> dict[int, list[int]]:
    """parent pid -> child pids, of every process alive now."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (the server, its fork server and pool workers)."""
    children, out, todo = _children(), [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def cpu_seconds_of(pid: int, children: bool = True) -> float:
    """CPU seconds (user + system) of one process, with its reaped children's unless ``children``
    is False (a fork server's count jumps when it reaps a killed worker); 0 when gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    own = int(fields[11]) + int(fields[12])
    return (own + (int(fields[13]) + int(fields[14]) if children else 0)) / _TICKS


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _tree_rss_mb(pid: int) -> float:
    total = 0
    for p in descendants(pid):
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return total * os.sysconf("SC_PAGE_SIZE") / 2**20


def _tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and every descendant alive now."""
    return sum(cpu_seconds_of(p) for p in descendants(pid))


async def measure_page(base_url: str, server_pid: int, case: str, *, min_samples: int = 20,
                       max_requests: int = 8, cap: float = 60.0, gap: float = 0.1) -> PageOutcome:
    """Session A makes ``case``'s request (a cold variant each time) until session B, rerunning the
    home page every ``gap`` s meanwhile, has ``min_samples`` reruns (or A made ``max_requests``)."""
    page, query = PAGE_CASES[case]
    seconds, statuses, texts, exceptions, trivial, failed = [], [], [], 0, [], 0
    peak = 0.0
    async with StreamlitSession(base_url, run_timeout=60) as b:
        await b.open(TRIVIAL_PAGE)  # B's session exists before A starts
        cpu0, t0 = _tree_cpu_seconds(server_pid), time.perf_counter()
        for k in range(max_requests):
            # A loads the link in a new tab: a rerun of an open tab would send its widgets' values,
            # which win over the query's, and a cache would answer
            a = StreamlitSession(base_url, run_timeout=cap)
            await a.connect()
            heavy = asyncio.create_task(a.open(page, query(k)))
            await asyncio.sleep(0.1)  # A's request is under way
            while not heavy.done():
                run = await b.rerun()
                if run.ok and not run.exceptions:
                    trivial.append(run.seconds)
                else:
                    failed += 1
                peak = max(peak, _tree_rss_mb(server_pid))
                await asyncio.sleep(gap)
            result = await heavy
            await a.close()
            seconds.append(result.seconds)
            statuses.append(result.status)
            texts.append(_plain(result.error_alerts[0]) if result.error_alerts else "")
            exceptions += len(result.exceptions)
            if len(trivial) >= min_samples:
                break
        cores = (_tree_cpu_seconds(server_pid) - cpu0) / (time.perf_counter() - t0)
    return PageOutcome(case, seconds, statuses, texts, exceptions, trivial, failed, cores, peak)


def _plain(alert) -> str:
    """An st.error's text on one line, without the Markdown escapes that keep it literal."""
    return re.sub(r"\\(.)", r"\1", str(alert)).replace("\n", " ")


async def warm_pages(base_url: str) -> None:
    """Every page once (imports, first-time caches, the pool's workers up)."""
    async with StreamlitSession(base_url, run_timeout=120) as tab:
        for page in ("", "gradcheck", "roundoff", "explorer"):
            run = await tab.open(page, "")
            assert run.ok and not run.exceptions, (page, run.status, run.protocol_error)


async def measure(base_url: str, server_pid: int, case: str, mode: str, cap: float) -> Outcome:
    expr, x, formulas = CASES[case]
    query = f"heavy=1&mode={mode}&x={x!r}&expr={expr}" + ("&formulas=1" if formulas else "")
    async with StreamlitSession(base_url, run_timeout=cap) as a, StreamlitSession(base_url, run_timeout=60) as b:
        await b.open()  # warm: B's session exists before A starts
        cpu0, t0 = _tree_cpu_seconds(server_pid), time.perf_counter()
        heavy = asyncio.create_task(a.open("", query))
        latencies = []
        await asyncio.sleep(0.3)  # A's request is under way
        while not heavy.done():
            run = await b.rerun()
            latencies.append(run.seconds)
            await asyncio.sleep(0.1)
        result = await heavy
        wall = time.perf_counter() - t0
        cores = (_tree_cpu_seconds(server_pid) - cpu0) / wall
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
        cpu0, t0 = _tree_cpu_seconds(server_pid), time.perf_counter()
        runs = await asyncio.gather(a.open("", queries[0]), b.open("", queries[1]))
        wall = time.perf_counter() - t0
        cores = (_tree_cpu_seconds(server_pid) - cpu0) / wall
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
        print(f"server tree RSS after warm-up: {_tree_rss_mb(server.pid):.0f} MB", flush=True)
        for case in cases:
            outcome = asyncio.run(measure_page(server.base_url, server.pid, case, min_samples=min_samples,
                                               cap=cap))
            outcomes.append(outcome)
            print(outcome.line(), flush=True)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8621)
    parser.add_argument("--pages", action="store_true",
                        help="issue 16's candidates on the real pages of app.py (PAGE_CASES), not the "
                             "isolation app's sweeps")
    parser.add_argument("--page-cases", nargs="+", default=list(PAGE_CASES), choices=list(PAGE_CASES))
    parser.add_argument("--min-samples", type=int, default=30,
                        help="with --pages: B's reruns to collect per case (A repeats its request till then)")
    parser.add_argument("--modes", nargs="+", default=["thread", "pool"], choices=["thread", "pool"])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--cap", type=float, default=30.0, help="seconds A's request is waited for")
    parser.add_argument("--pair", action="store_true", help="two sessions make the heavy request at once")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
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
