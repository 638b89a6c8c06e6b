"""Tensor gradient checks: autograd against finite differences, with a diagnosis.

``gradcheck(fn, x)`` compares autograd's gradient of a PyTorch function of
tensors with finite differences, in three modes:

- ``sampled``: k random elements (seeded);
- ``full``: every element, batched (many perturbed copies per call, see
  :mod:`gradlab.check.batching`), with a ``progress(done, total)`` callback;
- ``directional``: random directions v, comparing the finite-difference
  directional derivative with autograd's ``∇L·v`` (gradcheck's fast mode).

A tensor output is reduced by ``sum``, ``mean`` or ``none``; with ``none`` the
check is of the vector–Jacobian product ``vᵀJ`` with explicit
``grad_outputs`` v, and every difference is taken per output element (then
contracted with v in float64), so no summed loss hides the perturbation.

Finite differences use the input's dtype (or float64 with
``numeric_float64=True``); the stencil is combined in float64, as in
:func:`gradlab.numerics.schemes.stencil_estimates`. An element passes when
``|autograd - numeric| <= atol + rtol·|numeric|``.

>>> r = gradcheck(lambda x: (x ** 3).sum(), torch.linspace(-1, 1, 7, dtype=torch.float64),
...               mode="full", taylor=False)
>>> r.verdict, len(r.table)
('pass', 7)
"""

from __future__ import annotations

import math
import queue
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from gradlab.check.batching import BatchedFn, FlatInputs, OnehotBuffer, chunk_rows, dense_rows, onehot_rows
from gradlab.check.diagnosis import Diagnosis, Evidence, diagnose
from gradlab.errors import GradLabError, LimitError
from gradlab.limits import LIMITS, check_limit
from gradlab.numerics.dtypes import facts, resolve_tolerances
from gradlab.numerics.schemes import Scheme, default_step, get_scheme, not_applicable_reason
from gradlab.check.taylor import TaylorResult, fit_taylor, taylor_steps

__all__ = [
    "MODES", "REDUCTIONS", "GRAD_OUTPUTS", "GradcheckError", "Element", "CheckSummary",
    "CheckResult", "gradcheck", "full_check_work", "element_estimates", "reduction_estimates",
    "sample_indices",
]

MODES = ("sampled", "full", "directional")
REDUCTIONS = ("sum", "mean", "none")
GRAD_OUTPUTS = ("ones", "random")
Progress = Callable[[int, int], None]

# How many of the worst failing values are re-estimated at h/2 to tell
# truncation from a wrong gradient.
PROBE_ROWS = 8


class GradcheckError(GradLabError):
    """A gradient check failed with ``raise_on_fail=True``; the message names the element."""


@dataclass(frozen=True)
class Element:
    """One checked value: where, both gradients, and how far apart."""

    label: str
    autograd: float
    numeric: float
    abs_error: float
    rel_error: float
    tolerance: float


@dataclass(frozen=True)
class CheckSummary:
    """The verdict of a check, its worst value, and the diagnosis in words."""

    verdict: str  # "pass" or "fail"
    mode: str
    scheme: str
    step: float
    dtype: str  # autograd's dtype (the inputs')
    numeric_dtype: str  # the finite differences'
    reduction: str
    rtol: float
    atol: float
    checked: int
    failed: int
    loss: float  # L(x) in the numeric dtype (for "none": the weighted sum, in float64)
    relative_perturbation: float
    machine_eps: float  # of the numeric dtype
    vacuous: bool
    worst: Element | None
    located: Element | None  # directional mode: the element a failing direction points at
    diagnosis: Diagnosis
    message: str  # one paragraph naming the failing element and the hint

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


@dataclass(frozen=True, eq=False)
class CheckResult:
    """Per-value table, summary, optional heatmap array and Taylor test."""

    table: pd.DataFrame  # one row per checked element (or direction)
    summary: CheckSummary
    error_map: np.ndarray | None  # full mode on a 1-D/2-D input: rel_error in its shape
    taylor: TaylorResult | None

    @property
    def verdict(self) -> str:
        return self.summary.verdict

    @property
    def passed(self) -> bool:
        return self.summary.passed


# ------------------------------------------------------------------ problem set-up


@dataclass(frozen=True, eq=False)
class _Problem:
    """Everything the numeric side needs, in the numeric dtype."""

    flat: FlatInputs
    batched: BatchedFn
    reduction: str
    weights: torch.Tensor | None  # float64 grad_outputs, flattened ("none" only)
    scheme: Scheme
    step: float
    base_rows: torch.Tensor  # (1, out) reduced value(s) at x, numeric dtype
    output_sizes: torch.Tensor | None  # (out,) float64 |v_j y_j(x)| ("none" only)

    @property
    def dtype(self) -> torch.dtype:
        return self.flat.values.dtype


def _as_inputs(x) -> list[torch.Tensor]:
    xs = [x] if isinstance(x, torch.Tensor) else list(x)
    if not xs or not all(isinstance(t, torch.Tensor) for t in xs):
        raise GradLabError("The inputs must be a tensor or a sequence of tensors.")
    dtypes = {t.dtype for t in xs}
    if len(dtypes) != 1 or not next(iter(dtypes)).is_floating_point:
        raise GradLabError("All inputs must be real floating-point tensors of one dtype; got "
                           f"{sorted(str(d) for d in dtypes)}.")
    facts(next(iter(dtypes)))  # a dtype GradLab knows
    check_limit("input elements", sum(t.numel() for t in xs), LIMITS.tensor_elements)
    return [t.detach() for t in xs]


