"""Full gradient check: GradLab's batched full mode against ``torch.autograd.gradcheck``.

The float32 MSE-sum check question, in float64: x of shape 140x120, model (x+1)/2,
MSELoss(reduction="sum").
Both do the same full check: every element, central differences, eps 1e-6,
atol 1e-5, rtol 1e-3 (gradcheck's defaults), fast_mode=False for gradcheck.
GradLab is run on the per-element loss with reduction="sum" (how the page and
the CLI call it; fn broadcasts over the batch, so it is called directly), with
its default worker threads and with one, and on the same scalar loss function
gradcheck gets (through vmap). A second peer, for context: a plain Python loop
that perturbs x in place (x[i] = v + h; L; x[i] = v - h; L; restore), the
least a hand-written full check can do per element.

The floor for any full check that evaluates the loss at every stencil point:
2·N evaluations of L (33,600 here) times the cost of one, divided by the cores
doing them; printed as "compute floor" from a timed evaluation of L.

Prints medians over interleaved repeats, the ratios, and the load average
before and after (the ratios are only meaningful on a quiet machine: with
another process on a core, worker threads cannot help). Peak extra memory is
measured in a fresh subprocess per variant, as the growth of the peak
resident set size (VmHWM, reset just before the run), so it counts torch's
CPU allocations too.

Run: ``python -m benchmarks.bench_check [--repeats 3]``. A script, not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from gradlab.check import gradcheck
from gradlab.limits import LIMITS

SHAPE = (140, 120)  # the question's; --shape changes it (e.g. 30x40, where overhead dominates)
EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3  # torch.autograd.gradcheck's defaults
MIB = 2**20


def problem():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    t = torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    per_element = lambda x: ((x + 1) / 2 - t) ** 2  # noqa: E731
    loss = lambda x: F.mse_loss((x + 1) / 2, t, reduction="sum")  # noqa: E731
    return x, per_element, loss


def inplace_loop(loss, x: torch.Tensor) -> bool:
    """Central differences by perturbing x in place, one element at a time; same verdict rule."""
    work = x.clone()
    flat = work.view(-1)
    numeric = torch.empty(flat.numel(), dtype=torch.float64)
    with torch.no_grad():
        for i in range(flat.numel()):
            v = float(flat[i])
            flat[i] = v + EPS
            plus = float(loss(work))
            flat[i] = v - EPS
            minus = float(loss(work))
            flat[i] = v
            numeric[i] = (plus - minus) / (2 * EPS)
    leaf = x.clone().requires_grad_()
    (grad,) = torch.autograd.grad(loss(leaf), leaf)
    return bool(((grad.reshape(-1) - numeric).abs() <= ATOL + RTOL * numeric.abs()).all())


def variants():
    x, per_element, loss = problem()
    ours = dict(mode="full", scheme="central", eps=EPS, atol=ATOL, rtol=RTOL, taylor=False)
    workers = LIMITS.check_workers
    return {
        f"gradlab (per-element fn, sum, {workers} workers)":
            lambda: gradcheck(per_element, x, reduction="sum", **ours).passed,
        "gradlab (per-element fn, sum, 1 worker)":
            lambda: gradcheck(per_element, x, reduction="sum", workers=1, **ours).passed,
        f"gradlab (scalar loss fn, vmap, {workers} workers)":
            lambda: gradcheck(loss, x, **ours).passed,
        "plain in-place Python loop (1 thread)":
            lambda: inplace_loop(loss, x),
        REFERENCE:
            lambda: torch.autograd.gradcheck(loss, (x.clone().requires_grad_(),), eps=EPS,
                                             atol=ATOL, rtol=RTOL, fast_mode=False,
                                             raise_exception=False),
    }


REFERENCE = "torch.autograd.gradcheck (fast_mode=False)"


def evaluation_seconds() -> float:
    """Median time of one evaluation of the loss at x (single thread), over 1000 calls."""
    x, _, loss = problem()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            times = []
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(200):
                    loss(x)
                times.append((time.perf_counter() - start) / 200)
    finally:
        torch.set_num_threads(threads)
    return statistics.median(times)


def peak_extra_mib(name: str) -> float:
    """Run one variant in a fresh process; its growth of peak RSS, in MiB."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_check", "--memory", name,
                          "--shape", "x".join(map(str, SHAPE))],
                         cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _peak_rss_kib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return float(line.split()[1])
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _memory_child(name: str) -> None:
    fn = variants()[name]
    try:  # reset the peak to the current resident size (Linux >= 4.0)
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        pass
    before = _peak_rss_kib()
    fn()
    print((_peak_rss_kib() - before) / 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shape", default="140x120")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory runs")
    parser.add_argument("--memory", help=argparse.SUPPRESS)
    args = parser.parse_args()
    global SHAPE
    SHAPE = tuple(int(d) for d in args.shape.split("x"))
    if args.memory:
        _memory_child(args.memory)
        return
    runs = variants()
    times = {name: [] for name in runs}
    verdicts = {name: set() for name in runs}
    load_before = os.getloadavg()
    for _ in range(args.repeats):  # interleaved, so load changes hit every variant alike
        for name, fn in runs.items():
            start = time.perf_counter()
            verdicts[name].add(fn())
            times[name].append(time.perf_counter() - start)
    load_after = os.getloadavg()
    n = SHAPE[0] * SHAPE[1]
    one = evaluation_seconds()
    print(f"(x+1)/2, MSELoss sum, float64, {SHAPE[0]}x{SHAPE[1]}, full check, {args.repeats} repeats, "
          f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
          f"{os.cpu_count()} cores, gradlab workers {LIMITS.check_workers} (LIMITS.check_workers)")
    print("load average (1, 5, 15 min) before: " + ", ".join(f"{v:.2f}" for v in load_before)
          + "; after: " + ", ".join(f"{v:.2f}" for v in load_after))
    print(f"one perturbed row: {n * 8 / MIB:.2f} MiB")
    floor = 2 * n * one
    print(f"one evaluation of L: {one * 1e6:.1f} us; compute floor of 2N = {2 * n:,} evaluations: "
          f"{floor:.2f} s on 1 core, {floor / 2:.2f} s on 2")
    reference = statistics.median(times[REFERENCE])
    for name in runs:
        med = statistics.median(times[name])
        pairs = [t / m for t, m in zip(times[REFERENCE], times[name])]
        print(f"{name:46s} median {med:7.2f} s  verdict {sorted(verdicts[name])}  "
              f"speed-up vs gradcheck {reference / med:5.2f}x (per repeat: "
              + ", ".join(f"{p:.2f}x" for p in pairs) + ")")
    print(f"best possible speed-up vs gradcheck at the compute floor: {reference / floor:.2f}x on 1 core, "
          f"{2 * reference / floor:.2f}x on 2")
    same = len({frozenset(v) for v in verdicts.values()}) == 1
    print(f"same verdict everywhere: {same}")
    if not args.no_memory:
        for name in runs:
            print(f"peak extra memory, {name}: {peak_extra_mib(name):.0f} MiB")

if __name__ == "__main__":
    main()
