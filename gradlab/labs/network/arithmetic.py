"""The Network lab's forward pass, with the same bits on every CPU.

torch's float32 ``x @ w.T + b`` runs the CPU's own matmul kernel: an AVX-512 Xeon and
an AMD EPYC sum the products in different orders, so the output's last bit differs and,
with it, the question's quantised difference (``k * ulp(y) / (2 dx)``: one ulp more or
less in ``y+ - y-`` moves ``k``). The finite differences of the lab therefore evaluate
the network with arithmetic that is identical by construction:

- each product ``x_j * w_ij`` in float64 (exact for float32, float16 and bfloat16
  operands, whose significands have at most 24 bits);
- the products and the bias summed one column at a time, left to right, in float64:
  element-wise IEEE additions in a fixed order, the same on every vector width;
- the sum rounded once to the dtype (ties to even, :func:`to_dtype`);
- the activation computed in float64 from that value and rounded once to the dtype. A
  float64 ``tanh`` may differ between math libraries in its last bit, so a value within
  2**-40 (relative) of a rounding boundary of the dtype is recomputed with mpmath at 80
  bits, which is plain integer arithmetic: the rounded activation is the correctly
  rounded one, whatever the library.

In float64 there is no wider format to round from: the sums are still in a fixed order,
but the activation is the math library's own (within an ulp). The lab's float64 digits
are therefore not pinned; its float32, float16 and bfloat16 digits are.

>>> w = (torch.tensor([[0.1, 0.2, 0.3]]), torch.tensor([[1.0]]))
>>> b = (torch.tensor([0.0]), torch.tensor([0.0]))
>>> float(exact_layers_output(w, b, "tanh", torch.tensor([1.0, 1.0, 1.0])))  # tanh(0.6) in float32
0.5370495915412903
"""

from __future__ import annotations

from typing import Callable, Sequence

import mpmath
import numpy as np
import torch

from gradlab.numerics.dtypes import facts
from gradlab.numerics.emulation import to_dtype
from gradlab.numerics.ulp import ulp

__all__ = ["exact_layers_output", "fixed_order_affine", "correctly_rounded_activation"]

#: A float64 activation within this relative distance of a rounding boundary of the
#: dtype is recomputed exactly. Math libraries' float64 tanh, exp and erf are within
#: 1-2 ulps (2**-52 relative): 2**-40 leaves a margin of 2**12.
BOUNDARY_MARGIN = 2.0**-40

#: Each activation at 80 bits, for the rare value next to a rounding boundary.
_EXACT: dict[str, Callable[[mpmath.mpf], mpmath.mpf]] = {
    "tanh": mpmath.tanh,
    "sigmoid": lambda z: 1 / (1 + mpmath.exp(-z)),
    "softplus": lambda z: mpmath.log1p(mpmath.exp(z)),
    "gelu": lambda z: z / 2 * (1 + mpmath.erf(z / mpmath.sqrt(2))),
    "relu": lambda z: max(z, mpmath.mpf(0)),
}

_FLOAT64: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "softplus": torch.nn.functional.softplus,
    "gelu": torch.nn.functional.gelu,
    "relu": torch.relu,
}

#: Activations whose value at a float of the dtype is a float of the dtype: nothing rounds, and
#: no boundary is near (a ReLU's zeros sit beside the smallest subnormal, which the check
#: below would otherwise send to mpmath one by one: half the units of every layer).
_EXACT_IN_DTYPE = frozenset({"relu"})


