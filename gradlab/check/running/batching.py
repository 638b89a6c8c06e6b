"""Evaluate a function at many perturbed copies of its inputs in one call.

A gradient check needs the loss at ``x + c·h·p`` for many perturbations ``p``
(one-hot for element checks, dense for directional ones). Doing that one
perturbation at a time, as ``torch.autograd.gradcheck`` does, pays Python and
dispatch overhead per element. Here the inputs are seen as one flat vector,
a whole chunk of perturbed copies is stacked along a leading batch dimension,
and the function runs once per chunk. Batching never changes what fn computes:
the way of calling it (:class:`BatchedFn`) is chosen at the user's own input
only, through :func:`torch.func.vmap` where that gives what a plain call gives,
else a loop over the rows (an ``autograd.Function`` without ``setup_context``,
random ops, data-dependent control flow); a direct call on the stack only where
it proves equal to those on the check's own rows.

The rows are made by :mod:`gradlab.check.differences.stencil` or written into a
:class:`~gradlab.check.inputs.onehot_buffer.OnehotBuffer`; :class:`~gradlab.check.inputs.flat_inputs.FlatInputs`
(also imported from here) splits them into fn's arguments.

>>> flat = FlatInputs.of([torch.zeros(2, 3)])
>>> rows = torch.tensor([[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 2.0, 0.0]])
>>> BatchedFn(lambda x: (x ** 2).sum(), flat)(rows).tolist()  # (rows, output values)
[[1.0], [4.0]]
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Callable, Sequence

import torch
from torch.func import vmap

from gradlab.check.inputs.flat_inputs import FlatInputs
from gradlab.check.inputs.outputs import OutputLayout
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS

__all__ = ["FEW_ROWS", "FlatInputs", "BatchedFn", "chunk_rows", "memory_rows", "single_threaded_ops"]

# A function's intermediates (x+1, /2, -t, **2 ...) each take about as much
# memory as its input; the chunk is sized so that this many copies fit.
_INTERMEDIATE_COPIES = 8
# Bytes of one stacked chunk beyond which bigger batches stop paying: vmap's
# per-call overhead (~100 us) is amortised, and larger temporaries fall out of
# the cache. Full checks on one worker take, at 8 MiB against 2 MiB: a
# 256x256 weight under tanh(x @ W).sum() 8.2 s against 13.1 (16 rows a call against 4;
# its temporaries are small next to its rows), 140x120 elementwise 2.62 s against 3.15,
# log_softmax of 64x256 1.05 s against 1.33.
_CACHE_BYTES = 2**23
# The same for a function called directly on the stack (no vmap): its per-call
# overhead is a few microseconds, and its temporaries (one per elementwise op)
# should stay in L2. Measured on the 140x120 grad check question (16,800 float64 elements,
# (x+1)/2 then MSE): 2-4 rows per call ~40 us/row, 14 rows ~70 us/row; through
# vmap (~100 us per call) 14 rows per call is fastest.
_DIRECT_CACHE_BYTES = 5 * 2**17  # 640 KiB: 4 rows of the 140x120 grad-check question


#: Rows a check expects to evaluate at most for BatchedFn to loop over them without choosing a
#: faster way (see BatchedFn's ``few_rows``): the loop's cost per row is about fn's own, the
#: choice's is a vmapped call and two direct ones.
FEW_ROWS = 12


#: Rows from which a module's loop swaps its parameters once (fn's ``rows``) rather than per
#: call: the swap costs about two calls' worth of functional_call's own (PReLU, Linear,
#: Embedding, RMSNorm: even at 2 rows, 10-35 % cheaper from 3).
SWAP_ROWS = 3


def chunk_rows(row_numel: int, itemsize: int, total: int, concurrent: int = 1,
               strategy: str = "vmap") -> int:
    """How many perturbed rows to evaluate at once within ``LIMITS.chunk_bytes``.

    ``concurrent`` chunks may be in flight at once (one per worker thread):
    together they stay within that limit. ``strategy`` is BatchedFn's way of
    calling fn: direct calls pay little per call, so they take smaller,
    cache-friendly chunks.
    """
    row_bytes = max(1, row_numel * itemsize)
    cache = _DIRECT_CACHE_BYTES if strategy == "direct" else _CACHE_BYTES
    return max(1, min(total, cache // row_bytes, memory_rows(row_numel, itemsize, concurrent)))


def memory_rows(row_numel: int, itemsize: int = 8, concurrent: int = 1) -> int:
    """How many perturbed rows of ``row_numel`` elements fit in ``LIMITS.chunk_bytes`` with
    their intermediates (at least 1).

    >>> memory_rows(1000), memory_rows(10**7)
    (4194, 1)
    """
    row_bytes = max(1, row_numel * itemsize)
    return max(1, LIMITS.chunk_bytes // (row_bytes * _INTERMEDIATE_COPIES * max(1, concurrent)))


class BatchedFn:
    """``fn`` evaluated on a stack of flat input rows: (m, N) -> (m, output values).

    ``fn`` takes the inputs' parts and returns a tensor, or a tuple, list or dict
    of tensors (flattened by :class:`gradlab.check.inputs.outputs.OutputLayout`). It is
    only ever evaluated at the user's input and at the stencil points of the
    check. The way of calling it is chosen once per dtype, at the user's input:
    ``vmap`` when ``vmap(fn)(x[None])`` equals ``fn(x)`` (up to summation order),
    else a ``loop`` over the rows (slowest, always what fn computes). A ``direct``
    call on the stack (fn broadcasting over a leading batch dimension, as
    elementwise code does: no overhead) is a candidate when it gives ``fn(x)`` on
    one and on two stacked copies of x; it is then compared with the vmap or loop
    result on the first chunk of every size before it is trusted, and dropped for
    good at the first difference (a function mixing rows, or squeezing the batch
    dimension away). A module over its parameters (fn with ``rows``) is never called
    directly: stacked weights are a batch of weights no layer is written for (a Linear
    refuses them, an elementwise layer broadcasts them wrongly), and the two attempts
    cost a tenth of a millisecond a check.

    ``few_rows``: the caller expects to evaluate only a few rows (:data:`FEW_ROWS`), so the loop
    is taken without trying the others: choosing costs a vmapped call and two direct ones, more
    than a loop over a dozen rows of a small module (PReLU: 0.33 ms to choose, 0.035 ms a row).
    ``at_x``: fn's output at the input, from a call the caller made already (on contiguous
    copies of the inputs, in their dtype): a looped row's own computation, so it stands for
    the loop's call at x.
    """

    def __init__(self, fn: Callable, flat: FlatInputs, few_rows: bool = False, at_x=None):
        self._fn = fn
        self._flat = flat
        self.few_rows = few_rows
        self._at_x = at_x if few_rows else None  # only the few-rows loop takes it: not held otherwise
        self.layout: OutputLayout | None = None
        self.strategy: dict[torch.dtype, str] = {}
        self._reference: dict[torch.dtype, str] = {}
        self._proven: set[tuple[torch.dtype, int]] = set()
        self._at_input: dict[torch.dtype, torch.Tensor] = {}
        self._stacked = False  # vmap gets each part as a stack of its own (see _vmapped)

    def at_input(self, dtype: torch.dtype) -> torch.Tensor:
        """fn at the user's input in ``dtype``, (1, output values), as the reference way of
        calling it (vmap or the loop) gives it: choosing the strategy evaluated it already."""
        if dtype not in self.strategy:
            with torch.no_grad():
                self._choose(self._flat.values.to(dtype)[None])
        return self._at_input[dtype]

    def __call__(self, rows: torch.Tensor, parts: Sequence[torch.Tensor] | None = None) -> torch.Tensor:
        """fn on ``rows``; ``parts`` may hold ``self.split(rows)`` already (saves the split)."""
        with torch.no_grad():
            dtype, m = rows.dtype, rows.shape[0]
            if dtype not in self.strategy:
                self._choose(rows)
            parts = self._flat.cast(parts if parts is not None else self._flat.split(rows))
            if self.strategy[dtype] == "direct":
                if (dtype, m) in self._proven:
                    return self._guarded(lambda: self._direct(parts, m))
                return self._prove_direct(dtype, parts, m)
            return self._reference_call(self.strategy[dtype], parts)

    def _one(self, *parts: torch.Tensor) -> torch.Tensor:
        return self.layout.flatten(self._fn(*parts))

    def _direct(self, parts, m: int) -> torch.Tensor:
        return self.layout.flatten_batched(self._fn(*parts), m)

    def _loop(self, parts) -> torch.Tensor:
        rows = getattr(self._fn, "rows", None)  # fn's cheap way over many rows (a module's: one swap)
        if rows is None or parts[0].shape[0] < SWAP_ROWS:
            return torch.stack([self._one(*row) for row in self._flat.alone(parts)])
        each = zip(*(p.unbind(0) for p in parts))  # rows() copies them into the module's own tensors
        with rows():  # a row's output may be a view of the tensors the next row overwrites: cloned
            return torch.stack([self._one(*row).clone() for row in each])

    def _reference_call(self, how: str, parts) -> torch.Tensor:
        return self._guarded(lambda: self._loop(parts) if how == "loop" else self._vmapped(parts))

    def _vmapped(self, parts) -> torch.Tensor:
        """fn vmapped over the rows. The parts of several inputs are views of the rows, each row a
        whole row of every input apart: a layout that some batching rules refuse on a stack of
        more than one row (native_group_norm: "Expected X.is_contiguous(memory_format)"), though
        vmap at the input's own row passed. Then each part as a stack of its own, from then on."""
        if self._stacked:
            return vmap(self._one)(*self._flat.stacked(parts))
        try:
            return vmap(self._one)(*parts)
        except GradLabError:
            raise
        except Exception:  # noqa: BLE001 - tried again on stacks of their own, which raise what fn raises
            stacks = self._flat.stacked(parts)
            if all(q is p for q, p in zip(stacks, parts)):
                raise
            out = vmap(self._one)(*stacks)
            self._stacked = True
            return out

    def _prove_direct(self, dtype, parts, m: int) -> torch.Tensor:
        """The direct call on ``m`` rows, trusted for this size if its first two and last two
        rows are what the reference way gives for them alone (a function mixing rows, such as
        a mean over the batch, shows there); else the reference way, from now on."""
        got = _attempt(lambda: self._direct(parts, m))
        probe = torch.tensor(sorted({0, 1, m - 2, m - 1} & set(range(m))))
        if isinstance(got, torch.Tensor) and got.shape[:1] == (m,):
            expected = self._reference_call(self._reference[dtype], [p[probe] for p in parts])
            if _same(got[probe], expected):
                self._proven.add((dtype, m))
                return got
        self.strategy[dtype] = self._reference[dtype]
        return self._reference_call(self._reference[dtype], parts)

    @staticmethod
    def _guarded(call) -> torch.Tensor:
        try:
            return call()
        except GradLabError:
            raise
        except Exception as err:  # noqa: BLE001 - named for the user, with the cause kept
            raise GradLabError(f"The function raised {type(err).__name__} at a finite-difference "
                               f"point (the input given, one element moved by a step): {err}") from err

    def _choose(self, rows: torch.Tensor) -> None:
        """Strategy for rows' dtype, from fn at the user's input only (in that dtype)."""
        if self.few_rows and self._at_x is not None and rows.dtype == self._flat.values.dtype:
            out, self._at_x, parts = self._at_x, None, None  # the loop needs no parts of x's row
        else:
            base = self._flat.values.to(rows.dtype)[None]
            out, parts = None, self._flat.cast(self._flat.split(base))
        try:
            out = self._fn(*(p[0] for p in parts)) if out is None else out
        except (RuntimeError, TypeError, ValueError, IndexError) as err:
            raise GradLabError(f"The function could not be evaluated at the input given, in "
                               f"{str(rows.dtype).removeprefix('torch.')} ({err}).") from None
        if self.layout is None:
            self.layout = OutputLayout.of(out)
        expected = self.layout.flatten(out)[None]
        if self.few_rows:
            self._reference[rows.dtype] = self.strategy[rows.dtype] = "loop"
            self._at_input[rows.dtype] = expected.clone()
            return
        vmapped = _attempt(lambda: vmap(self._one)(*parts))
        reference = "vmap" if _same(vmapped, expected) else "loop"
        self._reference[rows.dtype] = reference
        # what a call on the input's row gives (the loop's row is fn's own output); a copy, not
        # a view of the input (an fn returning its input)
        self._at_input[rows.dtype] = (vmapped if reference == "vmap" else expected).clone()
        if getattr(self._fn, "rows", None) is not None:  # a module over its parameters: no direct call
            self.strategy[rows.dtype] = reference
            return
        two = self._flat.cast(self._flat.split(base.expand(2, -1)))
        direct = (_same(_attempt(lambda: self._direct(parts, 1)), expected)
                  and _same(_attempt(lambda: self._direct(two, 2)), expected.expand(2, -1)))
        self.strategy[rows.dtype] = "direct" if direct else reference


def _attempt(call):
    """call(), or None if it raised (any failure means "not this way"); warnings silenced
    (e.g. mse_loss on the broadcast shapes of a direct call)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call()
    except Exception:  # noqa: BLE001
        return None


def _same(got, expected: torch.Tensor) -> bool:
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    if torch.equal(got, expected):  # the usual case, in one op (allclose takes ~8, ~25 us): equal is close
        return True
    # A different summation order may change the last bits; more means the
    # function mixes rows or draws random numbers.
    tol = 64 * torch.finfo(expected.dtype).eps if expected.dtype.is_floating_point or expected.is_complex() else 0
    return bool(torch.allclose(got, expected, rtol=tol, atol=0, equal_nan=True))


@contextmanager
def single_threaded_ops():
    """Run torch ops on one thread inside the block, restoring the setting after.

    A check's chunks are small: splitting each small op across cores costs more in
    synchronisation than it gains (10x slower on a busy 2-core machine,
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
