"""GradLab's full check against ``torch.autograd.gradcheck`` on the corpus of correct gradients.

Every case of :mod:`gradlab.testing.corpus` (139 real PyTorch functions, float64
inputs) is checked in full mode by both, in the same run, case by case and
alternating which goes first. Prints the total time of each, the ratio, and every
case where the two verdicts differ, with GradLab's headline for it (a correct
gradient must never be GradLab's "fail": the corpus is correct by construction,
and tests/test_corpus.py holds every case to torch's gradcheck).

torch.autograd.gradcheck runs with its defaults (central differences, eps 1e-6,
atol 1e-5, rtol 1e-3, fast_mode=False); GradLab with its own defaults (its step
and tolerances from the dtype's row). Target (issue 14): GradLab at least 10x
faster in total, no correct gradient failed.

Run: ``python benchmarks/bench_corpus.py [--repeats 3] [--only NAME ...]``. A script, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import gradlab  # noqa: E402
from gradlab.testing.corpus import Case, corpus  # noqa: E402


def _torch_check(case: Case, args: tuple) -> str:
    tensors = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]

    def fn(*ts):
        it = iter(ts)
        return case.fn(*(next(it) if isinstance(a, torch.Tensor) and a.requires_grad else a for a in args))

    try:
        return "pass" if torch.autograd.gradcheck(fn, tuple(tensors), raise_exception=False) else "fail"
    except Exception as err:  # noqa: BLE001 - a peer's crash is a result to print
        return f"error: {type(err).__name__}"


def _gradlab_check(case: Case, args: tuple) -> tuple[str, str]:
    try:
        result = gradlab.gradcheck(case.fn, *args, mode="full")
    except Exception as err:  # noqa: BLE001
        return f"error: {type(err).__name__}", str(err)[:120]
    return result.verdict, result.summary.diagnosis.headline


def _timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="runs over the corpus (medians per case)")
    parser.add_argument("--only", nargs="*", help="case names to run (default: all)")
    args = parser.parse_args(argv)
    cases = [c for c in corpus() if not args.only or c.name in args.only]
    ours, theirs, differing = [], [], []
    for n, case in enumerate(cases):
        t_ours, t_theirs = [], []
        for r in range(args.repeats):
            order = (0, 1) if (n + r) % 2 == 0 else (1, 0)  # alternate who runs first
            for who in order:
                inputs = case.inputs()
                if who == 0:
                    t, (verdict, headline) = _timed(lambda: _gradlab_check(case, inputs))
                    t_ours.append(t)
                else:
                    t, peer = _timed(lambda: _torch_check(case, inputs))
                    t_theirs.append(t)
        ours.append(statistics.median(t_ours))
        theirs.append(statistics.median(t_theirs))
        if verdict != peer:
            differing.append((case.name, verdict, peer, headline))
    total_ours, total_theirs = sum(ours), sum(theirs)
    print(f"cases: {len(cases)}; load average {' '.join(f'{v:.1f}' for v in __import__('os').getloadavg())}")
    print(f"GradLab full check:        {total_ours:8.2f} s total (median per case {statistics.median(ours) * 1e3:.1f} ms)")
    print(f"torch.autograd.gradcheck:  {total_theirs:8.2f} s total (median per case {statistics.median(theirs) * 1e3:.1f} ms)")
    print(f"ratio (torch / GradLab):   {total_theirs / total_ours:8.2f}x   target >= 10x")
    print(f"verdicts that differ: {len(differing)}")
    for name, verdict, peer, headline in differing:
        print(f"  {name}: GradLab {verdict}, torch {peer} -- {headline}")
    failed = [d for d in differing if d[1] == "fail"]
    print(f"correct gradients GradLab failed: {len(failed)} (target 0)")


if __name__ == "__main__":
    main()
