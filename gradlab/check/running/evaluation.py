"""The evaluation engine: finite differences for many perturbations, a chunk at a time.

An :class:`Evaluator` computes perturbations ``a..b-1`` through the
``evaluate(a, b)`` its :meth:`~Evaluator.worker` returns (each worker thread
gets one, with buffers of its own), and :meth:`~Evaluator.finish` returns the
(estimate, scale) arrays once every chunk ran. :func:`run_chunks` drives one
on the calling thread or on worker threads.

>>> from gradlab.check.running.problem import numeric_problem
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
>>> p = numeric_problem(lambda t: t ** 2, [x], "sum", None, get_scheme("central"), 1e-3, torch.float64)
>>> index = torch.arange(3)
>>> est, _ = run_chunks(onehot_evaluator(p, index, chunk=2), 3, chunk=2)
>>> est.round(decimals=9).tolist()  # 2x
[2.0, 4.0, 6.0]
"""

from __future__ import annotations

import queue
import threading
import time
from abc import ABC, abstractmethod
from typing import Callable

import numpy as np
import torch

from gradlab.check.differences.stencil import (centre_weight, combine, corrected_sides, dense_maker, entry_correction,
                                               moving_offsets, moving_weights, nominal_correction, numeric_base,
                                               one_sided, roundoff_scale, shifts, side_points)
from gradlab.check.inputs.onehot_buffer import OnehotBuffer
from gradlab.check.running.batching import chunk_rows, single_threaded_ops
from gradlab.check.running.problem import NumericProblem, reduce_outputs
from gradlab.limits import LIMITS

__all__ = ["Evaluator", "SummedOnehot", "SharedOnehot", "Onehot", "Dense", "onehot_evaluator",
           "chunk_size", "run_chunks"]

Progress = Callable[[int, int], None]

#: Seconds of predicted remaining work above which run_chunks hands the rest to threads:
#: starting and joining two threads costs ~1 ms, more than a small check's whole evaluation.
THREADS_WORTHWHILE = 0.005
Evaluate = Callable[[int, int], None]


class Evaluator(ABC):
    """Finite differences for perturbations 0..total-1, computed a chunk at a time.

    After :meth:`finish`, ``sides`` holds the (left, right) one-sided differences at ±h
    of every perturbation when the scheme has the points -1 and +1 (else None): the
    kink screen of :mod:`gradlab.check.differences.kinks`, at no extra call of fn.
    """

    sides: tuple[torch.Tensor, torch.Tensor] | None = None

    @abstractmethod
    def worker(self) -> Evaluate:
        """An ``evaluate(a, b)`` storing perturbations a..b-1; one per thread."""

    @abstractmethod
    def finish(self):
        """The results, once every chunk was evaluated."""


