"""A Jacobian that is not diagonal: ``z = W x``, then ``z.backward(v)``.

J = W here, and ``x.grad`` is ``v^T W``: the rows of W weighted by v and summed.
The Backward lab shows it next to the question's function, whose Jacobian is diagonal.

>>> e = MATRIX_EXAMPLES["twice"]
>>> matrix_vjp(e.w, e.x, e.v).grad  # a one-hot v picks row 0 of J = 2I
(2.0, 0.0, 0.0, 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from gradlab.errors import GradLabError
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import facts

__all__ = ["MatrixExample", "MATRIX_EXAMPLES", "MatrixVJP", "matrix_vjp", "ExampleVJPSettings", "example_vjp"]


@dataclass(frozen=True)
class MatrixExample:
    """A ready-made z = W x: its W, x and the gradient vector v."""

    name: str
    title: str
    w: tuple[tuple[float, ...], ...]
    x: tuple[float, ...]
    v: tuple[float, ...]


MATRIX_EXAMPLES: dict[str, MatrixExample] = {
    e.name: e
    for e in (
        MatrixExample("wx", "z = W x with a 2x3 matrix", ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)), (1.0, 1.0, 1.0), (1.0, 0.5)),
        # The question's second answer: z = 2x, one-hot v picks one row of J = 2I.
        MatrixExample("twice", "z = 2x (the question's second answer)",
                      tuple(tuple(2.0 if i == j else 0.0 for j in range(4)) for i in range(4)),
                      (1.0, 2.0, 3.0, 4.0), (1.0, 0.0, 0.0, 0.0)),
    )
}


@dataclass(frozen=True, eq=False)
class MatrixVJP:
    """v^T J for z = W x (J = W): the weighted sum of J's rows, and what backward() gives.

    ``table`` (long format) columns: row, column, jacobian, v, weighted (= v[row] * jacobian).
    """

    jacobian: np.ndarray
    vjp: tuple[float, ...]  # sum over rows of v[row] * J[row, :]
    grad: tuple[float, ...]  # x.grad after z.backward(v)
    table: pd.DataFrame


def matrix_vjp(w, x, v, dtype: str = "float32") -> MatrixVJP:
    """z = W x, then z.backward(v); compare x.grad with the weighted sum of the rows of W.

    >>> r = matrix_vjp(((1.0, 2.0), (3.0, 4.0)), (1.0, 1.0), (1.0, 10.0))
    >>> r.vjp, r.grad
    ((31.0, 42.0), (31.0, 42.0))
    """
    dt = facts(dtype).torch_dtype
    rows = [tuple(float(e) for e in r) for r in w]
    if not rows or any(len(r) != len(rows[0]) for r in rows) or len(rows[0]) == 0:
        raise GradLabError("W must be a non-empty matrix with rows of equal length.")
    if len(x) != len(rows[0]) or len(v) != len(rows):
        raise GradLabError(
            f"W is {len(rows)}x{len(rows[0])}, so x needs {len(rows[0])} entries and v needs {len(rows)}; "
            f"got {len(x)} and {len(v)}."
        )
    for label, size in (("columns of W", len(rows[0])), ("rows of W", len(rows))):
        within_limit(label, size, LIMITS.backward_vector_entries)
    wt = torch.tensor(rows, dtype=dt)
    xt = torch.tensor([float(e) for e in x], dtype=dt, requires_grad=True)
    vt = torch.tensor([float(e) for e in v], dtype=dt)
    (wt @ xt).backward(vt)
    jac = torch.autograd.functional.jacobian(lambda u: wt @ u, xt.detach())
    weighted = vt[:, None] * jac
    table = pd.DataFrame([
        {"row": i, "column": j, "jacobian": float(jac[i, j]), "v": float(vt[i]), "weighted": float(weighted[i, j])}
        for i in range(jac.shape[0]) for j in range(jac.shape[1])
    ])
    return MatrixVJP(jac.to(torch.float64).numpy(), _as_tuple(weighted.sum(0)), _as_tuple(xt.grad), table)


@dataclass(frozen=True)
class ExampleVJPSettings:
    """A ready-made example (a key of :data:`MATRIX_EXAMPLES`) and the gradient vector v; plain values."""

    example: str = "wx"
    v: tuple[float, ...] = (1.0, 0.5)


def example_vjp(settings: ExampleVJPSettings) -> MatrixVJP:
    """:func:`matrix_vjp` of a ready-made example's W and x with the chosen v.

    >>> example_vjp(ExampleVJPSettings("wx", (0.0, 1.0))).grad  # v picks row 1 of W
    (4.0, 5.0, 6.0)
    """
    e = MATRIX_EXAMPLES.get(settings.example)
    if e is None:
        raise GradLabError(f"Unknown example {settings.example!r}; choose one of {', '.join(MATRIX_EXAMPLES)}.")
    return matrix_vjp(e.w, e.x, settings.v)


def _as_tuple(t: torch.Tensor) -> tuple[float, ...]:
    return tuple(float(x) for x in t.detach().to(torch.float64).tolist())
