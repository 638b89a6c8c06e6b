"""Full gradient check: GradLab's batched full mode against ``torch.autograd.gradcheck``.

Seed 001 in float64: x of shape 140x120, model (x+1)/2, MSELoss(reduction="sum").
Both do the same full check: every element, central differences, eps 1e-6,
atol 1e-5, rtol 1e-3 (gradcheck's defaults), fast_mode=False for gradcheck.
GradLab is run twice: on the per-element loss with reduction="sum" (how the
page and the CLI call it; fn broadcasts over the batch, so it is called
directly) and on the same scalar loss function gradcheck gets (through vmap).

Prints medians over interleaved repeats and the ratios; timings depend on the
machine and its load, the ratios much less. Peak extra memory is measured in a
fresh subprocess per variant, as the growth of the peak resident set size
(``resource.getrusage``), so it counts torch's CPU allocations too.

Run: ``python benchmarks/bench_check.py [--repeats 3]``. A script, not a test.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gradlab.batched import chunk_rows  # noqa: E402
from gradlab.check import gradcheck  # noqa: E402

SHAPE = (140, 120)  # seed 001; --shape changes it (e.g. 30x40, where overhead dominates)
EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3  # torch.autograd.gradcheck's defaults
MIB = 2**20


def problem():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    t = torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    per_element = lambda x: ((x + 1) / 2 - t) ** 2  # noqa: E731
    loss = lambda x: F.mse_loss((x + 1) / 2, t, reduction="sum")  # noqa: E731
    return x, per_element, loss


def variants():
    x, per_element, loss = problem()
    ours = dict(mode="full", scheme="central", eps=EPS, atol=ATOL, rtol=RTOL, taylor=False)
    return {
        "gradlab (per-element fn, reduction sum)":
            lambda: gradcheck(per_element, x, reduction="sum", **ours).passed,
        "gradlab (scalar loss fn, via vmap)":
            lambda: gradcheck(loss, x, **ours).passed,
        "torch.autograd.gradcheck (fast_mode=False)":
            lambda: torch.autograd.gradcheck(loss, (x.clone().requires_grad_(),), eps=EPS,
                                             atol=ATOL, rtol=RTOL, fast_mode=False,
                                             raise_exception=False),
    }


def peak_extra_mib(name: str) -> float:
    """Run one variant in a fresh process; its growth of peak RSS, in MiB."""
    out = subprocess.run([sys.executable, __file__, "--memory", name,
                          "--shape", "x".join(map(str, SHAPE))],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _memory_child(name: str) -> None:
    fn = variants()[name]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fn()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print((after - before) / 1024)  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shape", default="140x120")
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
    for _ in range(args.repeats):  # interleaved, so load changes hit every variant alike
        for name, fn in runs.items():
            start = time.perf_counter()
            verdicts[name].add(fn())
            times[name].append(time.perf_counter() - start)
    reference = "torch.autograd.gradcheck (fast_mode=False)"
    n = SHAPE[0] * SHAPE[1]
    rows = chunk_rows(n, 8, n)
    print(f"(x+1)/2, MSELoss sum, float64, {SHAPE[0]}x{SHAPE[1]}, full check, {args.repeats} repeats, "
          f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads")
    print(f"chunk: up to {rows} perturbed rows of {n * 8 / MIB:.2f} MiB per stencil call")
    for name in runs:
        med = statistics.median(times[name])
        ratio = statistics.median(times[reference]) / med
        pairs = [t / m for t, m in zip(times[reference], times[name])]
        print(f"{name:46s} median {med:7.2f} s  verdict {sorted(verdicts[name])}  "
              f"speed-up vs gradcheck {ratio:5.2f}x (per repeat: "
              + ", ".join(f"{p:.2f}x" for p in pairs) + ")")
    same = len({frozenset(v) for v in verdicts.values()}) == 1
    print(f"same verdict everywhere: {same}")
    for name in runs:
        print(f"peak extra memory, {name}: {peak_extra_mib(name):.0f} MiB")


if __name__ == "__main__":
    main()