def _choose(name: str, value: str, options: Sequence[str]) -> str:
    if value not in options:
        raise GradLabError(f"Unknown {name} {value!r}; choose one of: {', '.join(options)}.")
    return value


def _reduce(y: torch.Tensor, reduction: str) -> torch.Tensor:
    """(m, *out) -> (m,) for sum/mean in y's dtype, (m, out) for none."""
    flat = y.reshape(y.shape[0], -1)
    if reduction == "sum":
        return flat.sum(dim=1, keepdim=True)
    if reduction == "mean":
        return flat.mean(dim=1, keepdim=True)
    return flat


def _grad_outputs(spec, out_shape: torch.Size, dtype: torch.dtype, seed: int) -> torch.Tensor:
    if isinstance(spec, torch.Tensor):
        if spec.shape != out_shape:
            raise GradLabError(f"grad_outputs has shape {tuple(spec.shape)} but the output has "
                               f"shape {tuple(out_shape)}; they must match.")
        return spec.detach().to(dtype)
    _choose("grad_outputs", spec, GRAD_OUTPUTS)
    if spec == "ones":
        return torch.ones(out_shape, dtype=dtype)
    gen = torch.Generator().manual_seed(seed + 1)
    return torch.randn(out_shape, generator=gen, dtype=torch.float64).to(dtype)


# ------------------------------------------------------------------ autograd side


def _autograd(fn, xs, reduction, grad_outputs, seed):
    """Autograd gradient (flat, float64), the output, and the grad_outputs used."""
    leaves = [t.clone().requires_grad_(True) for t in xs]
    with torch.enable_grad():
        y = fn(*leaves)
        if not isinstance(y, torch.Tensor) or not y.is_floating_point():
            raise GradLabError("The function must return a real floating-point tensor.")
        if not y.requires_grad:
            raise GradLabError("The function's output does not depend on its inputs through "
                               "autograd (was something detached or computed under no_grad?).")
        v = None
        if reduction == "none":
            v = _grad_outputs(grad_outputs, y.shape, y.dtype, seed)
            target, seed_grad = y, v
        else:
            target = y.sum() if reduction == "sum" else y.mean()
            seed_grad = None
        grads = torch.autograd.grad(target, leaves, grad_outputs=seed_grad, allow_unused=True)
    flat = torch.cat([(g if g is not None else torch.zeros_like(t)).reshape(-1)
                      for g, t in zip(grads, leaves)])
    return flat.detach().to(torch.float64), y.detach(), v


# ------------------------------------------------------------------ numeric side


def _problem(fn, xs, reduction, v, scheme, step, numeric_dtype, like: _Problem | None = None) -> _Problem:
    """The numeric side of a check; ``like`` shares its inputs and batched fn (and the
    strategy it probed), so problems differing only in reduction run fn alike."""
    flat = FlatInputs.of([t.to(numeric_dtype) for t in xs]) if like is None else like.flat
    batched = BatchedFn(fn, flat) if like is None else like.batched
    with _single_threaded_ops():  # the strategy probe: small ops (see _run_chunks)
        base = _reduce(batched(flat.values[None, :]), reduction)
    weights = None if v is None else v.to(numeric_dtype).to(torch.float64).reshape(-1)
    sizes = None if weights is None else (weights * base[0].to(torch.float64)).abs()
    return _Problem(flat, batched, reduction, weights, scheme, step, base, sizes)


def _estimates(p: _Problem, make_rows, h: torch.Tensor):
    """Finite-difference estimates for a batch of perturbations, and round-off scales.

    ``make_rows(shifts)`` builds the (K·m, N) perturbed inputs for (K, m)
    shifts: every stencil point of every perturbation goes through fn in one
    call. Returns (estimate (m,), scale (m,)): scale is what the rounded values
    are proportional to (|L| for sum/mean, Σ|v_j y_j| over the changed outputs
    for none).
    """
    shifts = _shifts(p, h)
    return _combine(p, p.batched(make_rows(shifts)), h)


def _shifts(p: _Problem, h: torch.Tensor) -> torch.Tensor:
    """(K, m) shifts c_k·h of the stencil's moving points (K = 1: i·h for the complex step)."""
    if p.scheme.complex_step:
        return (h * 1j)[None]
    offsets = torch.tensor([c for c in p.scheme.offsets if c != 0], dtype=torch.float64)
    return offsets[:, None] * h


def _combine(p: _Problem, outputs: torch.Tensor, h: torch.Tensor):
    """fn's outputs at the (K·m) stencil rows -> (estimate (m,), scale (m,)); see _estimates."""
    s, m = p.scheme, h.shape[0]
    if s.complex_step:
        values = _reduce(outputs, p.reduction).imag.to(torch.float64)
        return _contract(p, values) / h, _scale(p, None, m)
    moving = [(c, w) for c, w in zip(s.offsets, s.weights) if c != 0]
    values = _reduce(outputs, p.reduction).reshape(len(moving), m, -1)
    weights = torch.tensor([w for _, w in moving], dtype=torch.float64)
    combined = torch.einsum("k,kmo->mo", weights, values.to(torch.float64))
    centre = sum(w for c, w in zip(s.offsets, s.weights) if c == 0)
    if centre:
        combined = combined + centre * p.base_rows.to(torch.float64)
    changed = _changed(values, p.base_rows) if p.reduction == "none" else None
    return _contract(p, combined) / h, _scale(p, changed, m)


