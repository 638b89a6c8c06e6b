"""False FAILs in low precision: stock torch.nn layers (correct gradients) checked in every dtype.

Every case of :mod:`gradlab.testing.modules` is checked over its parameters and over
its floating-point inputs, in the dtypes asked for, and the script prints the
verdict counts per dtype and every fail with its message; then plain functions
whose sums cancel (``F.layer_norm``, softmax). Every gradient here is right, so any
"fail" is a false alarm of the checker.

Run: ``python -m benchmarks.repro_low_precision [--mode full] [--dtypes float32 bfloat16]
[--only LayerNorm GRUCell]``. A script, not a test.
"""

from __future__ import annotations

import argparse
import collections
import time

import torch
import torch.nn.functional as F

import gradlab
from gradlab.testing.modules import module_corpus


def _check(fn, inputs, **options):
    try:
        r = gradlab.gradcheck(fn, *inputs, taylor=False, **options)
        return r.verdict, r.summary.text
    except Exception as err:  # noqa: BLE001 - a refusal or crash is a result to print
        return "error", f"{type(err).__name__}: {err}"


def _functions(dtype):
    g = torch.Generator().manual_seed(0)
    for shape in ((4, 8), (4, 100)):
        x = torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        yield f"F.layer_norm {shape}", (lambda t: F.layer_norm(t, t.shape[-1:])), (x,)
        yield f"softmax {shape}", (lambda t: torch.softmax(t, -1)), (x,)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="full")
    parser.add_argument("--dtypes", nargs="*", default=["float64", "float32", "bfloat16", "float16"])
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--quiet", action="store_true", help="counts only, no messages")
    args = parser.parse_args()
    cases = [c for c in module_corpus() if args.only is None or c.name in args.only]
    for name in args.dtypes:
        dtype = getattr(torch, name)
        counts, began = collections.Counter(), time.perf_counter()
        for case in cases:
            module, inputs = case.build(dtype)
            checks = []
            if case.has_parameters:
                checks.append(("parameters", dict(wrt="parameters")))
            if case.has_float_inputs:
                checks.append(("inputs", {}))
            for what, options in checks:
                verdict, text = _check(module, inputs, mode=args.mode, **options)
                counts[verdict] += 1
                if verdict in ("fail", "error") or (verdict != "pass" and not args.quiet and name == "float64"):
                    print(f"  {name} {case.name} over {what}: {verdict}: {text[:400]}")
        for label, fn, inputs in _functions(dtype):
            verdict, text = _check(fn, inputs, mode=args.mode)
            counts[verdict] += 1
            if verdict != "pass" and not args.quiet:
                print(f"  {name} {label}: {verdict}: {text[:300]}")
        total = sum(counts.values())
        print(f"{name}: {total} checks, {dict(counts)}, {time.perf_counter() - began:.1f} s", flush=True)


if __name__ == "__main__":
    main()
