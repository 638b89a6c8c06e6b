"""The layer-by-layer check against one whole-model check, same model, same run.

For models of the layer vocabulary (six layers, widths 8 to 64, float64 and float32),
prints the CPU seconds (median of ``--repeat``, torch on one thread) of
``gradlab.check_layers(model, x)`` (default mode per module), of the whole model's
parameters checked at once in the default mode (``gradlab.gradcheck(model, x,
wrt="parameters")``) and in full mode, and the ratios. The layer check runs one or two
checks per module on that module alone, so its cost grows with the number of modules, not
with the depth of the graph each evaluation runs through.

Run: ``python -m benchmarks.bench_layers [--repeat 5]``. A script, not a test.
"""

from __future__ import annotations

import argparse
import time
import warnings

import torch

import gradlab
from gradlab.layers.vocabulary import build_model
from benchmarks.timing import median_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    print(f"{'model':54s} {'dtype':8s} {'params':>6s} {'layers':>8s} {'whole':>8s} {'ratio':>6s} "
          f"{'full':>8s} {'ratio':>6s}")
    for width in (8, 32, 64):
        stack = f"linear:{width}, tanh, layernorm, linear:{width}, gelu, linear:1"
        for dtype in ("float64", "float32"):
            model = build_model(stack, (8, 16), dtype, seed=0)
            x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1)).to(getattr(torch, dtype))
            params = sum(p.numel() for p in model.parameters())
            cpu = time.process_time
            layers = median_seconds(lambda: gradlab.check_layers(model, x), args.repeat, cpu)
            whole = median_seconds(lambda: gradlab.gradcheck(model, x, wrt="parameters"), args.repeat, cpu)
            full = median_seconds(lambda: gradlab.gradcheck(model, x, wrt="parameters", mode="full"),
                                  max(1, args.repeat // 2), cpu)
            print(f"{stack:54s} {dtype:8s} {params:6d} {layers * 1e3:6.0f}ms {whole * 1e3:6.0f}ms "
                  f"{layers / whole:6.2f} {full * 1e3:6.0f}ms {layers / full:6.2f}", flush=True)


if __name__ == "__main__":
    main()
