"""Full and default checks across sizes: ratios to the bare minimum and to torch's gradcheck.

For each case (the grad-check question's (x+1)/2 MSE-sum at 140x120 in float64 and float32,
``tanh(x @ W).sum()`` over a weight W of 64x64 to 256x256, and the stock corpus's CNN over its
parameters), prints the same-run CPU seconds (``time.process_time``, torch on one thread) of:

- ``bare``: the least a full check must evaluate, a plain Python loop that moves each element
  in place by +-h and evaluates fn twice (2N evaluations, no batching, no verdict);
- ``full``: ``gradlab.gradcheck(mode="full")`` with one worker thread, and its ratio to bare
  (target <= 2x) and to torch's full check;
- ``torch full``: ``torch.autograd.gradcheck(fast_mode=False)`` (float64 only, skipped above
  ``--torch-full-max`` elements: it takes minutes there);
- ``default`` / ``torch fast``: GradLab's default mode against ``gradcheck(fast_mode=True)``
  (target <= 2x).

In float32 GradLab's rules judge every value on fn's float64 twin too, so its bare minimum
is the float32 loop plus the float64 loop; both are printed. Run::

    python -m benchmarks.bench_sizes [--repeat 3] [--only question w128] [--torch-full-max 20000]

A script, not a test: it prints numbers and asserts none.
"""

from __future__ import annotations

import argparse
import time
import warnings

import torch

import gradlab
from gradlab.check import build_model_loss, CheckSettings
from gradlab.testing.modules import module_corpus
from benchmarks.timing import median_seconds


def _cpu_median(call, repeat: int) -> float:
    return median_seconds(call, repeat, time.process_time)


def _question(dtype):
    """(fn of x, x): the question's per-element loss of x at 140x120 (GradLab sums it, as the
    page and the CLI call it; the bare loop and torch get the sum)."""
    model_loss = build_model_loss(CheckSettings(model="affine", shape=(140, 120), loss="mse", reduction="sum",
                                                dtype=str(dtype).removeprefix("torch.")))
    return model_loss.fn, model_loss.x


def _weight(n: int, dtype):
    """tanh(X @ W).sum() as a function of W; X is cast to W's dtype, so fn has a float64 twin."""
    g = torch.Generator().manual_seed(n)
    x = torch.randn(16, n, generator=g, dtype=dtype).to(torch.float64)
    w = torch.randn(n, n, generator=g, dtype=dtype) / n ** 0.5
    return (lambda t: torch.tanh(x.to(t.dtype) @ t).sum()), w


def _cnn(dtype):
    case = next(c for c in module_corpus() if c.name == "CNN")
    return _flat_module(*case.build(dtype))


