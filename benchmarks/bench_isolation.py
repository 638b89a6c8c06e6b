"""One session's heaviest request against another session's trivial rerun, before and after the pool.

Starts ``streamlit run benchmarks/isolation_app.py`` on 127.0.0.1 and, for each
case and mode, opens a heavy request in session A while session B reruns a
trivial page over and over; prints A's wall time and outcome, B's rerun
latency (median, max) while A ran, and the CPU the server's process tree used
(cores = CPU seconds / wall seconds: above 1 means more than one core worked).
``thread`` runs the sweep in A's own thread (as the pages did before the pool);
``pool`` through gradlab.ui.heavy (a worker process ended at its bound). Thread
mode can leave a runaway thread behind, so each thread-mode case gets a fresh
server, and A's wait is capped at ``--cap`` seconds.

    python benchmarks/bench_isolation.py --port 8621 --modes thread pool
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.load_test import Server  # noqa: E402
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

    def line(self) -> str:
        return (f"{self.case:16} {self.mode:6} heavy {self.heavy_seconds:6.2f} s ({self.heavy_status}: "
                f"{self.heavy_text[:70]}) | other session: median {self.trivial_median:.3f} s, "
                f"max {self.trivial_max:.3f} s over {self.trivial_runs} reruns | {self.cores:.2f} cores")


def _tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and every descendant alive now."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / _TICKS
        except OSError:
            pass
        todo += children.get(p, [])
    return total


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
                   max(latencies, default=float("nan")), len(latencies), cores)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8621)
    parser.add_argument("--modes", nargs="+", default=["thread", "pool"], choices=["thread", "pool"])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--cap", type=float, default=30.0, help="seconds A's request is waited for")
    parser.add_argument("--pair", action="store_true", help="two sessions make the heavy request at once")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    for case in args.cases:
        for mode in args.modes:
            outcome = run_case(args.port, case, mode, args.cap, args.pair)
            print(outcome if args.pair else outcome.line(), flush=True)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
