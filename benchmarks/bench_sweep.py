"""How much does vectorising the error-vs-eps sweep over eps buy, and how long is a warm sweep?

1. The estimates of a full sweep (4 dtypes x 6 schemes x 61 steps) two ways:
   the engine's ``estimates_by_scheme`` (one torch call per dtype for every real
   stencil point and step, plus one complex call), and a naive Python loop that,
   for each dtype, scheme and eps, builds scalar tensors, evaluates the stencil
   points one at a time with the same Expression and combines them in float64.
   The two must give the same numbers (checked; the largest difference is
   printed, relative to the size of the sum it came from); the medians and their
   ratio are printed. Target: ratio >= 20x.
2. A full warm ``run_sweep`` (4 dtypes x 6 schemes x 61 steps, exact reference
   included, caches warm), as the Explorer page and the CLI call it.
   Target: median < 20 ms.

This prints; it does not assert timings (a benchmark, not a timed test).

    python -m benchmarks.bench_sweep
    python -m benchmarks.bench_sweep --expression "1/x" --at 0.3 --repeats 9
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import torch

from gradlab.numerics.expressions import parse
from gradlab.numerics.dtypes import DTYPE_NAMES, facts
from gradlab.numerics.schemes import SCHEME_NAMES, SCHEMES, estimates_by_scheme, not_applicable_reason
from gradlab.step_sweep.engine import SweepSettings, run_sweep
from benchmarks.timing import median_seconds


def _usable(expr, dtype):
    return [s for s in SCHEME_NAMES if not_applicable_reason(s, dtype, expr) is None]


def vectorised(expr, x, eps):
    return {d: estimates_by_scheme(expr, float(torch.tensor(x, dtype=facts(d).torch_dtype).double()), eps,
                                   _usable(expr, d), d)
            for d in DTYPE_NAMES}


def naive(expr, x, eps):
    """Scalar tensors, one stencil point at a time; returns (estimates, scales) per dtype and scheme."""
    out, scales = {}, {}
    for d in DTYPE_NAMES:
        info = facts(d)
        xd = torch.tensor(x, dtype=torch.float64).to(info.torch_dtype)
        for name in _usable(expr, d):
            s = SCHEMES[name]
            est, scale = np.empty(len(eps)), np.empty(len(eps))
            for i, h in enumerate(eps):
                h = float(h)
                with torch.no_grad():
                    if s.complex_step:
                        z = torch.complex(xd, torch.tensor(h, dtype=torch.float64).to(info.torch_dtype))
                        est[i] = float(expr(z.to(info.complex_partner)).imag.double()) / h
                        scale[i] = abs(est[i])
                        continue
                    total, size = 0.0, 0.0
                    for c, w in zip(s.offsets, s.weights):
                        point = xd + torch.tensor(c * h, dtype=torch.float64).to(info.torch_dtype)
                        value = float(expr(point).double())
                        total += w * value
                        size += abs(w * value)
                est[i], scale[i] = total / h, size / h
            out[(d, name)], scales[(d, name)] = est, scale
    return out, scales


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--expression", default="exp(x)/sqrt(sin(x)**3 + cos(x)**3)")
    parser.add_argument("--at", type=float, default=1.5)
    parser.add_argument("--points", type=int, default=61)
    parser.add_argument("--repeats", type=int, default=5, help="repeats of the naive loop (the slow one)")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)  # like one Streamlit session on a shared box
    expr = parse(args.expression)
    eps = np.logspace(-16, 0, args.points)
    print(f"expression {args.expression!r} at x = {args.at}, {args.points} steps, dtypes {', '.join(DTYPE_NAMES)}")

    # ---- same numbers
    fast = vectorised(expr, args.at, eps)
    slow, scales = naive(expr, args.at, eps)
    worst, where = 0.0, None
    for (d, name), est in slow.items():
        got = fast[d][name]
        both_nan = np.isnan(got) & np.isnan(est)
        same_inf = np.isinf(got) & (got == est)
        diff = np.where(both_nan | same_inf, 0.0, np.abs(got - est))
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = np.where(diff == 0, 0.0, diff / scales[(d, name)]) / facts(d).eps
        # torch's batched and 0-d kernels may differ in the last bit of a value (complex64
        # z**3 does, by up to 2 ulps of Im f), and the engine sums in another order: allow 4 eps
        assert np.all(rel <= 4), (d, name, np.nanmax(rel))
        if np.nanmax(rel) > worst:
            worst, where = float(np.nanmax(rel)), (d, name)
    n_estimates = sum(len(v) for v in slow.values())
    identical = sum(int(np.sum((fast[d][n] == v) | (np.isnan(fast[d][n]) & np.isnan(v)))) for (d, n), v in slow.items())
    print(f"same numbers: {n_estimates} estimates agree ({identical} bit for bit); largest difference "
          f"{worst:.2f} eps of the dtype, relative to the stencil sum ({where[0]} {where[1]})" if worst else
          f"same numbers: all {n_estimates} estimates identical bit for bit")

    # ---- timing: vectorised vs naive
    vectorised(expr, args.at, eps)  # warm
    t_fast = median_seconds(lambda: vectorised(expr, args.at, eps), max(25, 5 * args.repeats))
    t_slow = median_seconds(lambda: naive(expr, args.at, eps), args.repeats)
    print(f"estimates, vectorised over eps: median {t_fast * 1e3:8.2f} ms")
    print(f"estimates, naive scalar loop:   median {t_slow * 1e3:8.2f} ms")
    print(f"ratio: {t_slow / t_fast:.0f}x (target >= 20x)")

    # ---- a full warm sweep, reference included
    settings = SweepSettings(args.expression, args.at, DTYPE_NAMES, SCHEME_NAMES, points=args.points)
    result = run_sweep(settings)  # warm: sympy derivatives and the 50-digit reference are cached
    t_sweep = median_seconds(lambda: run_sweep(settings), 30)
    print(f"full warm run_sweep ({len(DTYPE_NAMES)} dtypes x {len(SCHEME_NAMES)} schemes x {args.points} steps, "
          f"{len(result.table)} rows): median {t_sweep * 1e3:.2f} ms (target < 20 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