def fixed_order_affine(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``x @ w.T + b`` in float64, the bias first, then the products column by column.

    Every addition is one element-wise IEEE operation, so the result does not depend on
    the CPU, its vector width or the number of threads.

    >>> x = torch.tensor([[1.0, 2.0]]); w = torch.tensor([[3.0, 4.0]]); b = torch.tensor([0.5])
    >>> fixed_order_affine(x, w, b).tolist()
    [[11.5]]
    """
    x64, w64 = x.to(torch.float64), w.to(torch.float64)
    total = b.to(torch.float64).expand(*x64.shape[:-1], w64.shape[0]).clone()
    for j in range(w64.shape[1]):
        # Two separate element-wise operations: no fused multiply-add can merge them.
        product = x64[..., j : j + 1] * w64[:, j]
        total = total + product
    return total


def _neighbours(magnitude: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The dtype's floats just below and just above each non-negative ``magnitude`` of the
    dtype (below a power of two the spacing halves)."""
    below = magnitude - ulp(np.nextafter(magnitude, 0.0), dtype)
    return np.maximum(below, 0.0), magnitude + ulp(magnitude, dtype)


def _near_boundary(value: np.ndarray, rounded: np.ndarray, dtype: str) -> np.ndarray:
    """Where the float64 ``value`` lies within BOUNDARY_MARGIN of a midpoint between
    ``rounded`` (its nearest float of ``dtype``) and a neighbour, so that a last-bit change
    of ``value`` could change the rounding."""
    size, magnitude = np.abs(value), np.abs(rounded)
    below, above = _neighbours(magnitude, dtype)
    distance = np.minimum(np.abs(size - (magnitude + below) / 2), np.abs(size - (magnitude + above) / 2))
    return distance <= BOUNDARY_MARGIN * np.maximum(size, facts(dtype).tiny)


def _nearest(exact: mpmath.mpf, candidates: Sequence[float]) -> float:
    """The candidate nearest ``exact`` (an 80-bit value: never a tie for a transcendental)."""
    return min(candidates, key=lambda c: abs(exact - c))


def correctly_rounded_activation(z: torch.Tensor, activation: str, dtype: str) -> torch.Tensor:
    """``activation(z)`` rounded once to ``dtype`` from its exact value (``z`` already in ``dtype``).

    >>> z = torch.tensor([0.5, -2.0], dtype=torch.bfloat16)
    >>> correctly_rounded_activation(z, "tanh", "bfloat16").tolist()
    [0.462890625, -0.96484375]
    """
    name = facts(dtype).name
    value = _FLOAT64[activation](z.to(torch.float64))
    if name == "float64":
        return value
    rounded = to_dtype(value.numpy(), name)
    if activation in _EXACT_IN_DTYPE:
        return rounded
    near = _near_boundary(value.numpy(), rounded.to(torch.float64).numpy(), name)
    if near.any():
        flat_z, flat_r = z.to(torch.float64).reshape(-1), rounded.reshape(-1).clone()
        # flat_r keeps the dtype: each candidate below is one of its floats, stored exactly.
        for i in np.flatnonzero(near.reshape(-1)):
            with mpmath.workprec(80):
                exact = _EXACT[activation](mpmath.mpf(float(flat_z[i])))
            r = float(flat_r[i])
            below, above = _neighbours(np.array([abs(r)]), name)
            sign = -1.0 if r < 0 else 1.0
            flat_r[i] = _nearest(exact, [sign * float(below[0]), r, sign * float(above[0])])
        rounded = flat_r.reshape(rounded.shape)
    return rounded


def exact_layers_output(weights: Sequence[torch.Tensor], biases: Sequence[torch.Tensor], activation: str,
                        x: torch.Tensor) -> torch.Tensor:
    """The network's scalar output(s) for ``x`` of shape ``(..., inputs)``, in the weights' dtype,
    every layer rounded once (see the module docstring). A batch gives each row the same bits
    as evaluating it alone.

    >>> w = (torch.tensor([[1.0, -1.0]]),); b = (torch.tensor([0.25]),)
    >>> exact_layers_output(w, b, "tanh", torch.tensor([[3.0, 1.0], [0.0, 0.0]])).tolist()
    [2.25, 0.25]
    """
    dtype = facts(weights[0].dtype).name
    h = x
    for i, (w, b) in enumerate(zip(weights, biases)):
        z64 = fixed_order_affine(h, w, b)
        z = z64 if dtype == "float64" else to_dtype(z64.numpy(), dtype)
        if i < len(weights) - 1:  # no activation on the scalar output
            z = correctly_rounded_activation(z, activation, dtype)
        h = z
    return h.squeeze(-1)
