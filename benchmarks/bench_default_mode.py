"""Speed of GradLab's default mode ('blocks') against torch.autograd.gradcheck(fast_mode=True).

Over the stock-module corpus (gradlab.testing.modules, float64, parameters), prints per
module the same-run medians of: torch fast_mode, GradLab blocks, GradLab full, and the bare
minimum of a full check (2 evaluations of fn per element, no verdict machinery), with the
ratios blocks/fast_mode and full/bare. A pass's words (``result.summary``) are built when
first read, as torch's fast mode builds its message only on a failure; the ``+words`` column
times the check with its summary read too. Run: ``python -m benchmarks.bench_default_mode
[--repeat 3] [--only Linear GRU] [--clock cpu] [--threads 1]``. ``--clock cpu`` times the
process's CPU seconds (every thread's) instead of the wall clock: on a shared, loaded machine
the wall clock of a few-millisecond check is mostly waiting for a core. ``--threads 1`` runs
torch's ops on one thread for both checkers (``torch.set_num_threads``): on a loaded machine
torch's intra-op threads spin waiting for each other, which the CPU clock counts (torch's
fast mode measured 1.3 ms or 29 ms for the same Conv1d check minutes apart). A script, not a
test.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import torch
from torch.func import functional_call

import gradlab
from gradlab.testing.modules import module_corpus
from benchmarks.timing import median_seconds


def _first_tensor(out):
    return out if isinstance(out, torch.Tensor) else _first_tensor(out[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    warnings.simplefilter("ignore")
    ratios_fast, ratios_full = [], []
    print(f"{'module':26s} {'N':>5s} {'fast_mode':>9s} {'blocks':>8s} {'ratio':>6s} {'+words':>8s} {'ratio':>6s} "
          f"{'full':>8s} {'bare':>8s} {'ratio':>6s}")
    for case in module_corpus():
        if not case.has_parameters or (args.only and case.name not in args.only):
            continue
        m, inputs = case.build(torch.float64)
        names = [n for n, _ in m.named_parameters()]
        ps = tuple(p.detach().clone().requires_grad_() for p in m.parameters())
        numel = sum(p.numel() for p in ps)

        def f(*params):
            return _first_tensor(functional_call(m, dict(zip(names, params)), inputs))

        def bare():
            with torch.no_grad():
                flat = [p.detach().clone() for p in ps]
                for p in flat:
                    v = p.view(-1)
                    for i in range(v.numel()):
                        old = float(v[i])
                        v[i] = old + 1e-6
                        f(*flat).sum()
                        v[i] = old - 1e-6
                        f(*flat).sum()
                        v[i] = old

        fast = median_seconds(lambda: torch.autograd.gradcheck(f, ps, fast_mode=True, raise_exception=False), args.repeat,
                       clock)
        blocks = median_seconds(lambda: gradlab.gradcheck(m, *inputs, wrt="parameters", taylor=False), args.repeat, clock)
        worded = median_seconds(lambda: gradlab.gradcheck(m, *inputs, wrt="parameters", taylor=False).summary.text,
                         args.repeat, clock)
        full = median_seconds(lambda: gradlab.gradcheck(m, *inputs, wrt="parameters", mode="full", taylor=False),
                       args.repeat, clock)
        minimum = median_seconds(bare, args.repeat, clock)
        ratios_fast.append(blocks / fast)
        ratios_full.append(full / minimum)
        print(f"{case.name:26s} {numel:5d} {fast * 1e3:8.1f}ms {blocks * 1e3:6.1f}ms {blocks / fast:6.2f} "
              f"{worded * 1e3:6.1f}ms {worded / fast:6.2f} "
              f"{full * 1e3:6.1f}ms {minimum * 1e3:6.1f}ms {full / minimum:6.2f}", flush=True)
    print(f"median blocks/fast_mode {statistics.median(ratios_fast):.2f}, "
          f"median full/bare {statistics.median(ratios_full):.2f} over {len(ratios_fast)} modules")


if __name__ == "__main__":
    main()
