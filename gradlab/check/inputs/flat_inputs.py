"""Several input tensors seen as one flat vector: the elements a check perturbs.

:class:`FlatInputs` holds the checked inputs as one vector in their promoted dtype, splits
stacked rows of that vector back into fn's arguments (each in its input's dtype and laid out
as its input: :meth:`FlatInputs.cast`, :meth:`FlatInputs.alone`) and names its elements.
:mod:`gradlab.check.running.batching` runs fn over such rows.

>>> flat = FlatInputs.of([torch.zeros(2, 3), torch.ones(2)], names=["w", "b"])
>>> flat.numel, flat.label(*flat.locate(7))
(8, 'b[1]')
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import torch

from gradlab.check.inputs.outputs import unravel
from gradlab.numerics.dtypes import facts

__all__ = ["FlatInputs"]


def _layout(t: torch.Tensor) -> tuple[int, ...] | None:
    """The strides of a copy of ``t`` (dense ones kept, as ``torch.empty_like``), None if contiguous."""
    copy = torch.empty_like(t)
    return None if copy.is_contiguous() else copy.stride()


@dataclass(frozen=True, eq=False)
class FlatInputs:
    """Several input tensors seen as one flat vector.

    ``values`` is held in the inputs' promoted dtype (no value is rounded); each
    input goes back to fn in its own dtype (``dtypes``, through :meth:`cast`).
    ``names`` and ``complex_parts`` label the elements (a complex input is
    checked through its real view, whose last dimension is real, imaginary).
    ``layouts``: each input's strides as fn gets it alone (:meth:`alone`), None where contiguous.
    """

    values: torch.Tensor  # (N,) the concatenated, flattened inputs
    shapes: tuple[torch.Size, ...]
    dtypes: tuple[torch.dtype, ...] = ()
    names: tuple[str, ...] = ()
    complex_parts: tuple[bool, ...] = ()
    layouts: tuple[tuple[int, ...] | None, ...] = ()

    @classmethod
    def of(cls, tensors: Sequence[torch.Tensor], names: Sequence[str] | None = None,
           complex_parts: Sequence[bool] | None = None) -> "FlatInputs":
        dtype = functools.reduce(torch.promote_types, [t.dtype for t in tensors])
        flat = torch.cat([t.detach().to(dtype).reshape(-1) for t in tensors])
        if names is None:
            names = ["x"] if len(tensors) == 1 else [f"x{k}" for k in range(len(tensors))]
        complex_parts = tuple(complex_parts) if complex_parts is not None else (False,) * len(tensors)
        layouts = tuple(None if t.is_contiguous() else _layout(t) for t in tensors)
        return cls(flat, tuple(t.shape for t in tensors), tuple(t.dtype for t in tensors), tuple(names),
                   complex_parts, layouts)

    @property
    def numel(self) -> int:
        return int(self.values.numel())

    @functools.cached_property  # read by every stencil chunk of a low-precision check: one op, once
    def finite(self) -> bool:
        """Whether every element is finite (no ±inf or NaN: see :mod:`gradlab.check.inputs.skipped`)."""
        return bool(torch.isfinite(self.values).all())

    @property
    def finite_values(self) -> torch.Tensor:
        """``values`` without the elements holding ±inf or NaN (the step is the finite ones' to take)."""
        return self.values if self.finite else self.values[torch.isfinite(self.values)]

    def alone(self, parts: Sequence[torch.Tensor]) -> list[tuple[torch.Tensor, ...]]:
        """Each row of ``parts`` ((m, *shape) each, from :meth:`cast`) as fn's arguments for that row
        alone: each part a copy in storage of its own, laid out as the row is (as its input, by
        :meth:`cast`). A row's view of the stacked rows starts deep into storage the rows share,
        and an op that reads the storage under a view (``as_strided``: its offset counts from the
        storage's start) would read the first row there, not the perturbed one. A copy costs
        about 2 us a row; the loop that takes them calls fn once a row. (clone keeps a row's dense
        strides; unbind gives every row's views in one op per part.)"""
        if len(parts) == 1:  # the usual case, without a generator's overhead per row (~1.5 us)
            return [(t.clone(),) for t in parts[0].unbind(0)]
        return [tuple(t.clone() for t in row) for row in zip(*(p.unbind(0) for p in parts))]

    def split(self, rows: torch.Tensor) -> list[torch.Tensor]:
        """(m, N) rows -> one (m, *shape) view per input (in the rows' dtype; see :meth:`cast`)."""
        if len(self.shapes) == 1:  # one input: the same view without torch.split's Python layers (~10 us)
            return [rows.reshape(rows.shape[0], *self.shapes[0])]
        sizes = [int(torch.Size(s).numel()) for s in self.shapes]
        parts = torch.split(rows, sizes, dim=1)
        return [p.reshape(rows.shape[0], *s) for p, s in zip(parts, self.shapes)]

    def cast(self, parts: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Each part in its input's own dtype (its complex partner when the rows are complex), and
        each of its rows laid out as its input (:attr:`layouts`): fn gets a transposed or
        channels-last input's rows so, as autograd's side gets the input (a copy of it, which
        keeps its strides); a contiguous input's rows are the views given."""
        out = []
        layouts = self.layouts or (None,) * len(parts)
        for part, dtype, layout in zip(parts, self.dtypes or (parts[0].dtype,) * len(parts), layouts):
            if part.is_complex() and not dtype.is_complex:
                dtype = facts(dtype).complex_partner or part.dtype  # the complex step's rows
            part = part if part.dtype == dtype else part.to(dtype)
            out.append(part if layout is None or part.stride()[1:] == layout else _laid_out(part, layout))
        return out

    def stacked(self, parts: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """:meth:`cast`'s parts, each a stack of its own (its rows one after another in storage of
        its own), where it is a view of the rows of several inputs."""
        layouts = self.layouts or (None,) * len(parts)
        return [p.contiguous() if layout is None else p for p, layout in zip(parts, layouts)]

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


def _laid_out(part: torch.Tensor, layout: tuple[int, ...]) -> torch.Tensor:
    """(m, *shape) ``part`` copied into a stack whose every row has the strides ``layout``."""
    out = torch.empty_strided(part.shape, (part[0].numel(), *layout), dtype=part.dtype, device=part.device)
    return out.copy_(part)