class SummedOnehot(Evaluator):
    """sum/mean on real inputs: each chunk only writes its reduced values; combined at the end.

    Row ``j·K + k`` of a chunk is perturbation j at stencil point k, so the
    reduced values of perturbations a..b-1 fill rows a·K..b·K-1 of a (total·K)
    array, and the stencil is combined in float64 for all of them at once. Each
    worker writes the perturbed rows into an :class:`OnehotBuffer` of its own,
    so no copy of the base is made per chunk.
    """

    def __init__(self, p: NumericProblem, index: torch.Tensor, chunk: int, steps: torch.Tensor):
        self.p, self.steps, self.total = p, steps, index.shape[0]
        offsets = moving_offsets(p)
        self.points = offsets.shape[0]
        self.raw = torch.empty(self.total * self.points, dtype=p.base_rows.dtype)
        self.rows = self.points * chunk
        # in numpy (the same products): a small check's handful of values, where a torch op costs 5-15 us
        moves = torch.from_numpy((steps.numpy()[:, None] * offsets.numpy()).reshape(-1))
        perturbed = torch.from_numpy(index.numpy().repeat(self.points))
        self.planned = OnehotBuffer.entries(p.flat.values, self.rows, perturbed, moves)
        corr = entry_correction(p, perturbed, moves, self.planned[1], self.planned[2])
        self.correction = None if corr is None else corr.reshape(self.total, self.points)
        self.reduce = torch.sum if p.reduction == "sum" else torch.mean

    def worker(self) -> Evaluate:
        p, raw, points = self.p, self.raw, self.points
        where, values, original = self.planned
        buffer = OnehotBuffer(p.flat.values, self.rows)
        parts: dict[int, list] = {}

        def evaluate(a: int, b: int) -> None:
            lo, hi = a * points, b * points
            m = hi - lo
            if m not in parts:
                parts[m] = p.flat.split(buffer.rows[:m])
            with buffer.perturbed(where[lo:hi], values[lo:hi], original[lo:hi]) as stacked:
                y = p.batched(stacked, parts[m]).reshape(m, -1)
                if y.dtype == raw.dtype:
                    self.reduce(y, dim=1, out=raw[lo:hi])
                else:
                    raw[lo:hi] = self.reduce(y, dim=1)

        return evaluate

    def finish(self):
        # numpy on views: a small check's handful of values, where each torch op costs 5-15 us
        p = self.p
        raw = self.raw.to(torch.float64).numpy().reshape(self.total, self.points)
        if self.correction is not None:  # each point moved back to its nominal place (stencil.nominal_correction)
            raw = raw + self.correction.numpy()
        combined = raw @ moving_weights(p).numpy()
        centre, base, steps = centre_weight(p), p.loss, self.steps.numpy()
        if centre:
            combined = combined + centre * base
        where = side_points(p)
        if where is not None:
            self.sides = (torch.from_numpy((base - raw[:, where[0]]) / steps),
                          torch.from_numpy((raw[:, where[1]] - base) / steps))
        return torch.from_numpy(combined / steps), roundoff_scale(p, None, self.total)


class SharedOnehot(Evaluator):
    """Any reduction and scheme, for problems that differ only in their reduction (one fn,
    one x, one scheme): fn runs once per perturbed row, each problem reduces and combines
    the same outputs. :meth:`finish` returns one (estimate, scale) pair per problem."""

    def __init__(self, problems: list[NumericProblem], index: torch.Tensor, chunk: int,
                 steps: torch.Tensor):
        self.problems, self.index, self.chunk, self.steps = problems, index, chunk, steps
        self.points = len(shifts(problems[0], torch.ones(1, dtype=torch.float64)))
        total = index.shape[0]
        self.results = [(torch.empty(total, dtype=torch.float64), torch.empty(total, dtype=torch.float64))
                        for _ in problems]
        if side_points(problems[0]) is not None:
            self.sides = (torch.empty(total, dtype=torch.float64), torch.empty(total, dtype=torch.float64))

    def worker(self) -> Evaluate:
        first, points, steps = self.problems[0], self.points, self.steps
        buffers: dict[bool, OnehotBuffer] = {}  # real and complex rows

        def evaluate(a: int, b: int) -> None:
            moves = shifts(first, steps[a:b])
            base = numeric_base(first, moves)
            key = moves.is_complex()
            if key not in buffers:
                buffers[key] = OnehotBuffer(base, points * self.chunk)
            index = self.index[a:b].repeat(points)
            planned = OnehotBuffer.entries(base, points * self.chunk, index, moves.reshape(-1))
            h = steps[a:b]
            with buffers[key].perturbed(*planned) as rows:  # outputs may be views of rows: use them inside
                outputs = first.batched(rows)
                for p, (est, scale) in zip(self.problems, self.results):
                    est[a:b], scale[a:b] = combine(p, outputs, h)
                    corr = entry_correction(p, index, moves.reshape(-1), planned[1], planned[2])
                    if corr is not None:  # each point moved back to its nominal place
                        est[a:b] += moving_weights(p) @ corr.reshape(moves.shape) / h
                if self.sides is not None:
                    corr = entry_correction(first, index, moves.reshape(-1), planned[1], planned[2])
                    sides = corrected_sides(first, one_sided(first, outputs, h),
                                            None if corr is None else corr.reshape(moves.shape), h)
                    self.sides[0][a:b], self.sides[1][a:b] = sides

        return evaluate

    def finish(self):
        return self.results


