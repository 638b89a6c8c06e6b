"""What a Grad check or Round-off rerun computes, the current way against the previous one.

Two ratios, each measured in the same run with interleaved repeats (medians):

1. **Sending a figure.** The previous path built a ``go.Figure`` and let
   ``st.plotly_chart`` serialise it: ``to_dict()`` (a deep copy) once there and
   once more inside ``plotly.io.to_json``. The current path
   (:func:`gradlab.ui.figures.prepare_figure`) builds the FigureSpec only and
   makes its dict once. Both then encode the JSON. Per page figure, on the
   data the page draws: the Round-off lab's three (its default 10,000 points)
   and the Grad check eps sweep.
2. **The eps sweep of the Grad check page** (the float32 MSE-sum check question's 140x120
   affine model, 4 elements, 31 steps, central): one ``reduction_estimates`` call that runs fn
   once for sum, mean and none, against the previous three ``element_estimates``
   calls, one per reduction (fn run three times).

Run: ``python -m benchmarks.bench_page_work [--repeats 15]``. A script, not a test:
it prints numbers, and the ratios mean most on a quiet machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import plotly.io as pio
import torch

from gradlab.labs.roundoff import figures as roundoff_figures
from gradlab.check import (REDUCTIONS, build_model_loss, CheckSettings, element_estimates, eps_grid,
                           reduction_estimates, reduction_sweep, sample_indices)
from gradlab.labs.gradcheck.figures import eps_sweep_figure
from gradlab.labs.roundoff.engine import RoundoffSettings, compare, ulp_histogram
from gradlab.ui.figures import prepare_figure


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def _interleaved(a, b, repeats: int) -> tuple[float, float]:
    """Medians (ms) of a and b, alternating so a busy spell hits both alike."""
    ta, tb = [], []
    a(), b()
    for _ in range(repeats):
        for fn, out in ((a, ta), (b, tb)):
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return statistics.median(ta) * 1e3, statistics.median(tb) * 1e3


def _previous_send(build, *args):
    fig = build(*args)
    fig.to_dict()  # st.plotly_chart's return_figure_from_figure_or_data
    return pio.to_json(fig, validate=False)  # another to_dict inside


def _current_send(build, *args):
    return pio.to_json(prepare_figure(build, *args), validate=False)


def figures(repeats: int) -> None:
    r = compare(RoundoffSettings())
    table, a, b = r.table, r.label_a, r.label_b
    sweep = reduction_sweep(CheckSettings(shape=(140, 120), samples=4, dtype="float32"))
    cases = {
        "Round-off ulp bars": (roundoff_figures.ulp_distance_bars, ulp_histogram(table), a, b),
        "Round-off error histogram": (roundoff_figures.error_histogram, table, a, b),
        f"Round-off error by x ({len(table):,} points)": (roundoff_figures.error_by_x, table, a, b),
        "Grad check eps sweep": (eps_sweep_figure, sweep, 1e-3),
    }
    print("Sending a figure to the page: build + serialise, median ms")
    print(f"  {'figure':34s} {'previous':>9s} {'current':>9s} {'speed-up':>9s}")
    total_prev = total_cur = 0.0
    for name, (build, *args) in cases.items():
        prev, cur = _interleaved(lambda: _previous_send(build, *args),
                                 lambda: _current_send(build, *args), repeats)
        total_prev, total_cur = total_prev + prev, total_cur + cur
        print(f"  {name:34s} {prev:9.1f} {cur:9.1f} {prev / cur:8.1f}x")
    print(f"  {'all four':34s} {total_prev:9.1f} {total_cur:9.1f} {total_prev / total_cur:8.1f}x")


def sweep(repeats: int) -> None:
    torch.set_num_threads(1)  # as on the server
    settings = CheckSettings(shape=(140, 120), samples=4, dtype="float32", scheme="central")
    problem = build_model_loss(settings)
    eps = eps_grid()
    elements = sample_indices(problem.x.numel(), settings.samples, settings.seed)
    index = elements.repeat_interleave(len(eps))
    steps = torch.as_tensor(np.tile(eps, len(elements)))
    common = dict(scheme=settings.scheme, seed=settings.seed)

    def per_reduction():
        return [element_estimates(problem.fn, problem.x, index, steps, reduction=r, **common)
                for r in REDUCTIONS]

    def shared():
        return reduction_estimates(problem.fn, problem.x, index, steps, reductions=REDUCTIONS, **common)

    prev, cur = _interleaved(per_reduction, shared, repeats)
    print(f"\nGrad check eps sweep ({len(index)} element-steps x 3 reductions, float32, central), median ms")
    print(f"  one element_estimates per reduction: {prev:7.1f}")
    print(f"  reduction_estimates (fn once):       {cur:7.1f}   {prev / cur:.1f}x")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=15)
    args = p.parse_args()
    figures(args.repeats)
    sweep(args.repeats)


if __name__ == "__main__":
    main()
