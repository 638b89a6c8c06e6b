"""The engine's representative calls, this tree against an earlier commit, timed in the same run.

A move of modules should cost nothing: this script says whether it did. It checks the
earlier revision out into a temporary ``git worktree`` (in the system's temp folder, removed
at the end) and times, in fresh Python processes that alternate old and new, the calls a
visitor's work goes through:

- ``import gradlab`` (kept light: the public names load lazily) and ``gradlab.gradcheck``
  (the check's modules and torch);
- the Explorer page's first view, the sweep behind its default widgets: its modules' import
  (torch already loaded), the first call in a process (expression, exact reference, every
  step) and a repeat (the reference cached);
- ``gradlab.gradcheck`` of a small model (Linear(8, 4) and tanh in float64, x of 3 x 8) and
  of the Grad check page's default (``run_check(CheckSettings())``: the 140 x 120 float32
  affine MSE-sum check in blocks mode; its modules' import too), first call and repeat.

Times are CPU seconds of the child process (``time.process_time``) with torch on one thread
(``torch.set_num_threads(1)``, ``OMP_NUM_THREADS=1``): on a shared machine the wall clock
measures the neighbours, while CPU time of one thread measures the work. Each child runs
one case for one tree; rounds alternate which tree goes first, after an uncounted warm-up
round (the worktree's first run compiles its bytecode). The script prints each measure's
median per tree and the ratio new / old.

Run from the repository root::

    python -m benchmarks.bench_against_commit            # the working tree against the commit
                                                         # before gradlab/sweep/ appeared
    python -m benchmarks.bench_against_commit HEAD~5 --new HEAD --runs 9

``--new REV`` measures a committed revision instead of the working tree (another worktree),
so uncommitted edits do not enter the numbers. A script, not a test: it prints numbers and
asserts none.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Measured in each child: one case, one tree. The import paths that moved are tried new
#: first, then as they were before the house move, so any commit of either shape runs.
CHILD = r'''
import json, statistics, sys, time

case, repeats, tree = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = {}
start = time.process_time()
import gradlab
out["import gradlab"] = time.process_time() - start
if not gradlab.__file__.startswith(tree):
    sys.exit(f"gradlab came from {gradlab.__file__}, not from {tree}")


def timed(name, call):
    start = time.process_time()
    call()
    out[name + " (first call)"] = time.process_time() - start
    times = []
    for _ in range(repeats):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    out[name + " (repeat)"] = statistics.median(times)


if case == "import":
    start = time.process_time()
    gradlab.gradcheck
    out["gradlab.gradcheck (its import)"] = time.process_time() - start
else:
    import torch

    torch.set_num_threads(1)
    if case == "sweep":
        start = time.process_time()
        try:
            from gradlab.labs.explorer.first_view import default_sweep_settings
            from gradlab.step_sweep.engine import run_sweep
        except ImportError:
            try:  # before the Explorer lab: its sweep was the package gradlab/sweep/
                from gradlab.sweep.engine import run_sweep
                from gradlab.sweep.first_view import default_sweep_settings
            except ImportError:  # before gradlab/sweep/
                from gradlab.teaching.explorer_controls import default_sweep_settings
                from gradlab.error_sweep import run_sweep
        out["Explorer's default sweep (its imports)"] = time.process_time() - start
        settings = default_sweep_settings()
        timed("Explorer's default sweep", lambda: run_sweep(settings))
    elif case == "small model":
        gen = torch.Generator().manual_seed(0)
        layer = torch.nn.Linear(8, 4).double()
        x = torch.randn(3, 8, generator=gen, dtype=torch.float64)
        timed("gradcheck, Linear+tanh float64", lambda: gradlab.gradcheck(lambda v: torch.tanh(layer(v)), x))
    elif case == "page check":
        start = time.process_time()
        from gradlab.check import CheckSettings, run_check

        out["Grad check page's default (its imports)"] = time.process_time() - start
        timed("Grad check page's default", lambda: run_check(CheckSettings()))
    else:
        sys.exit(f"no case {case!r}")
print(json.dumps(out))
'''

CASES = ("import", "sweep", "small model", "page check")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def before_the_house_move() -> str:
    """The commit before gradlab/sweep/ first appeared (the first step of the house move)."""
    first = _git("log", "--reverse", "--format=%H", "--", "gradlab/sweep").splitlines()
    if not first:
        sys.exit("gradlab/sweep/ is in no commit; name a revision.")
    return _git("rev-parse", f"{first[0]}^")


def _run_child(script: Path, tree: Path, case: str, repeats: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(script), case, str(repeats), str(tree)], cwd=tree, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{case!r} in {tree} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(old: Path, new: Path, runs: int, repeats: int, cases=CASES) -> dict[str, dict[str, list[float]]]:
    """measure -> {"old": [...], "new": [...]}: CPU seconds, rounds alternating which tree goes first."""
    found: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="gradlab-bench-child-") as folder:
        script = Path(folder) / "child.py"
        script.write_text(CHILD, encoding="utf-8")
        for case in cases:  # warm-up: bytecode compiled, files in the page cache
            _run_child(script, old, case, 1), _run_child(script, new, case, 1)
        for run in range(runs):
            order = (("old", old), ("new", new)) if run % 2 == 0 else (("new", new), ("old", old))
            for case in cases:
                for side, tree in order:
                    for name, seconds in _run_child(script, tree, case, repeats).items():
                        if case != "import" and name == "import gradlab":
                            continue  # counted once, in the import case
                        found.setdefault(name, {"old": [], "new": []})[side].append(seconds)
            print(f"  round {run + 1}/{runs} done", file=sys.stderr)
    return found


def report(found: dict[str, dict[str, list[float]]]) -> str:
    lines = [f"{'CPU seconds, median':<46} {'old':>10} {'new':>10} {'new/old':>8}"]
    for name, sides in found.items():
        old, new = statistics.median(sides["old"]), statistics.median(sides["new"])
        lines.append(f"{name:<46} {old:>10.4f} {new:>10.4f} {new / old if old else float('nan'):>8.2f}")
    return "\n".join(lines)


def _worktree(rev: str, parent: Path) -> Path:
    path = Path(tempfile.mkdtemp(prefix="gradlab-bench-", dir=parent))
    _git("worktree", "add", "--detach", str(path), rev)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", nargs="?", help="the old revision (default: the commit before gradlab/sweep/)")
    parser.add_argument("--new", help="the new revision (default: the working tree as it is)")
    parser.add_argument("--runs", type=int, default=7, help="processes per case and tree (default 7)")
    parser.add_argument("--repeats", type=int, default=5, help="repeats of a call within a process (default 5)")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    args = parser.parse_args(argv)
    old_rev = _git("rev-parse", args.rev) if args.rev else before_the_house_move()
    new_rev = _git("rev-parse", args.new) if args.new else None
    made = []
    # A SIGTERM (or a Ctrl-C of a background run, where SIGINT is ignored) still removes the worktrees.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    try:
        old = _worktree(old_rev, Path(tempfile.gettempdir()))
        made.append(old)
        new = ROOT if new_rev is None else _worktree(new_rev, Path(tempfile.gettempdir()))
        if new_rev is not None:
            made.append(new)
        shown = new_rev[:10] if new_rev else f"the working tree ({_git('rev-parse', '--short', 'HEAD')} and its edits)"
        print(f"old {old_rev[:10]}, new {shown}; {args.runs} alternating processes per case and tree, "
              f"{args.repeats} repeats in each; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
        found = measure(old, new, args.runs, args.repeats, args.cases)
        print(report(found))
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        for path in made:
            subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, capture_output=True)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