class Onehot(SharedOnehot):
    """:class:`SharedOnehot` for one problem: :meth:`finish` returns its (estimate, scale)."""

    def __init__(self, p: NumericProblem, index: torch.Tensor, chunk: int, steps: torch.Tensor):
        super().__init__([p], index, chunk, steps)

    def finish(self):
        return self.results[0]


class Dense(Evaluator):
    """Dense directions (directional mode; few of them), each at the problem's step."""

    def __init__(self, p: NumericProblem, directions: torch.Tensor):
        total = directions.shape[0]
        self.p, self.directions = p, directions
        self.steps = torch.full((total,), p.step, dtype=torch.float64)
        self.est = torch.empty(total, dtype=torch.float64)
        self.scale = torch.empty(total, dtype=torch.float64)
        self._weights = moving_weights(p)
        self._centre = centre_weight(p)
        if side_points(p) is not None:
            self.sides = (torch.empty(total, dtype=torch.float64), torch.empty(total, dtype=torch.float64))

    def worker(self) -> Evaluate:
        def evaluate(a: int, b: int) -> None:
            p, h = self.p, self.steps[a:b]
            make, moves = dense_maker(p, self.directions[a:b]), shifts(p, h)
            rows = make(moves)
            outputs = p.batched(rows)
            if p.reduction != "none" and not p.scheme.complex_step:
                self._reduced(a, b, outputs, nominal_correction(p, make, moves, rows), h)
                return
            est, self.scale[a:b] = combine(p, outputs, h)
            corr = nominal_correction(p, make, moves, rows)  # each point moved back to its nominal place
            self.est[a:b] = est if corr is None else est + moving_weights(p) @ corr / h
            if self.sides is not None:
                self.sides[0][a:b], self.sides[1][a:b] = corrected_sides(p, one_sided(p, outputs, h), corr, h)

        return evaluate

    def _reduced(self, a: int, b: int, outputs: torch.Tensor, corr: torch.Tensor | None, h: torch.Tensor) -> None:
        """sum/mean: the stencil's reduced values moved to their nominal points, then combined
        (as SummedOnehot.finish does). In numpy, on views of the result tensors: a handful of
        values, where each torch op costs 5-10 us (most of a small module's evaluation)."""
        p = self.p
        values = reduce_outputs(outputs, p.reduction).reshape(self._weights.shape[0], b - a)
        values = values.to(torch.float64).numpy()
        if corr is not None:
            values = values + corr.numpy()
        base, step = p.loss, h.numpy()  # sum/mean: the reduced value at x
        est, scale = self.est.numpy(), self.scale.numpy()
        est[a:b] = (self._weights.numpy() @ values + self._centre * base) / step
        scale[a:b] = abs(base)
        if self.sides is not None:
            left, right = side_points(p)
            self.sides[0].numpy()[a:b] = (base - values[left]) / step
            self.sides[1].numpy()[a:b] = (values[right] - base) / step

    def finish(self):
        return self.est, self.scale


def onehot_evaluator(p: NumericProblem, index: torch.Tensor, chunk: int,
                     h: torch.Tensor | None = None) -> Evaluator:
    """The evaluator for one-hot perturbations of ``index``, with one step per
    perturbation ``h`` (default: p.step for all)."""
    steps = torch.full((index.shape[0],), p.step, dtype=torch.float64) if h is None else h
    if p.scheme.complex_step or p.reduction == "none":
        return Onehot(p, index, chunk, steps)
    return SummedOnehot(p, index, chunk, steps)


