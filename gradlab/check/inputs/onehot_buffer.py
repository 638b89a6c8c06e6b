"""A reusable stack of copies of the flat inputs, for one-hot perturbations written in place.

:class:`OnehotBuffer` is what :mod:`gradlab.check.running.evaluation` evaluates one-hot perturbations
on: the copies are made once per worker, and each chunk writes and then restores only its
perturbed entries (:mod:`gradlab.check.running.batching` runs fn over the rows).
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch

from gradlab.errors import GradLabError

__all__ = ["OnehotBuffer"]

#: Dtypes numpy computes in as torch does (IEEE, in the dtype; not float16's detour through float32).
_NUMPY_EXACT = (torch.float64, torch.float32)


class OnehotBuffer:
    """A reusable stack of copies of ``base`` for one-hot perturbations.

    :func:`gradlab.check.differences.stencil.onehot_rows` clones the whole base for every chunk: one extra pass
    over every row, as costly as one of the function's own elementwise ops.
    Here the copies are made once; :meth:`perturbed` writes a chunk's
    perturbed entries (``base[index] + shift``, in base's dtype, the same
    values as :func:`gradlab.check.differences.stencil.onehot_rows`), yields the rows, and puts the base values
    back, so only two entries per row are touched per chunk.

    :meth:`entries` plans the writes for many perturbations at once: the r-th
    goes to buffer row ``r % rows``, so chunks of ``rows`` consecutive
    perturbations (slices of the plan) each fill the buffer from row 0.

    The yielded rows must not escape the ``with`` block: compute from them
    inside it. A function that writes into its input is refused (the buffer
    would then not hold copies of the base).

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
