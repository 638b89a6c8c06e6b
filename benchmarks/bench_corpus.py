"""GradLab's full check against ``torch.autograd.gradcheck`` on the corpus of correct gradients.

Every case of :mod:`gradlab.testing.corpus` (139 real PyTorch functions, float64
inputs) is checked in full mode by both, in the same run, case by case and
alternating which goes first. Prints the total time of each, the ratio, and every
case where the two verdicts differ, with GradLab's headline for it (a correct
gradient must never be GradLab's "fail": the corpus is correct by construction,
and tests/test_corpus.py holds every case to torch's gradcheck).

torch.autograd.gradcheck runs with its defaults (central differences, eps 1e-6,
atol 1e-5, rtol 1e-3, fast_mode=False); GradLab with its own defaults (its step
and tolerances from the dtype's row). Target: GradLab at least 10x
faster in total, no correct gradient failed.

Run: ``python -m benchmarks.bench_corpus [--repeats 3] [--clock cpu] [--only NAME ...]``. A script, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import gradlab
from gradlab.testing.corpus import Case, corpus


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


def _bare_minimum(case: Case, args: tuple) -> None:
    """The least any checker with GradLab's rules must do: two backward passes (the
    nondeterminism rule) and one batch of central differences, vmapped (a loop where vmap
    fails), with no error bound, no second step, no table. Its total bounds the ratio."""
    tensors = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]

    def fn(*ts):
        it = iter(ts)
        out = case.fn(*(next(it) if isinstance(a, torch.Tensor) and a.requires_grad else a for a in args))
        return out.sum() if isinstance(out, torch.Tensor) else sum(o.sum() for o in out)

    y = fn(*tensors)
    torch.autograd.grad(y, tensors, retain_graph=True)
    torch.autograd.grad(y, tensors)
    flat = torch.cat([t.detach().reshape(-1) for t in tensors])
    n, h = flat.numel(), 1e-6
    rows = flat.repeat(2 * n, 1)
    rows[torch.arange(n), torch.arange(n)] += h
    rows[n + torch.arange(n), torch.arange(n)] -= h
    sizes = [t.numel() for t in tensors]

    def one(row):
        return fn(*(p.view(t.shape) for p, t in zip(torch.split(row, sizes), tensors)))

    try:
        out = torch.vmap(one)(rows)
    except Exception:  # noqa: BLE001 - not vmappable: the loop is what remains
        out = torch.stack([one(r) for r in rows])
    (out[:n] - out[n:]) / (2 * h)


def _typical_cases() -> list[Case]:
    """A few corpus functions at the sizes of torch's own gradcheck example (a 20x20 input
    and a 30x20 weight): the per-element calls of torch's check grow with the input, the
    batched evaluation of GradLab's much less."""
    import math

    import torch.nn.functional as F

    def t(g, *shape, low=-1.0, high=1.0):
        return (torch.rand(*shape, generator=g, dtype=torch.float64) * (high - low) + low).requires_grad_()

    def spd(g, n):
        a = torch.randn(n, n, generator=g, dtype=torch.float64)
        return (a @ a.T + n * torch.eye(n, dtype=torch.float64)).requires_grad_()

    def attention(q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1) @ v

    return [
        Case("linear 20x20 @ 30x20 (torch's example)", "linalg", F.linear, lambda g: (t(g, 20, 20), t(g, 30, 20))),
        Case("sin 20x20", "elementwise", torch.sin, lambda g: (t(g, 20, 20),)),
        Case("cholesky 8x8", "linalg", lambda a: torch.linalg.cholesky((a + a.T) / 2), lambda g: (spd(g, 8),)),
        Case("conv2d 1x3x8x8, 4x3x3x3", "conv", lambda x, w: F.conv2d(x, w, padding=1),
             lambda g: (t(g, 1, 3, 8, 8), t(g, 4, 3, 3, 3))),
        Case("layer_norm 8x16", "norm", lambda x: F.layer_norm(x, (16,)), lambda g: (t(g, 8, 16),)),
        Case("attention 8x16", "attention", attention, lambda g: (t(g, 1, 8, 16), t(g, 1, 8, 16), t(g, 1, 8, 16))),
        Case("mse_mean 20x20", "loss", F.mse_loss, lambda g: (t(g, 20, 20), torch.rand(20, 20, generator=g,
                                                                                      dtype=torch.float64))),
    ]