def _flat_module(module, inputs):
    """(fn of one flat vector of the module's parameters, that vector): the summed output, so
    GradLab and torch's gradcheck check the same function of one input."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    names = [n for n, _ in module.named_parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in module.parameters()])
    shapes = [p.shape for p in module.parameters()]

    sizes = [shape.numel() for shape in shapes]

    def fn(t):  # one split, whose backward is one cat (slices' would each add a zero-padded copy of t)
        parts = {name: part.reshape(shape) for name, part, shape in zip(names, torch.split(t, sizes), shapes)}
        out = torch.func.functional_call(module, parts, inputs)
        return (out[0] if isinstance(out, tuple) else out).sum()

    return fn, flat


CASES = {
    "question-float64": lambda: _question(torch.float64),
    "question-float32": lambda: _question(torch.float32),
    "w64": lambda: _weight(64, torch.float64),
    "w128": lambda: _weight(128, torch.float64),
    "w256": lambda: _weight(256, torch.float64),
    "cnn-float64": lambda: _cnn(torch.float64),
    "cnn-float32": lambda: _cnn(torch.float32),
}


def _bare(fn, x, h: float) -> None:
    with torch.no_grad():
        v = x.detach().clone().reshape(-1)
        t = v.view(x.shape)
        for i in range(v.numel()):
            old = float(v[i])
            v[i] = old + h
            fn(t)
            v[i] = old - h
            fn(t)
            v[i] = old


def _gpt(dtype):
    from gradlab.testing.functions_models import CausalGPT, gpt_tokens

    return CausalGPT(d=128, heads=4, layers=6, vocab=64, length=16).to(dtype), gpt_tokens(batch=2, length=16, vocab=64)


def detection(repeat: int) -> None:
    """Issue 36: the default check against torch's fast mode on a right gradient, and one element
    planted 10 tolerances off (float64) or 50 % off (float32) at 4 positions: failed and named.
    The GPT is checked as a function of one flat vector of its 1.2 M parameters (as torch's check
    takes it); torch's fast mode is not run on it in float32, where it fails the right gradient
    and then explains the failure with its slow mode (a Jacobian column per parameter)."""
    from gradlab.numerics.dtypes import resolve_tolerances
    from gradlab.testing.planted import off_by_tolerances

    sin100 = {torch.float64: (torch.sin, torch.linspace(0.1, 3.0, 100, dtype=torch.float64))}
    sin100[torch.float32] = (torch.sin, sin100[torch.float64][1].float())
    print(f"{'case':22s} {'N':>9s} {'default':>9s} {'torch fast':>10s} {'ratio':>6s}  mode    planted found+named")
    for dtype in (torch.float64, torch.float32):
        name = str(dtype).removeprefix("torch.")
        cases = [("sin " + name, *sin100[dtype]), ("question " + name, *_question(dtype)),
                 ("tanh(X@W) 256 " + name, *_weight(256, dtype)), ("GPT 1.2M " + name, *_flat_module(*_gpt(dtype)))]
        for label, fn, x in cases:
            n, big = x.numel(), x.numel() > 100_000
            right = gradlab.gradcheck(fn, x, workers=1)
            default = _cpu_median(lambda: gradlab.gradcheck(fn, x, workers=1), 1 if big else max(repeat, 3))
            xg = x.detach().clone().requires_grad_()
            if big and dtype != torch.float64:
                fast = float("nan")
            else:
                fast = _cpu_median(lambda: torch.autograd.gradcheck(lambda t: fn(t).sum(), (xg,), fast_mode=True,
                                                                    raise_exception=False), 1 if big else max(repeat, 3))
            times = 10.0 if dtype == torch.float64 else None
            rtol, atol = resolve_tolerances(dtype, None, None)
            found = 0
            for k in (0, n // 3, n // 2, n - 1):
                plant = (lambda t, k=k: fn(off_by_tolerances(t, [k], times, rtol, atol))) if times else \
                    (lambda t, k=k: fn(off_by_tolerances(t, [k], 1.0, 0.5, 0.0)))  # 50 % of the gradient
                r = gradlab.gradcheck(plant, x, workers=1)
                found += r.verdict == "fail" and r.summary.located is not None and r.summary.located.flat_index == k
            fast_text = f"{fast * 1e3:8.1f}ms {default / fast:5.1f}x" if fast == fast else f"{'> 180 s':>10s} {'-':>6s}"
            print(f"{label:22s} {n:9,d} {default * 1e3:7.1f}ms {fast_text}  {right.summary.mode:7s} {found}/4", flush=True)
    print("targets (issue 36): default <= 2x torch fast at every size; planted found and named >= 90 %")
    print("(torch's fast mode on the GPT in float32 fails the right gradient and had not finished its slow-mode "
          "explanation after 180 s: not run here)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None, help=f"cases among {', '.join(CASES)} (prefixes)")
    parser.add_argument("--torch-full-max", type=int, default=20_000)
    parser.add_argument("--detection", action="store_true", help="issue 36's table: default vs torch fast and "
                        "planted-element detection at 100 to 65,536 elements and a 1.2 M-parameter model")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    if args.detection:
        detection(args.repeat)
        return
    print(f"{'case':18s} {'N':>6s} {'bare':>8s} {'full':>8s} {'/bare':>6s} {'torch full':>10s} {'/torch':>7s} "
          f"{'default':>8s} {'torch fast':>10s} {'ratio':>6s}")
    for name, make in CASES.items():
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        fn, x = make()
        summed = lambda t, fn=fn: fn(t).sum()  # noqa: E731 - what the bare loop and torch evaluate
        n = x.numel()
        bare = _cpu_median(lambda: _bare(summed, x, 1e-6 if x.dtype == torch.float64 else 1e-3), args.repeat)
        if x.dtype != torch.float64:  # the float64 witness's own loop, which GradLab's rules add
            fn64, x64 = (CASES[name.replace("float32", "float64")])()
            bare += _cpu_median(lambda: _bare(fn64, x64, 1e-6), args.repeat)
        full = _cpu_median(lambda: gradlab.gradcheck(fn, x, mode="full", workers=1), args.repeat)
        default = _cpu_median(lambda: gradlab.gradcheck(fn, x, workers=1), max(args.repeat, 5))
        xg = x.detach().clone().requires_grad_()
        fast = _cpu_median(lambda: torch.autograd.gradcheck(summed, (xg,), fast_mode=True, raise_exception=False),
                    max(args.repeat, 5))
        if x.dtype == torch.float64 and n <= args.torch_full_max:
            tfull = _cpu_median(lambda: torch.autograd.gradcheck(summed, (xg,), raise_exception=False), args.repeat)
            torch_cols = f"{tfull:9.2f}s {full / tfull:6.2f}x"
        else:
            torch_cols = f"{'-':>10s} {'-':>7s}"
        print(f"{name:18s} {n:6d} {bare:7.2f}s {full:7.2f}s {full / bare:5.2f}x {torch_cols} "
              f"{default * 1e3:6.1f}ms {fast * 1e3:8.1f}ms {default / fast:5.2f}x", flush=True)
    print("targets: full/bare <= 2x; full never slower than torch full (/torch <= 1); default/torch fast <= 2x")


if __name__ == "__main__":
    main()
