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

The rows are made by :mod:`gradlab.check.stencil` or written into an :class:`OnehotBuffer`.

>>> flat = FlatInputs.of([torch.zeros(2, 3)])
>>> rows = torch.tensor([[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 2.0, 0.0]])
>>> BatchedFn(lambda x: (x ** 2).sum(), flat)(rows).tolist()  # (rows, output values)
[[1.0], [4.0]]
"""

from __future__ import annotations

import functools
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch.func import vmap

from gradlab.check.outputs import OutputLayout, unravel
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import facts

__all__ = ["FEW_ROWS", "FlatInputs", "BatchedFn", "OnehotBuffer", "chunk_rows", "single_threaded_ops"]

# A function's intermediates (x+1, /2, -t, **2 ...) each take about as much
# memory as its input; the chunk is sized so that this many copies fit.
_INTERMEDIATE_COPIES = 8
# Bytes of one stacked chunk beyond which bigger batches stop paying: vmap's
# per-call overhead (~100 us) is amortised, and larger temporaries fall out of
# the cache. Measured (full checks, one worker, same run, 2 MiB -> 8 MiB): a
# 256x256 weight under tanh(x @ W).sum() 13.1 -> 8.2 s (4 -> 16 rows a call;
# its temporaries are small next to its rows), 140x120 elementwise 3.15 -> 2.62 s,
# log_softmax of 64x256 1.33 -> 1.05 s.
_CACHE_BYTES = 2**23
# The same for a function called directly on the stack (no vmap): its per-call
# overhead is a few microseconds, and its temporaries (one per elementwise op)
# should stay in L2. Measured on the 140x120 grad check question (16,800 float64 elements,
# (x+1)/2 then MSE): 2-4 rows per call ~40 us/row, 14 rows ~70 us/row; through
# vmap (~100 us per call) 14 rows per call is fastest.
_DIRECT_CACHE_BYTES = 5 * 2**17  # 640 KiB: 4 rows of the 140x120 grad-check question


@dataclass(frozen=True, eq=False)
class FlatInputs:
    """Several input tensors seen as one flat vector.

    ``values`` is held in the inputs' promoted dtype (no value is rounded); each
    input goes back to fn in its own dtype (``dtypes``, through :meth:`cast`).
    ``names`` and ``complex_parts`` label the elements (a complex input is
    checked through its real view, whose last dimension is real, imaginary).
    """

    values: torch.Tensor  # (N,) the concatenated, flattened inputs
    shapes: tuple[torch.Size, ...]
    dtypes: tuple[torch.dtype, ...] = ()
    names: tuple[str, ...] = ()
    complex_parts: tuple[bool, ...] = ()

    @classmethod
    def of(cls, tensors: Sequence[torch.Tensor], names: Sequence[str] | None = None,
           complex_parts: Sequence[bool] | None = None) -> "FlatInputs":
        dtype = functools.reduce(torch.promote_types, [t.dtype for t in tensors])
        flat = torch.cat([t.detach().to(dtype).reshape(-1) for t in tensors])
        if names is None:
            names = ["x"] if len(tensors) == 1 else [f"x{k}" for k in range(len(tensors))]
        complex_parts = tuple(complex_parts) if complex_parts is not None else (False,) * len(tensors)
        return cls(flat, tuple(t.shape for t in tensors), tuple(t.dtype for t in tensors), tuple(names),
                   complex_parts)

    @property
    def numel(self) -> int:
        return int(self.values.numel())

    def split(self, rows: torch.Tensor) -> list[torch.Tensor]:
        """(m, N) rows -> one (m, *shape) view per input (in the rows' dtype; see :meth:`cast`)."""
        if len(self.shapes) == 1:  # one input: the same view without torch.split's Python layers (~10 us)
            return [rows.reshape(rows.shape[0], *self.shapes[0])]
        sizes = [int(torch.Size(s).numel()) for s in self.shapes]
        parts = torch.split(rows, sizes, dim=1)
        return [p.reshape(rows.shape[0], *s) for p, s in zip(parts, self.shapes)]

    def cast(self, parts: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Each part in its input's own dtype (its complex partner when the rows are complex)."""
        out = []
        for part, dtype in zip(parts, self.dtypes or (parts[0].dtype,) * len(parts)):
            if part.is_complex() and not dtype.is_complex:
                dtype = facts(dtype).complex_partner or part.dtype  # the complex step's rows
            out.append(part if part.dtype == dtype else part.to(dtype))
        return out

    def unflatten(self, flat: torch.Tensor) -> list[torch.Tensor]:
        """(N,) -> one tensor per input, in its shape and dtype."""
        return [t[0] for t in self.cast(self.split(flat.reshape(1, -1)))]

    def locate(self, flat_index: int) -> tuple[int, tuple[int, ...]]:
        """Which input, and which element of it, a flat index points at."""
        start = 0
        for k, shape in enumerate(self.shapes):
            size = int(torch.Size(shape).numel())
            if flat_index < start + size:
                return k, unravel(flat_index - start, tuple(shape))
            start += size
        raise IndexError(f"flat index {flat_index} is beyond the {start} input elements")

    def label(self, k: int, index: tuple[int, ...]) -> str:
        """The name of element ``index`` of input k: ``x[3, 1]``, or ``z[2].imag`` for a complex one."""
        name = self.names[k] if self.names else (f"x{k}" if len(self.shapes) > 1 else "x")
        if self.complex_parts and self.complex_parts[k]:
            part = ".imag" if index[-1] else ".real"
            index = index[:-1]
            return (f"{name}[{', '.join(map(str, index))}]" if index else name) + part
        return f"{name}[{', '.join(map(str, index))}]"


#: Dtypes numpy computes in as torch does (IEEE, in the dtype; not float16's detour through float32).
_NUMPY_EXACT = (torch.float64, torch.float32)


class OnehotBuffer:
    """A reusable stack of copies of ``base`` for one-hot perturbations.

    :func:`gradlab.check.stencil.onehot_rows` clones the whole base for every chunk: one extra pass
    over every row, as costly as one of the function's own elementwise ops.
    Here the copies are made once; :meth:`perturbed` writes a chunk's
    perturbed entries (``base[index] + shift``, in base's dtype, the same
    values as :func:`gradlab.check.stencil.onehot_rows`), yields the rows, and puts the base values
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
        if base.dtype in _NUMPY_EXACT and not shift.is_complex():  # numpy: the same arithmetic,
            # without six small torch ops' dispatch (~30 us of a small check)
            at = index.numpy()
            where = np.arange(at.shape[0]) % rows * base.numel() + at
            original = base.numpy()[at]
            values = original + shift.numpy().astype(original.dtype)
            return torch.from_numpy(where), torch.from_numpy(values), torch.from_numpy(original)
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
    together they stay within the bound. ``strategy`` is BatchedFn's way of
    calling fn: direct calls pay little per call, so they take smaller,
    cache-friendly chunks.
    """
    row_bytes = max(1, row_numel * itemsize)
    by_memory = LIMITS.chunk_bytes // (row_bytes * _INTERMEDIATE_COPIES * max(1, concurrent))
    cache = _DIRECT_CACHE_BYTES if strategy == "direct" else _CACHE_BYTES
    return max(1, min(total, cache // row_bytes, by_memory))


class BatchedFn:
    """``fn`` evaluated on a stack of flat input rows: (m, N) -> (m, output values).

    ``fn`` takes the inputs' parts and returns a tensor, or a tuple, list or dict
    of tensors (flattened by :class:`gradlab.check.outputs.OutputLayout`). It is
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
        each = zip(*(p.unbind(0) for p in parts))  # every row's views in one op per part, not one per row
        if rows is None or parts[0].shape[0] < SWAP_ROWS:
            return torch.stack([self._one(*row) for row in each])
        with rows():  # a row's output may be a view of the tensors the next row overwrites: cloned
            return torch.stack([self._one(*row).clone() for row in each])

    def _reference_call(self, how: str, parts) -> torch.Tensor:
        return self._guarded(lambda: self._loop(parts) if how == "loop" else vmap(self._one)(*parts))

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