def _typical_sizes(repeats: int) -> None:
    print("\nAt the sizes of torch's gradcheck example (not the corpus: a size sweep):")
    total_ours = total_theirs = 0.0
    for case in _typical_cases():
        ours = statistics.median(_timed(lambda: _gradlab_check(case, case.inputs()))[0] for _ in range(repeats))
        theirs = statistics.median(_timed(lambda: _torch_check(case, case.inputs()))[0] for _ in range(repeats))
        verdict, peer = _gradlab_check(case, case.inputs())[0], _torch_check(case, case.inputs())
        total_ours, total_theirs = total_ours + ours, total_theirs + theirs
        print(f"  {case.name:40s} GradLab {ours * 1e3:7.1f} ms ({verdict})  torch {theirs * 1e3:7.1f} ms ({peer})"
              f"  ratio {theirs / ours:5.1f}x")
    print(f"  total: GradLab {total_ours:.2f} s, torch {total_theirs:.2f} s, ratio {total_theirs / total_ours:.1f}x")


#: The clock the timings read: wall time, or with ``--clock cpu`` this process's CPU time
#: (``time.process_time``, every thread's: torch's own threads in its check too), which a
#: loaded machine's other jobs do not inflate by preempting the run.
_clock = time.perf_counter


def _timed(call) -> tuple[float, object]:
    start = _clock()
    out = call()
    return _clock() - start, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="runs over the corpus (medians per case)")
    parser.add_argument("--only", nargs="*", help="case names to run (default: all)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time, or the process's CPU time (steadier on a loaded machine; it leaves "
                             "out torch's waits for its threads, so the total ratio is no measure across clocks)")
    args = parser.parse_args(argv)
    global _clock
    _clock = time.process_time if args.clock == "cpu" else time.perf_counter
    cases = [c for c in corpus() if not args.only or c.name in args.only]
    ours, theirs, floor, differing = [], [], [], []
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
        floor.append(statistics.median(_timed(lambda: _bare_minimum(case, case.inputs()))[0]
                                       for _ in range(max(3, args.repeats))))
        ours.append(statistics.median(t_ours))
        theirs.append(statistics.median(t_theirs))
        if verdict != peer:
            differing.append((case.name, verdict, peer, headline))
    total_ours, total_theirs = sum(ours), sum(theirs)
    print(f"cases: {len(cases)}; {args.clock} clock; load average "
          f"{' '.join(f'{v:.1f}' for v in __import__('os').getloadavg())}")
    print(f"GradLab full check:        {total_ours:8.2f} s total (median per case {statistics.median(ours) * 1e3:.1f} ms)")
    print(f"torch.autograd.gradcheck:  {total_theirs:8.2f} s total (median per case {statistics.median(theirs) * 1e3:.1f} ms)")
    print(f"ratio (torch / GradLab):   {total_theirs / total_ours:8.2f}x   target >= 10x")
    print(f"bare minimum (2 backward + one vmapped batch of central differences): {sum(floor):.2f} s;"
          f" torch / bare minimum = {total_theirs / sum(floor):.1f}x, the most any check with GradLab's rules"
          f" could reach on this corpus")
    slower = sorted(((o / t, c.name) for o, t, c in zip(ours, theirs, cases) if o > t), reverse=True)
    print(f"cases where GradLab's full check is slower than torch's: {len(slower)} of {len(cases)} (target 0)"
          + (": " + ", ".join(f"{name} {ratio:.2f}x" for ratio, name in slower[:8]) if slower else ""))
    print(f"verdicts that differ: {len(differing)}")
    for name, verdict, peer, headline in differing:
        print(f"  {name}: GradLab {verdict}, torch {peer} -- {headline}")
    failed = [d for d in differing if d[1] == "fail"]
    print(f"correct gradients GradLab failed: {len(failed)} (target 0)")
    if not args.only:
        _typical_sizes(max(1, args.repeats))


if __name__ == "__main__":
    main()