def chunk_size(p: NumericProblem, total: int) -> int:
    """Perturbations per chunk: sized for LIMITS.check_workers chunks in flight, so the
    chunks (and the arithmetic of every estimate) do not depend on the number of workers."""
    points = max(1, sum(c != 0 for c in p.scheme.offsets))
    # total·points rows in all: a check of a few perturbations is one call of fn (counting
    # perturbations as rows split 2 directions into 2 calls of 2 rows)
    rows = chunk_rows(p.flat.numel, p.flat.values.element_size(), total * points, LIMITS.check_workers,
                      p.batched.strategy.get(p.dtype, "vmap"))
    return max(1, rows // points)


def run_chunks(evaluator: Evaluator, total: int, chunk: int, progress: Progress | None = None,
               workers: int = 1):
    """``evaluator.finish()`` after evaluating ``total`` perturbations, a chunk at a time.

    With ``workers`` > 1 each worker thread gets its own ``evaluate`` and pulls
    chunks from a shared counter (torch releases the GIL inside its ops, so the
    threads' ops run on different cores). The chunks are the same whatever the
    number of workers, and each is computed by the same ops. The first chunk runs on
    the calling thread; threads start only when the rest would take longer than
    THREADS_WORTHWHILE at that chunk's pace. ``progress(done,
    total)`` is called from the calling thread, after every chunk, with ``done``
    increasing to ``total``; an exception from it or from a worker stops every
    worker (each finishes at most the chunk it is on) and propagates.

    Torch's intra-op threads are off meanwhile (process-wide): see
    :func:`gradlab.check.running.batching.single_threaded_ops`.
    """
    starts = list(range(0, total, chunk))
    workers = max(1, min(workers, len(starts)))
    with single_threaded_ops():
        evaluate, rest = evaluator.worker(), starts
        if workers > 1:  # time the first chunk: threads pay only when the rest is long
            began = time.perf_counter()
            _chunk(evaluate, starts[0], chunk, total, progress)
            rest = starts[1:]
            if (time.perf_counter() - began) * len(rest) > THREADS_WORTHWHILE:
                _in_threads(rest, chunk, total, evaluator, progress, workers, done=min(chunk, total))
                return evaluator.finish()
        for a in rest:
            _chunk(evaluate, a, chunk, total, progress)
        return evaluator.finish()


def _chunk(evaluate: Evaluate, a: int, chunk: int, total: int, progress: Progress | None) -> None:
    b = min(total, a + chunk)
    evaluate(a, b)
    if progress is not None:
        progress(b, total)


def _in_threads(starts, chunk, total, evaluator: Evaluator, progress, workers, done: int = 0) -> None:
    """run_chunks with ``workers`` threads; progress and exceptions go through a queue.

    The queue holds at most ``workers`` reports: a worker whose report the calling thread has
    not taken yet waits before its next chunk, so on a loaded machine (the calling thread
    scheduled late) the workers stay within a chunk or two of what progress has seen, and an
    exception from progress stops them there, not at the end of the check."""
    jobs, lock, stop, reports = iter(starts), threading.Lock(), threading.Event(), queue.Queue(maxsize=workers)

    def report(item) -> None:
        while not stop.is_set():
            try:
                reports.put(item, timeout=0.05)
                return
            except queue.Full:
                continue
        try:  # stopping: the calling thread may read no more; never wait for it
            reports.put_nowait(item)
        except queue.Full:
            pass

    @np.errstate(all="ignore")  # numpy's error handling is per thread: quiet as first_order's
    def work() -> None:
        try:
            torch.set_num_threads(1)  # OpenMP's thread count is per calling thread
            evaluate = evaluator.worker()
            while not stop.is_set():
                with lock:
                    a = next(jobs, None)
                if a is None:
                    break
                b = min(total, a + chunk)
                evaluate(a, b)
                report(b - a)
        except BaseException as err:  # noqa: BLE001 - handed to the calling thread, re-raised there
            report(err)
            stop.set()
        finally:
            report(None)

    threads = [threading.Thread(target=work, name=f"gradlab-check-{k}", daemon=True)
               for k in range(workers)]
    for t in threads:
        t.start()
    _collect(reports, workers, total, progress, stop, threads, done)


def _collect(reports, running, total, progress, stop, threads, done: int = 0) -> None:
    """Relay the workers' reports to ``progress`` until all are done; re-raise their errors."""
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
