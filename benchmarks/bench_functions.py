"""Issue 35: GradLab's default check against torch.autograd.gradcheck on hand-written autograd.Functions.

Over the corpus of :mod:`gradlab.testing.functions` (20 correct Functions, 31 buggy twins), in
float64, float32 and bfloat16, prints per checker:

- false alarms: correct Functions the check fails (must be 0);
- catch rate: buggy ones it fails, over the bugs of >= 10 tolerances in that dtype
  (:func:`gradlab.testing.functions_scoring.bug_size`; issue 35's target: >= 95 % in float64 and
  float32, >= 90 % in bfloat16), and for GradLab how many of those name an element that really
  is wrong (torch names an input's whole Jacobian, not an element: "-");
- the median CPU time per case (``time.process_time``, torch on one thread, same run, the
  checkers alternating who goes first) and the ratio GradLab / torch.

Checkers: GradLab's default (``gradlab.gradcheck(fn, *inputs)``: blocks mode, the dtype's
tolerances); torch.autograd.gradcheck at its defaults (fast_mode=False, eps 1e-6, atol 1e-5,
rtol 1e-3) and with fast_mode=True. torch's check wants float64; in float32 and bfloat16 it is
run as a user would, on the inputs as they are, at atol = rtol = 1e-2 (eps stays 1e-6 unless
``--torch-eps``). Then check_layers on the causal GPT and the CNN of
:mod:`gradlab.testing.functions_models`, clean and with a bug planted at each place: the modules
it names, and its CPU time.

Run: ``python -m benchmarks.bench_functions [--repeat 3] [--dtypes float64 float32 bfloat16]
[--torch-eps 1e-3] [--no-layers]``. A script, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
import warnings
from pathlib import Path

import torch

import gradlab
from gradlab.testing.functions import function_corpus
from gradlab.testing.functions_models import (CNN_PLACES, GPT_PLACES, CausalGPT, SmallCNN, cnn_input,
                                              gpt_tokens)
from gradlab.testing.functions_scoring import bug_size, score

CHECKERS = ("GradLab default", "torch default", "torch fast_mode")


def _gradlab(case, inputs):
    r = gradlab.gradcheck(case.fn, *inputs)
    return r.verdict == "fail", score(case, inputs, r).named_is_wrong


def _torch(case, inputs, fast: bool, eps: float | None):
    low = inputs[0].dtype != torch.float64
    options = dict(atol=1e-2, rtol=1e-2) if low else {}
    if eps is not None and low:
        options["eps"] = eps
    try:
        ok = torch.autograd.gradcheck(case.fn, inputs, raise_exception=False, fast_mode=fast, **options)
    except Exception:  # noqa: BLE001 - torch refusing a case is its answer: not a pass
        ok = False
    return not ok, None


def _timed(call):
    start = time.process_time()
    out = call()
    return time.process_time() - start, out


def _run(case, dtype, who: str, eps):
    inputs = case.inputs(dtype)
    if who == CHECKERS[0]:
        return _timed(lambda: _gradlab(case, inputs))
    return _timed(lambda: _torch(case, inputs, who == CHECKERS[2], eps))


def _median(values) -> float:
    """The median, NaN for none (a dtype in which no buggy case is timed)."""
    return statistics.median(values) if values else float("nan")


def _dtype_table(dtype: torch.dtype, repeat: int, eps) -> None:
    cases = function_corpus()
    correct = [c for c in cases if c.correct]
    name = str(dtype).removeprefix("torch.")
    counted = [c for c in cases if not c.correct and name in c.wrong_in and bug_size(c, dtype) >= 10]
    left_out = [c.name for c in cases if not c.correct and c not in counted]
    times = {who: [] for who in CHECKERS}
    answers = {who: {} for who in CHECKERS}
    for n, case in enumerate(correct + counted):
        per = {who: [] for who in CHECKERS}
        for r in range(repeat):
            order = CHECKERS if (n + r) % 2 == 0 else CHECKERS[::-1]
            for who in order:
                t, answer = _run(case, dtype, who, eps)
                per[who].append(t)
                answers[who][case.name] = answer
        for who in CHECKERS:
            times[who].append(statistics.median(per[who]))
    print(f"\n{name}: {len(correct)} correct, {len(counted)} bugs of >= 10 {name} tolerances"
          + (f" (not counted, right here or under 10 tolerances: {', '.join(left_out)})" if left_out else ""))
    print(f"  {'checker':16s} {'false alarms':>12s} {'caught':>9s} {'rate':>6s} {'named wrong':>11s} "
          f"{'median CPU':>10s} {'correct':>8s} {'buggy':>8s} {'GradLab/it':>10s}")
    ours = statistics.median(times[CHECKERS[0]])
    for who in CHECKERS:
        false_alarms = [c.name for c in correct if answers[who][c.name][0]]
        caught = [c.name for c in counted if answers[who][c.name][0]]
        named = "-" if who != CHECKERS[0] else str(sum(bool(answers[who][c][1]) for c in caught))
        median = statistics.median(times[who])
        right, wrong = (statistics.median(times[who][:len(correct)]), _median(times[who][len(correct):]))
        rate = f"{len(caught) / len(counted):6.0%}" if counted else f"{'-':>6s}"  # float16: no bug counts
        print(f"  {who:16s} {len(false_alarms):12d} {len(caught):4d}/{len(counted):<4d} "
              f"{rate} {named:>11s} {median * 1e3:8.1f}ms {right * 1e3:6.1f}ms "
              f"{wrong * 1e3:6.1f}ms {ours / median:10.2f}")
        missed = sorted(c.name for c in counted if c.name not in caught)
        if missed:
            print(f"    missed: {', '.join(missed)}")
        if false_alarms:
            print(f"    false alarms: {', '.join(false_alarms)}")


def _layers(dtype: torch.dtype) -> None:
    name = str(dtype).removeprefix("torch.")
    print(f"\ncheck_layers, {name} (default options): the modules it names")
    for model, inputs, places in ((CausalGPT, gpt_tokens(), GPT_PLACES), (SmallCNN, cnn_input(), CNN_PLACES)):
        x = inputs.to(dtype) if inputs.is_floating_point() else inputs
        for plant in (None, *places):
            seconds, r = _timed(lambda: gradlab.check_layers(model(plant=plant).to(dtype), x))
            expected = (plant,) if plant else ()
            mark = "right" if r.failing_modules == expected else "WRONG"
            print(f"  {model.__name__:9s} plant {plant or '-':17s} names {', '.join(r.failing_modules) or '-':17s}"
                  f" {mark}  ({r.verdict}, {seconds:.2f} s CPU)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dtypes", nargs="*", default=["float64", "float32", "bfloat16"])
    parser.add_argument("--torch-eps", type=float, default=None, help="torch's eps in float32/bfloat16")
    parser.add_argument("--no-layers", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # torch's "not double precision" warning, once per check
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    print(f"commit {commit}{' (+ uncommitted changes in the tree)' if dirty else ''}; torch {torch.__version__}; "
          f"one thread; load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}; repeat {args.repeat}")
    for name in args.dtypes:
        _dtype_table(getattr(torch, name), args.repeat, args.torch_eps)
    if not args.no_layers:
        for name in ("float64", "float32"):
            _layers(getattr(torch, name))


if __name__ == "__main__":
    main()
