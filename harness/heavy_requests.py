"""The heaviest requests one session can make, and another session's trivial reruns meanwhile.

What must hold: the heaviest request any single session can make leaves another session's
trivial rerun responsive. :data:`PAGE_CASES` are the candidates on the real pages of
``app.py`` (default settings and limits), each a cold variant per ``k`` so no cache answers
it; :func:`measure_page` makes one (session A) while session B reruns the home page, and
reports both. ``python -m benchmarks.bench_isolation --pages`` prints them;
``tests/test_isolation_server.py`` asserts what the machine's load cannot change.

>>> page, query = PAGE_CASES["cold long expression"]
>>> page, query(0) != query(1)
('explorer', True)
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import quote_plus

from harness.processes import tree_cpu_seconds, tree_rss_mb
from harness.runs import plain_text
from harness.session import StreamlitSession
from harness.stats import pct

SIGMOID_8 = "sigmoid(" * 8 + "x" + ")" * 8
GRADCHECK_EXPRESSION = "+".join(["x**sin(x)"] * 20)  # the million-element Grad check: 1M elements, complex step


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

#: name -> (page, the query of the k-th cold variant of the request): the candidates
PAGE_CASES: dict[str, tuple[str, Callable[[int], str]]] = {
    "1M-element grad check": ("gradcheck", lambda k: (
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
class PageOutcome:
    """The isolation measure of one candidate: A's requests, and B's trivial reruns meanwhile."""

    case: str
    heavy_seconds: list[float]  # each of A's requests (cold variants), in order
    heavy_statuses: list[str]
    heavy_texts: list[str]  # the first st.error of each (a limit's sentence), else ""
    heavy_exceptions: int
    trivial: list[float]  # B's rerun latencies while A's requests ran
    trivial_failed: int  # B's reruns that did not finish cleanly
    cores: float
    peak_rss_mb: float  # of the server's process tree (server, fork server, workers)
    trivial_within: int = 0  # B's reruns answered while A's request was still under way

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
                f"over {len(self.trivial)} reruns ({self.trivial_failed} failed, {self.trivial_within} answered "
                f"while A's request ran) | {self.cores:.2f} cores, "
                f"peak tree RSS {self.peak_rss_mb:.0f} MB")


async def measure_page(base_url: str, server_pid: int, case: str, *, min_samples: int = 20,
                       max_requests: int = 8, cap: float = 60.0, gap: float = 0.1) -> PageOutcome:
    """Session A makes ``case``'s request (a cold variant each time) until session B, rerunning the
    home page every ``gap`` s meanwhile, has ``min_samples`` reruns (or A made ``max_requests``)."""
    page, query = PAGE_CASES[case]
    seconds, statuses, texts, exceptions, trivial, failed, within = [], [], [], 0, [], 0, 0
    peak = 0.0
    async with StreamlitSession(base_url, run_timeout=60) as b:
        await b.open(TRIVIAL_PAGE)  # B's session exists before A starts
        cpu0, t0 = tree_cpu_seconds(server_pid), time.perf_counter()
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
                    within += not heavy.done()
                else:
                    failed += 1
                peak = max(peak, tree_rss_mb(server_pid))
                await asyncio.sleep(gap)
            result = await heavy
            await a.close()
            seconds.append(result.seconds)
            statuses.append(result.status)
            texts.append(plain_text(result.error_alerts[0]) if result.error_alerts else "")
            exceptions += len(result.exceptions)
            if len(trivial) >= min_samples:
                break
        cores = (tree_cpu_seconds(server_pid) - cpu0) / (time.perf_counter() - t0)
    return PageOutcome(case, seconds, statuses, texts, exceptions, trivial, failed, cores, peak, within)


async def warm_pages(base_url: str) -> None:
    """Every page once (imports, first-time caches, the pool's workers up)."""
    async with StreamlitSession(base_url, run_timeout=120) as tab:
        for page in ("", "gradcheck", "roundoff", "explorer"):
            run = await tab.open(page, "")
            assert run.ok and not run.exceptions, (page, run.status, run.protocol_error)


def cheap_sweep_query(k: int) -> str:
    """The victim's cheap Explorer sweep: sin at a new x for each k (milliseconds of work, cold)."""
    return f"fn={CUSTOM}&expr=sin%28x%29&x={0.5 + 1e-6 * k!r}"