def _changed(values: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
    """(K, m, out) outputs at the stencil points -> (m, out) float64, 1 where an output
    differs from its value at x at some point, else 0 (NaN counts as a change, and so
    does an infinite output that stays infinite: its estimate is NaN anyway).

    Taken as sign(max |y - y(x)|) rather than by boolean ops, which torch runs 3x
    slower: this mask costs as much as the rest of a 'none' chunk together."""
    spread = (values - base).abs_().amax(dim=0)
    return spread.sign_().nan_to_num_(nan=1.0).to(torch.float64)


def _contract(p: _Problem, values: torch.Tensor) -> torch.Tensor:
    if p.reduction == "none":
        return values @ p.weights
    return values[:, 0]


def _scale(p: _Problem, changed: torch.Tensor | None, m: int) -> torch.Tensor:
    """Round-off scale per perturbation: |L| for sum/mean; for none the sum of
    |v_j y_j| over the outputs ``changed`` (a 0/1 float64 mask, None: all of them)."""
    if p.reduction != "none":
        return p.base_rows.to(torch.float64).abs()[:, 0].expand(m)
    if changed is None:
        return p.output_sizes.sum().expand(m)
    return changed @ p.output_sizes


def _numeric_base(p: _Problem, shifts: torch.Tensor) -> torch.Tensor:
    if shifts.is_complex():
        return p.flat.values.to(facts(p.dtype).complex_partner)
    return p.flat.values


def _onehot_maker(p: _Problem, index: torch.Tensor):
    def make(shifts: torch.Tensor) -> torch.Tensor:
        return onehot_rows(_numeric_base(p, shifts), index.repeat(shifts.shape[0]), shifts.reshape(-1))

    return make


def _dense_maker(p: _Problem, directions: torch.Tensor):
    def make(shifts: torch.Tensor) -> torch.Tensor:
        return dense_rows(_numeric_base(p, shifts), directions.repeat(shifts.shape[0], 1),
                          shifts.reshape(-1))

    return make


def _onehot_evaluator(p: _Problem, index: torch.Tensor, chunk: int,
                      h: torch.Tensor | None = None) -> Callable[[], Callable]:
    """A factory of ``evaluate(a, b)`` for the one-hot perturbations ``index[a:b]``.

    Each worker thread calls the factory once and gets an evaluator with a
    :class:`OnehotBuffer` of its own: the perturbed rows are written into it,
    so no copy of the base is made per chunk and the cost per stencil point is
    fn itself plus the reduction. ``h`` gives one step per perturbation
    (default: p.step for all). Once every chunk ran, ``factory.finish()``
    returns the (estimate, scale) arrays.
    """
    total = index.shape[0]
    steps = torch.full((total,), p.step, dtype=torch.float64) if h is None else h
    if p.scheme.complex_step or p.reduction == "none":
        return _generic_onehot(p, index, chunk, steps)
    return _summed_onehot(p, index, chunk, steps)


def _summed_onehot(p: _Problem, index, chunk, steps):
    """sum/mean on real inputs: each chunk only writes its reduced values; combined at the end.

    Row ``j·K + k`` of a chunk is perturbation j at stencil point k, so the
    reduced values of perturbations a..b-1 fill rows a·K..b·K-1 of a (total·K)
    array, and the stencil is combined in float64 for all of them at once.
    """
    s, total = p.scheme, index.shape[0]
    moving = [(c, w) for c, w in zip(s.offsets, s.weights) if c != 0]
    points = len(moving)
    offsets = torch.tensor([c for c, _ in moving], dtype=torch.float64)
    raw = torch.empty(total * points, dtype=p.base_rows.dtype)
    flat_index = index.repeat_interleave(points)
    shifts = (steps[:, None] * offsets).reshape(-1)
    rows = points * chunk
    where, values, original = OnehotBuffer.entries(p.flat.values, rows, flat_index, shifts)
    reduce = torch.sum if p.reduction == "sum" else torch.mean

    def factory():
        buffer = OnehotBuffer(p.flat.values, rows)
        parts = {}

        def evaluate(a: int, b: int) -> None:
            lo, hi = a * points, b * points
            m = hi - lo
            if m not in parts:
                parts[m] = p.flat.split(buffer.rows[:m])
            with buffer.perturbed(where[lo:hi], values[lo:hi], original[lo:hi]) as stacked:
                y = p.batched(stacked, parts[m])
                y = y.reshape(m, -1)
                if y.dtype == raw.dtype:
                    reduce(y, dim=1, out=raw[lo:hi])
                else:
                    raw[lo:hi] = reduce(y, dim=1)

        return evaluate

    def finish():
        weights = torch.tensor([w for _, w in moving], dtype=torch.float64)
        combined = raw.to(torch.float64).reshape(total, points) @ weights
        centre = sum(w for c, w in zip(s.offsets, s.weights) if c == 0)
        if centre:
            combined = combined + centre * p.base_rows.to(torch.float64)[0, 0]
        return combined / steps, _scale(p, None, total)

    factory.finish = finish
    return factory


def _generic_onehot(p: _Problem, index, chunk, steps):
    """Any reduction and scheme: each chunk is combined by _combine as it is evaluated."""
    factory = _shared_onehot([p], index, chunk, steps)
    results = factory.finish
    factory.finish = lambda: results()[0]
    return factory


def _shared_onehot(problems: list[_Problem], index, chunk, steps):
    """Like _generic_onehot for problems that differ only in their reduction (one fn,
    one x, one scheme): fn runs once per perturbed row and each problem reduces
    and combines the same outputs. ``factory.finish()`` returns one (estimate,
    scale) pair per problem."""
    first, total = problems[0], index.shape[0]
    points = len(_shifts(first, torch.ones(1, dtype=torch.float64)))
    results = [(torch.empty(total, dtype=torch.float64), torch.empty(total, dtype=torch.float64))
               for _ in problems]

    def factory():
        buffers: dict[bool, OnehotBuffer] = {}

        def evaluate(a: int, b: int) -> None:
            shifts = _shifts(first, steps[a:b])
            base = _numeric_base(first, shifts)
            key = shifts.is_complex()
            if key not in buffers:
                buffers[key] = OnehotBuffer(base, points * chunk)
            buffer = buffers[key]
            planned = OnehotBuffer.entries(base, points * chunk, index[a:b].repeat(points),
                                           shifts.reshape(-1))
            with buffer.perturbed(*planned) as rows:
                outputs = first.batched(rows)
                for p, (est, scale) in zip(problems, results):
                    est[a:b], scale[a:b] = _combine(p, outputs, steps[a:b])

        return evaluate

    factory.finish = lambda: results
    return factory


def _dense_evaluator(p: _Problem, directions: torch.Tensor):
    """Like _onehot_evaluator, for dense directions (directional mode; few of them)."""
    total = directions.shape[0]
    step = torch.full((total,), p.step, dtype=torch.float64)
    est, scale = torch.empty(total, dtype=torch.float64), torch.empty(total, dtype=torch.float64)

    def evaluate(a: int, b: int) -> None:
        est[a:b], scale[a:b] = _estimates(p, _dense_maker(p, directions[a:b]), step[a:b])

    def factory():
        return evaluate

    factory.finish = lambda: (est, scale)
    return factory


def _run_chunks(p: _Problem, total: int, evaluator, progress: Progress | None,
                workers: int = 1, chunk: int | None = None):
    """Estimates and scales for ``total`` perturbations, a chunk at a time.

    ``evaluator()`` returns an ``evaluate(a, b)`` that computes perturbations
    a..b-1 and stores them; ``evaluator.finish()`` then returns the (estimate,
    scale) arrays. With ``workers`` > 1 each worker thread gets its own
    and pulls chunks from a shared counter (torch releases the GIL inside its
    ops, so the threads' ops run on different cores). The chunks are the same
    whatever the number of workers, and each is computed the same way, so the
    estimates are identical bit for bit. ``progress(done, total)`` is called
    from the calling thread, after every chunk, with ``done`` increasing to
    ``total``; an exception from it or from a worker stops every worker (each
    finishes at most the chunk it is on) and propagates.

    Torch's intra-op threads are off meanwhile (process-wide): the chunks are
    small, and splitting each small op across cores costs more in
    synchronisation than it gains (measured 10x slower on a busy 2-core
    machine, where every op waits for the slowest core).
    """
    if chunk is None:
        chunk = _chunk(p, total)
    starts = list(range(0, total, chunk))
    workers = max(1, min(workers, len(starts)))
    with _single_threaded_ops():
        if workers == 1:
            evaluate = evaluator()
            for a in starts:
                b = min(total, a + chunk)
                evaluate(a, b)
                if progress is not None:
                    progress(b, total)
        else:
            _in_threads(starts, chunk, total, evaluator, progress, workers)
        return evaluator.finish()


def _chunk(p: _Problem, total: int) -> int:
    """Perturbations per chunk: sized for LIMITS.check_workers chunks in flight, so the
    chunks (and the bits of every estimate) do not depend on the number of workers."""
    points = max(1, sum(c != 0 for c in p.scheme.offsets))
    rows = chunk_rows(p.flat.numel, p.flat.values.element_size(), total, LIMITS.check_workers,
                      p.batched.strategy.get(p.dtype, "vmap"))
    return max(1, rows // points)


def _in_threads(starts, chunk, total, evaluator, progress, workers) -> None:
    """_run_chunks with ``workers`` threads; progress and exceptions go through a queue."""
    jobs, lock, stop, reports = iter(starts), threading.Lock(), threading.Event(), queue.SimpleQueue()

    def work() -> None:
        try:
            torch.set_num_threads(1)  # OpenMP's thread count is per calling thread
            evaluate = evaluator()
            while not stop.is_set():
                with lock:
                    a = next(jobs, None)
                if a is None:
                    break
                b = min(total, a + chunk)
                evaluate(a, b)
                reports.put(b - a)
        except BaseException as err:  # noqa: BLE001 - handed to the calling thread, re-raised there
            stop.set()
            reports.put(err)
        finally:
            reports.put(None)

    threads = [threading.Thread(target=work, name=f"gradlab-check-{k}", daemon=True)
               for k in range(workers)]
    for t in threads:
        t.start()
    done, running = 0, workers
    try:
        while running:
            try:
                item = reports.get(timeout=0.25)
            except queue.Empty:
                continue
            if item is None:
                running -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                done += item
                if progress is not None:
                    progress(done, total)
    finally:
        stop.set()
        for t in threads:
            t.join()


def _resolve_workers(workers: int | None) -> int:
    if workers is None:
        return LIMITS.check_workers
    if not (isinstance(workers, int) and workers >= 1):
        raise GradLabError(f"workers must be a whole number >= 1; got {workers!r}.")
    return int(check_limit("check worker threads", workers, LIMITS.check_workers))


@contextmanager
def _single_threaded_ops():
    """Run torch ops on one thread inside the block, restoring the setting after."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


# ------------------------------------------------------------------ the check


def full_check_work(numel: int, output_numel: int, scheme: str | Scheme = "central") -> str:
    """The work a full check of ``numel`` elements costs, in words (for limit messages).

    >>> full_check_work(100, 100)
    '200 evaluations of the function on all 100 elements (2e+04 element-operations)'
    """
    points = max(1, len([c for c in get_scheme(scheme).offsets if c != 0]))
    evals = numel * points
    return (f"{evals:,} evaluations of the function on all {numel:,} elements "
            f"({evals * max(numel, output_numel):.0e} element-operations)")


def _check_full_limit(numel: int, out_numel: int, scheme: Scheme) -> None:
    if numel > LIMITS.full_check_elements:
        raise LimitError(
            f"A full check of {numel:,} elements needs {full_check_work(numel, out_numel, scheme)}; "
            f"GradLab allows full checks of at most {LIMITS.full_check_elements:,} elements "
            "(LIMITS.full_check_elements). Use mode 'sampled' or 'directional', or a smaller shape.")


def sample_indices(numel: int, samples: int, seed: int) -> torch.Tensor:
    """The flat indices the sampled mode checks: ``samples`` distinct ones, seeded, sorted.

    >>> sample_indices(10, 3, 0).tolist() == sample_indices(10, 3, 0).tolist()
    True
    """
    check_limit("sampled elements", samples, LIMITS.sampled_elements)
    gen = torch.Generator().manual_seed(seed)
    return torch.randperm(numel, generator=gen)[:min(samples, numel)].sort().values


def _perturbations(mode, numel, samples, seed):
    if mode == "full":
        return torch.arange(numel), None
    if mode == "sampled":
        return sample_indices(numel, samples, seed), None
    check_limit("directional checks", samples, LIMITS.directional_checks)
    gen = torch.Generator().manual_seed(seed)
    v = torch.randn(samples, numel, generator=gen, dtype=torch.float64)
    return None, v / v.norm(dim=1, keepdim=True)


def gradcheck(
    fn: Callable[..., torch.Tensor],
    x: torch.Tensor | Sequence[torch.Tensor],
    *,
    mode: str = "sampled",
    samples: int = 5,
    seed: int = 0,
    scheme: str = "central",
    eps: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    reduction: str = "sum",
    grad_outputs: str | torch.Tensor = "ones",
    numeric_float64: bool = False,
    numeric_fn: Callable[..., torch.Tensor] | None = None,
    taylor: bool = True,
    progress: Progress | None = None,
    raise_on_fail: bool = False,
    workers: int | None = None,
) -> CheckResult:
    """Check autograd's gradient of ``fn`` at ``x`` against finite differences.

    ``fn`` takes the input tensor(s) and returns a tensor (a loss, or any
    output, reduced by ``reduction``). ``samples`` is the number of elements
    (sampled) or directions (directional). ``eps`` defaults to
    :func:`gradlab.numerics.schemes.default_step` and the tolerances to the dtype's row
    of :mod:`gradlab.numerics.dtypes`. ``numeric_fn`` is a float64 twin of ``fn``
    for ``numeric_float64=True`` when ``fn`` holds tensors of its own dtype.
    ``workers`` threads (default and at most ``LIMITS.check_workers``) share
    the finite differences; the results do not depend on their number. fn is
    then called from several threads at once: it must not mutate shared state.

    >>> x = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)
    >>> gradcheck(lambda t: (t ** 2).sum(), x, mode="full", taylor=False).passed
    True
    """
    _choose("mode", mode, MODES)
    _choose("reduction", reduction, REDUCTIONS)
    workers = _resolve_workers(workers)
    xs = _as_inputs(x)
    user_dtype = xs[0].dtype
    numeric_dtype = torch.float64 if numeric_float64 else user_dtype
    s = get_scheme(scheme)
    reason = not_applicable_reason(s, numeric_dtype)
    if reason:
        raise GradLabError(reason)
    rtol, atol = resolve_tolerances(user_dtype, rtol, atol)
    flat_user = FlatInputs.of(xs)
    h = _step(eps, s, numeric_dtype, flat_user.values)
    g, y, v = _autograd(fn, xs, reduction, grad_outputs, seed)
    if mode == "full":
        _check_full_limit(flat_user.numel, y.numel(), s)
    numeric_callable = (numeric_fn or fn) if numeric_float64 else fn
    p = _problem(numeric_callable, xs, reduction, v, s, h, numeric_dtype)
    index, directions = _perturbations(mode, flat_user.numel, samples, seed)
    total = index.numel() if index is not None else directions.shape[0]
    chunk = _chunk(p, total)
    if index is not None:
        maker_for = lambda a, b: _onehot_maker(p, index[a:b])  # noqa: E731
        evaluator = _onehot_evaluator(p, index, chunk)
        autograd_values = g[index]
    else:
        maker_for = lambda a, b: _dense_maker(p, directions[a:b])  # noqa: E731
        evaluator = _dense_evaluator(p, directions)
        autograd_values = directions @ g
    numeric, scale = _run_chunks(p, total, evaluator, progress, workers, chunk)
    table = _table(flat_user, index, autograd_values, numeric, scale, h, rtol, atol, _roundoff(p, scale))
    share = _truncation_share(p, table, maker_for, numeric, autograd_values)
    located = None
    if directions is not None and not bool(table["ok"].all()):
        located = _locate(p, g, directions, table, rtol, atol, flat_user)
    summary = _summary(p, table, located, mode, user_dtype, rtol, atol, y, share, scale)
    taylor_result = _taylor(p, g, seed) if taylor else None
    result = CheckResult(table, summary, _error_map(flat_user, mode, table), taylor_result)
    if raise_on_fail and not result.passed:
        raise GradcheckError(summary.message)
    return result


def element_estimates(
    fn: Callable[..., torch.Tensor],
    x: torch.Tensor | Sequence[torch.Tensor],
    index: torch.Tensor,
    steps: torch.Tensor,
    *,
    reduction: str = "sum",
    scheme: str = "central",
    grad_outputs: str | torch.Tensor = "ones",
    seed: int = 0,
    numeric_float64: bool = False,
    numeric_fn: Callable[..., torch.Tensor] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(autograd, finite difference) at flat element ``index[r]`` with step ``steps[r]``.

    The building block of error-vs-eps sweeps: every (element, step) pair is
    one perturbed row, and rows are evaluated a chunk at a time.

    >>> a, n = element_estimates(lambda t: t ** 2, torch.tensor([3.0], dtype=torch.float64),
    ...                          torch.tensor([0, 0]), torch.tensor([1e-1, 1e-3]), scheme="forward")
    >>> a.tolist(), n.round(6).tolist()  # forward error = h exactly for x**2
    ([6.0, 6.0], [6.1, 6.001])
    """
    return reduction_estimates(
        fn, x, index, steps, reductions=(reduction,), scheme=scheme, grad_outputs=grad_outputs,
        seed=seed, numeric_float64=numeric_float64, numeric_fn=numeric_fn)[reduction]


def reduction_estimates(
    fn: Callable[..., torch.Tensor],
    x: torch.Tensor | Sequence[torch.Tensor],
    index: torch.Tensor,
    steps: torch.Tensor,
    *,
    reductions: Sequence[str] = REDUCTIONS,
    scheme: str = "central",
    grad_outputs: str | torch.Tensor = "ones",
    seed: int = 0,
    numeric_float64: bool = False,
    numeric_fn: Callable[..., torch.Tensor] | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`element_estimates` under several reductions, by reduction name.

    fn runs once per perturbed row, whatever the number of reductions: its
    outputs are reduced each way (a sweep of sum, mean and none costs one
    sweep of fn, not three), and each reduction's values are what it alone
    would give.

    >>> est = reduction_estimates(lambda t: t ** 2, torch.tensor([3.0, 1.0], dtype=torch.float64),
    ...                           torch.tensor([0]), torch.tensor([1e-1]), scheme="forward")
    >>> {r: n.round(6).tolist() for r, (_, n) in est.items()}  # mean halves L and dL/dx alike
    {'sum': [6.1], 'mean': [3.05], 'none': [6.1]}
    """
    for reduction in reductions:
        _choose("reduction", reduction, REDUCTIONS)
    if not reductions:
        raise GradLabError("Name at least one reduction.")
    xs = _as_inputs(x)
    s = get_scheme(scheme)
    numeric_dtype = torch.float64 if numeric_float64 else xs[0].dtype
    reason = not_applicable_reason(s, numeric_dtype)
    if reason:
        raise GradLabError(reason)
    callable_ = (numeric_fn or fn) if numeric_float64 else fn
    grads, problems = [], []
    for reduction in reductions:
        g, _, v = _autograd(fn, xs, reduction, grad_outputs, seed)
        grads.append(g[index].numpy())
        problems.append(_problem(callable_, xs, reduction, v, s, 1.0, numeric_dtype,
                                 like=problems[0] if problems else None))
    steps = steps.to(torch.float64)
    chunk = _chunk(problems[0], len(index))
    results = _run_chunks(problems[0], len(index), _shared_onehot(problems, index, chunk, steps),
                          None, 1, chunk)
    return {r: (g, est.numpy()) for r, g, (est, _) in zip(reductions, grads, results)}


def _step(eps, s: Scheme, dtype, values: torch.Tensor) -> float:
    if eps is not None:
        if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
            raise GradLabError(f"The step eps must be a positive finite number; got {eps!r}.")
        return float(eps)
    typical = float(values.to(torch.float64).pow(2).mean().sqrt()) if values.numel() else 1.0
    return default_step(s, dtype, typical)


# ------------------------------------------------------------------ results


def _labels(flat: FlatInputs, index: torch.Tensor | None, count: int):
    if index is None:
        return [f"direction {k}" for k in range(count)], [(k,) for k in range(count)], [-1] * count
    many = len(flat.shapes) > 1
    flat_index = index.numpy()
    sizes = np.array([int(torch.Size(s).numel()) for s in flat.shapes])
    if flat_index.size and (flat_index.min() < 0 or flat_index.max() >= sizes.sum()):
        raise IndexError(f"flat index beyond the {int(sizes.sum())} input elements")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    inputs = np.searchsorted(np.cumsum(sizes), flat_index, side="right")
    idx: list[tuple[int, ...]] = [()] * len(flat_index)
    for k, shape in enumerate(flat.shapes):  # vectorised per input: a full check has 10^4+ rows
        rows = np.flatnonzero(inputs == k)
        if rows.size:
            coords = np.unravel_index(flat_index[rows] - starts[k], tuple(shape) or (1,))
            located = zip(*(c.tolist() for c in coords)) if len(shape) else [()] * rows.size
            for r, t in zip(rows.tolist(), located):
                idx[r] = tuple(t)
    names = [f"x{k}" if many else "x" for k in inputs.tolist()]
    labels = [f"{n}[{', '.join(map(str, t))}]" for n, t in zip(names, idx)]
    return labels, idx, inputs.tolist()


def _roundoff(p: _Problem, scale: torch.Tensor) -> np.ndarray:
    """Predicted absolute round-off error of each estimate: sum|w_k|·u·scale/h."""
    u = facts(p.dtype).unit_roundoff
    return (p.scheme.roundoff_constant * u * scale / p.step).numpy()


def _table(flat, index, autograd, numeric, scale, h, rtol, atol, roundoff) -> pd.DataFrame:
    a, n = autograd.numpy(), numeric.numpy()
    labels, idx, inputs = _labels(flat, index, len(a))
    abs_err = np.abs(a - n)
    tol = atol + rtol * np.abs(n)
    big = np.maximum(np.abs(a), np.abs(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(big > 0, abs_err / big, 0.0)
        ratio = np.where(a != 0, n / a, np.nan)
        rho = np.where(scale.numpy() > 0, h * np.abs(a) / scale.numpy(), np.nan)
    ok = abs_err <= tol
    return pd.DataFrame({
        "element": labels, "input": inputs, "index": idx,
        "autograd": a, "numeric": n, "ratio": ratio, "abs_error": abs_err,
        "rel_error": rel, "tolerance": tol, "ok": ok,
        "relative_perturbation": rho, "roundoff": roundoff, "below_atol": big <= atol,
    })


def _error_map(flat: FlatInputs, mode: str, table: pd.DataFrame) -> np.ndarray | None:
    if mode != "full" or len(flat.shapes) != 1 or len(flat.shapes[0]) not in (1, 2):
        return None
    shape = tuple(flat.shapes[0])
    return table["rel_error"].to_numpy().reshape(shape if len(shape) == 2 else (1, shape[0]))


def _worst_position(table: pd.DataFrame) -> int:
    excess = (table["abs_error"] / table["tolerance"].where(table["tolerance"] > 0, np.inf))
    excess = excess.fillna(np.inf) if not table["ok"].all() else excess.fillna(0)
    return int(np.argmax(excess.to_numpy()))


def _element(table: pd.DataFrame, pos: int) -> Element:
    row = table.iloc[pos]
    return Element(str(row["element"]), float(row["autograd"]), float(row["numeric"]),
                   float(row["abs_error"]), float(row["rel_error"]), float(row["tolerance"]))


def _truncation_share(p: _Problem, table, maker_for, numeric, autograd) -> float | None:
    """Median of |D(h) - D(h/2)| / ((1 - 2^-p)|D(h) - a|) over the worst failing values."""
    failing = np.flatnonzero(~table["ok"].to_numpy())
    if failing.size == 0 or p.scheme.complex_step:
        return None
    worst = failing[np.argsort(-table["abs_error"].to_numpy()[failing])][:PROBE_ROWS]
    halves = [_estimates(p, maker_for(int(i), int(i) + 1),
                         torch.tensor([p.step / 2], dtype=torch.float64))[0] for i in worst]
    moved = np.abs(numeric.numpy()[worst] - torch.cat(halves).numpy())
    error = np.abs(numeric.numpy()[worst] - autograd.numpy()[worst])
    predicted = (1 - 2.0 ** -p.scheme.order) * error
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(predicted > 0, moved / predicted, np.nan)
    share = share[np.isfinite(share)]
    return float(np.median(share)) if share.size else None


def _locate(p: _Problem, g, directions, table, rtol, atol, flat) -> Element:
    """Bisect the worst failing direction down to the element it points at."""
    worst = directions[_worst_position(table)]
    active = torch.arange(flat.numel)
    while active.numel() > 1:
        halves = torch.tensor_split(active, 2)
        masks = torch.zeros(2, flat.numel, dtype=torch.float64)
        for k, part in enumerate(halves):
            masks[k, part] = worst[part]
        est, _ = _estimates(p, _dense_maker(p, masks), torch.full((2,), p.step, dtype=torch.float64))
        auto = masks @ g
        excess = (est - auto).abs() / (atol + rtol * est.abs())
        active = halves[int(torch.argmax(torch.nan_to_num(excess, nan=math.inf)))]
    i = active[:1]
    est, scale = _estimates(p, _onehot_maker(p, i), torch.full((1,), p.step, dtype=torch.float64))
    row = _table(flat, i, g[i], est, scale, p.step, rtol, atol, _roundoff(p, scale))
    return _element(row, 0)


def _summary(p, table, located, mode, user_dtype, rtol, atol, y, share, scale) -> CheckSummary:
    passed = bool(table["ok"].all())
    worst = _element(table, _worst_position(table)) if len(table) else None
    loss = float(_contract_loss(p))
    nd = facts(p.dtype)
    failing = ~table["ok"].to_numpy()
    focus = table[failing] if failing.any() else table  # explain the failures, if any
    rho = focus["relative_perturbation"].to_numpy()
    rho_med = float(np.nanmedian(rho)) if np.isfinite(rho).any() else 0.0
    explained = float((focus["roundoff"] >= focus["tolerance"]).mean()) if failing.any() else 0.0
    finite = np.isfinite(table[["autograd", "numeric"]].to_numpy()).all(axis=1)
    named = located if located is not None else worst
    evidence = Evidence(
        passed=passed, dtype=nd.name, scheme=p.scheme.name, step=p.step, reduction=p.reduction,
        rtol=rtol, atol=atol, relative_perturbation=rho_med,
        loss=float(scale.median()),
        summed_elements=int(y.numel()), grad_scale=float(focus["autograd"].abs().median()),
        roundoff_explained=explained, nonfinite=int((~finite).sum()) + (not math.isfinite(loss)),
        checked=len(table), failed=int((~table["ok"]).sum()),
        below_atol=int(table["below_atol"].sum()), autograd_dtype=facts(user_dtype).name,
        worst_label=named.label if named else "", worst_autograd=named.autograd if named else math.nan,
        worst_numeric=named.numeric if named else math.nan,
        worst_rel_error=named.rel_error if named else math.nan,
        truncation_share=share, quantum=_quantum(p, loss),
    )
    diagnosis = diagnose(evidence)
    vacuous = diagnosis.kind == "vacuous"
    return CheckSummary(
        verdict="pass" if passed else "fail", mode=mode, scheme=p.scheme.name, step=p.step,
        dtype=facts(user_dtype).name, numeric_dtype=nd.name, reduction=p.reduction,
        rtol=rtol, atol=atol, checked=len(table), failed=evidence.failed, loss=loss,
        relative_perturbation=rho_med, machine_eps=nd.eps, vacuous=vacuous, worst=worst,
        located=located, diagnosis=diagnosis,
        message=_message(passed, table, worst, located, p, rtol, atol, diagnosis),
    )


def _contract_loss(p: _Problem) -> float:
    base = p.base_rows.to(torch.float64)
    return float(base[0] @ p.weights) if p.reduction == "none" else float(base[0, 0])


def _quantum(p: _Problem, loss: float) -> float | None:
    """ulp(L)/h: the spacing of the values a finite difference of L can take."""
    if p.reduction == "none" or p.scheme.complex_step or not math.isfinite(loss):
        return None
    value = torch.tensor(abs(loss), dtype=p.dtype)
    ulp = float(torch.nextafter(value, torch.tensor(math.inf, dtype=p.dtype)) - value)
    return ulp * max(abs(w) for w in p.scheme.weights) / p.step


def _message(passed, table, worst, located, p, rtol, atol, diagnosis) -> str:
    if passed:
        return f"{diagnosis.headline} ({len(table)} values, {p.scheme.name} differences, h = {p.step:.3g})."
    failed = int((~table["ok"]).sum())
    text = (f"Gradient check failed at {worst.label}: autograd {worst.autograd:.6g}, "
            f"finite difference {worst.numeric:.6g} ({p.scheme.name}, h = {p.step:.3g}); "
            f"difference {worst.abs_error:.3g} > tolerance {worst.tolerance:.3g} "
            f"(atol {atol:g} + rtol {rtol:g}·|numeric|). {failed} of {len(table)} checked values fail.")
    if located is not None:
        text += (f" Bisecting that direction points at {located.label}: autograd "
                 f"{located.autograd:.6g}, finite difference {located.numeric:.6g}.")
    return text + f" Hint: {diagnosis.headline} {diagnosis.fixes[0] if diagnosis.fixes else ''}".rstrip()


# ------------------------------------------------------------------ Taylor test


def _taylor(p: _Problem, g: torch.Tensor, seed: int) -> TaylorResult:
    """Remainders |L(x+hv) - L(x) - h ∇L·v| along a seeded direction with rms entry 1."""
    gen = torch.Generator().manual_seed(seed + 2)
    v = torch.randn(p.flat.numel, generator=gen, dtype=torch.float64)
    v = v / v.pow(2).mean().sqrt()
    nd = facts(p.dtype)
    hs = taylor_steps(nd.eps)
    rows = dense_rows(p.flat.values, v.expand(len(hs), -1), torch.as_tensor(hs))
    values = _contract(p, _reduce(p.batched(rows), p.reduction).to(torch.float64))
    loss0 = _contract_loss(p)
    slope = float(g @ v)
    remainder = (values - loss0 - torch.as_tensor(hs) * slope).abs().numpy()
    floor = 2 * nd.unit_roundoff * float(_scale(p, None, 1)[0])  # two rounded values of size S
    return fit_taylor(hs, remainder, floor)
