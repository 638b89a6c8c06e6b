"""Evaluate a function at many perturbed copies of its inputs in one call.

A gradient check needs the loss at ``x + c·h·p`` for many perturbations ``p``
(one-hot for element checks, dense for directional ones). Doing that one
perturbation at a time, as ``torch.autograd.gradcheck`` does, pays Python and
dispatch overhead per element. Here the inputs are seen as one flat vector,
a whole chunk of perturbed copies is stacked along a leading batch dimension,
and the function runs once per chunk through :func:`torch.func.vmap`; functions
vmap cannot handle (an ``autograd.Function`` without ``setup_context``, random
ops) fall back to a loop over the rows.

>>> flat = FlatInputs.of([torch.zeros(2, 3)])
>>> rows = onehot_rows(flat.values, torch.tensor([0, 4]), torch.tensor([1.0, 2.0]))
>>> rows.tolist()
[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 2.0, 0.0]]
>>> BatchedFn(lambda x: (x ** 2).sum(), flat)(rows).tolist()
[1.0, 4.0]
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

import torch
from torch.func import vmap

from gradlab.errors import GradLabError
from gradlab.limits import LIMITS

__all__ = ["FlatInputs", "BatchedFn", "OnehotBuffer", "onehot_rows", "dense_rows", "chunk_rows",
           "single_threaded_ops"]

# A function's intermediates (x+1, /2, -t, **2 ...) each take about as much
# memory as its input; the chunk is sized so that this many copies fit.
_INTERMEDIATE_COPIES = 8
# Bytes of one stacked chunk beyond which bigger batches stop paying: the
# per-call overhead is amortised, and larger temporaries fall out of the
# (per-core, 2-4 MiB) L2 cache.
_CACHE_BYTES = 2**21
# The same for a function called directly on the stack (no vmap): its per-call
# overhead is a few microseconds, and its temporaries (one per elementwise op)
# should stay in L2. Measured on the seed-001 check (16,800 float64 elements,
# (x+1)/2 then MSE): 2-4 rows per call ~40 us/row, 14 rows ~70 us/row; through
# vmap (~100 us per call) 14 rows per call is fastest.
_DIRECT_CACHE_BYTES = 5 * 2**17  # 640 KiB: 4 rows of the 140x120 grad-check question


@dataclass(frozen=True, eq=False)
class FlatInputs:
    """Several input tensors seen as one flat vector (all in one dtype)."""

    values: torch.Tensor  # (N,) the concatenated, flattened inputs
    shapes: tuple[torch.Size, ...]

    @classmethod
    def of(cls, tensors: Sequence[torch.Tensor]) -> "FlatInputs":
        flat = torch.cat([t.detach().reshape(-1) for t in tensors])
        return cls(flat, tuple(t.shape for t in tensors))

    @property
    def numel(self) -> int:
        return int(self.values.numel())

    def split(self, rows: torch.Tensor) -> list[torch.Tensor]:
        """(m, N) rows -> one (m, *shape) tensor per input."""
        sizes = [int(torch.Size(s).numel()) for s in self.shapes]
        parts = torch.split(rows, sizes, dim=1)
        return [p.reshape(rows.shape[0], *s) for p, s in zip(parts, self.shapes)]

    def unflatten(self, flat: torch.Tensor) -> list[torch.Tensor]:
        """(N,) -> one tensor per input, in its shape."""
        return [t[0] for t in self.split(flat.reshape(1, -1))]

    def locate(self, flat_index: int) -> tuple[int, tuple[int, ...]]:
        """Which input, and which element of it, a flat index points at."""
        start = 0
        for k, shape in enumerate(self.shapes):
            size = int(torch.Size(shape).numel())
            if flat_index < start + size:
                return k, _unravel(flat_index - start, tuple(shape))
            start += size
        raise IndexError(f"flat index {flat_index} is beyond the {start} input elements")


def _unravel(i: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        index.append(i % size)
        i //= size
    return tuple(reversed(index))


def onehot_rows(base: torch.Tensor, index: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """Copies of ``base`` with element ``index[r]`` of row r replaced by ``base[index[r]] + shift[r]``.

    The addition is done in base's dtype, as a user writing ``x[i] += h`` would.
    """
    m = index.shape[0]
    rows = base.expand(m, -1).clone()
    rows[torch.arange(m), index] = base[index] + shift.to(base.dtype)
    return rows


class OnehotBuffer:
    """A reusable stack of copies of ``base`` for one-hot perturbations.

    :func:`onehot_rows` clones the whole base for every chunk: one extra pass
    over every row, as costly as one of the function's own elementwise ops.
    Here the copies are made once; :meth:`perturbed` writes a chunk's
    perturbed entries (``base[index] + shift``, in base's dtype, the same
    values as :func:`onehot_rows`), yields the rows, and puts the base values
    back, so only two entries per row are touched per chunk.

    :meth:`entries` plans the writes for many perturbations at once: the r-th
    goes to buffer row ``r % rows``, so chunks of ``rows`` consecutive
    perturbations (slices of the plan) each fill the buffer from row 0.

    The yielded rows must not escape the ``with`` block: compute from them
    inside it. A function that writes into its input is refused (the buffer
    would no longer hold copies of the base).

    >>> buf = OnehotBuffer(torch.zeros(3), rows=4)
    >>> planned = OnehotBuffer.entries(buf.base, 4, torch.tensor([2, 0]), torch.tensor([1.0, 5.0]))
    >>> with buf.perturbed(*planned) as rows:
    ...     rows.tolist()
    [[0.0, 0.0, 1.0], [5.0, 0.0, 0.0]]
    >>> bool((buf.rows == 0).all())
    True
    """

    def __init__(self, base: torch.Tensor, rows: int):
        self.base = base
        self.rows = base.expand(rows, -1).clone()
        self._flat = self.rows.view(-1)

    @staticmethod
    def entries(base: torch.Tensor, rows: int, index: torch.Tensor, shift: torch.Tensor):
        """(where, perturbed, original) for a buffer of ``rows`` copies of ``base``: flat
        positions and the values to write there (``base[index] + shift`` in base's dtype)."""
        row = torch.arange(index.shape[0]) % rows
        original = base[index]
        return row * base.numel() + index, original + shift.to(base.dtype), original

    @contextmanager
    def perturbed(self, where: torch.Tensor, values: torch.Tensor, original: torch.Tensor):
        """The first ``len(where)`` rows with the planned entries written, restored after."""
        m = where.shape[0]
        if m > self.rows.shape[0]:
            raise ValueError(f"{m} perturbations do not fit the buffer's {self.rows.shape[0]} rows")
        self._flat[where] = values
        version = self.rows._version
        try:
            yield self.rows[:m]
            if self.rows._version != version:
                raise GradLabError("The function modified its input tensor in place; a gradient "
                                   "check needs a function that leaves its inputs unchanged.")
        finally:
            self._flat[where] = original


def dense_rows(base: torch.Tensor, directions: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """``base + shift[r]·directions[r]`` for every row r, in base's dtype."""
    return base + shift.to(base.dtype)[:, None] * directions.to(base.dtype)


def chunk_rows(row_numel: int, itemsize: int, total: int, concurrent: int = 1,
               strategy: str = "vmap") -> int:
    """How many perturbed rows to evaluate at once within ``LIMITS.chunk_bytes``.

    ``concurrent`` chunks may be in flight at once (one per worker thread):
    together they stay within the bound. ``strategy`` is BatchedFn's way of
    calling fn: direct calls pay little per call, so they take smaller,
    cache-friendly chunks.
    """
    row_bytes = max(1, row_numel * itemsize)
    by_memory = LIMITS.chunk_bytes // (row_bytes * _INTERMEDIATE_COPIES * max(1, concurrent))
    cache = _DIRECT_CACHE_BYTES if strategy == "direct" else _CACHE_BYTES
    return max(1, min(total, cache // row_bytes, by_memory))


class BatchedFn:
    """``fn`` evaluated on a stack of flat input rows: (m, N) -> (m, *output shape).

    Three ways, tried in order once per input dtype on two probe rows and kept
    only if they agree with plain calls: ``direct`` (fn already broadcasts over
    a leading batch dimension, as elementwise code does: no overhead), ``vmap``,
    and a ``loop`` over the rows (slowest, always correct).
    """

    def __init__(self, fn: Callable[..., torch.Tensor], flat: FlatInputs):
        self._fn = fn
        self._flat = flat
        self._vmapped = vmap(fn)
        self.strategy: dict[torch.dtype, str] = {}

    def __call__(self, rows: torch.Tensor, parts: Sequence[torch.Tensor] | None = None) -> torch.Tensor:
        """fn on ``rows``; ``parts`` may hold ``self.split(rows)`` already (saves the split)."""
        with torch.no_grad():
            if rows.dtype not in self.strategy:
                self.strategy[rows.dtype] = self._choose(rows[0])
            how = self.strategy[rows.dtype]
            if how == "loop":
                return torch.stack([self._call_one(row) for row in rows])
            call = self._fn if how == "direct" else self._vmapped
            try:
                return call(*(parts if parts is not None else self._flat.split(rows)))
            except GradLabError:
                raise
            except Exception as err:  # noqa: BLE001 - named for the user, with the cause kept
                raise GradLabError(f"The function raised {type(err).__name__} on perturbed "
                                   f"inputs: {err}") from err

    def _call_one(self, row: torch.Tensor) -> torch.Tensor:
        try:
            out = self._fn(*self._flat.unflatten(row))
        except (RuntimeError, TypeError, ValueError) as err:
            kind = "complex" if row.is_complex() else str(row.dtype).removeprefix("torch.")
            raise GradLabError(
                f"The function could not be evaluated on {kind} inputs ({err}). "
                "Check that it accepts tensors of that dtype, or pick another scheme or dtype."
            ) from None
        if not isinstance(out, torch.Tensor):
            raise GradLabError("The function must return a tensor; it returned "
                               f"{type(out).__name__}.")
        return out

    def _choose(self, row: torch.Tensor) -> str:
        # Rows far apart, so a function mixing rows (a sum over the batch) shows it.
        gen = torch.Generator().manual_seed(0)
        noise = torch.randn(row.shape, generator=gen, dtype=torch.float64).to(row.dtype)
        probe = torch.stack([row, row + noise * (1 + row.abs())])
        expected = torch.stack([self._call_one(r) for r in probe])
        for how, call in (("direct", self._fn), ("vmap", self._vmapped)):
            try:
                with warnings.catch_warnings():  # e.g. mse_loss on broadcast shapes
                    warnings.simplefilter("ignore")
                    got = call(*self._flat.split(probe))
            except Exception:  # noqa: BLE001 - any failure means "try the next way"
                continue
            if _same(got, expected):
                return how
        return "loop"


def _same(got, expected: torch.Tensor) -> bool:
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    # A different summation order may change the last bits; more means the
    # function mixes rows or draws random numbers.
    tol = 64 * torch.finfo(expected.dtype).eps if expected.dtype.is_floating_point or expected.is_complex() else 0
    return bool(torch.allclose(got, expected, rtol=tol, atol=0, equal_nan=True))


@contextmanager
def single_threaded_ops():
    """Run torch ops on one thread inside the block, restoring the setting after.

    A check's chunks are small: splitting each small op across cores costs more in
    synchronisation than it gains (measured 10x slower on a busy 2-core machine,
    where every op waits for the slowest core).

    >>> with single_threaded_ops():
    ...     torch.get_num_threads()
    1
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
