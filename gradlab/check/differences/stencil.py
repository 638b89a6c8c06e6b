"""Finite-difference estimates for a batch of perturbations, and their round-off scales.

Every stencil point of every perturbation goes through fn in one call; the
values are combined with the scheme's weights in float64, as in
:func:`gradlab.numerics.schemes.stencil_estimates`. The round-off scale of
an estimate is what the rounded values are proportional to: |L| for sum and
mean, Σ|v_j y_j| over the outputs the perturbation changes for none.

>>> from gradlab.check.running.problem import numeric_problem
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
>>> p = numeric_problem(lambda t: t ** 2, [x], "sum", None, get_scheme("forward"), 0.5, torch.float64)
>>> est, scale = estimates(p, onehot_maker(p, torch.tensor([0, 1])), torch.tensor([0.5, 0.5]))
>>> est.tolist(), scale.tolist()  # forward difference of x**2: 2x + h
([2.5, 4.5], [5.0, 5.0])
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np
import torch

from gradlab.check.running.batching import memory_rows
from gradlab.check.running.blocks import BlockDirections
from gradlab.check.running.problem import NumericProblem, reduce_outputs
from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import facts

__all__ = ["estimates", "moving_weights", "moving_offsets", "centre_weight", "nominal_correction",
           "corrected_sides", "entry_correction", "shifts", "combine", "one_sided", "side_points", "contract",
           "roundoff_scale", "numeric_base", "onehot_maker", "dense_maker", "predicted_roundoff", "onehot_rows",
           "moved_rows"]

RowMaker = Callable[[torch.Tensor], torch.Tensor]


def estimates(p: NumericProblem, make_rows: RowMaker, h: torch.Tensor):
    """(estimate (m,), scale (m,)) for m perturbations with steps ``h``.

    ``make_rows(shifts)`` builds the (K·m, N) perturbed inputs for (K, m) shifts. A maker
    with ``part(a, b)`` (a maker of its perturbations a to b) is evaluated a part at a time
    when all K·m rows at once would not fit in ``LIMITS.chunk_bytes`` (a model of millions of
    parameters: each row is all of them).
    """
    part, m = getattr(make_rows, "part", None), h.shape[0]
    per = max(1, memory_rows(p.flat.numel) // max(1, len(p.scheme.offsets)))
    if part is not None and per < m:
        pieces = [estimates(p, part(a, min(a + per, m)), h[a:a + per]) for a in range(0, m, per)]
        return torch.cat([e for e, _ in pieces]), torch.cat([s for _, s in pieces])
    moves = shifts(p, h)
    rows = make_rows(moves)
    est, scale = combine(p, p.batched(rows), h)
    correction = nominal_correction(p, make_rows, moves, rows)
    if correction is not None:
        est = est + moving_weights(p) @ correction / h
    return est, scale


def corrected_sides(p: NumericProblem, sides, correction: torch.Tensor | None, h: torch.Tensor):
    """One-sided differences (left, right) with their outer points moved back to nominal
    (``correction``: (K, m) from :func:`nominal_correction`, or None)."""
    if sides is None or correction is None:
        return sides
    where = side_points(p)
    return sides[0] - correction[where[0]] / h, sides[1] + correction[where[1]] / h


def entry_correction(p: NumericProblem, index: torch.Tensor, shift: torch.Tensor, values: torch.Tensor,
                     original: torch.Tensor) -> torch.Tensor | None:
    """:func:`nominal_correction` for one-hot entries written directly (OnehotBuffer):
    g[index]·((original + shift) - value), float64, one per entry (None: no gradient set)."""
    if p.gradient is None or shift.is_complex() or _exact(p):
        return None
    nominal = original.to(torch.float64) + shift.to(torch.float64)
    return (nominal - values.to(torch.float64)) * p.gradient[index]


def moving_weights(p: NumericProblem) -> torch.Tensor:
    """The weights of the stencil's moving points (offset != 0), float64 (one tensor per
    scheme, shared: read it, never write it)."""
    return _moving_weights(p.scheme.offsets, p.scheme.weights)


@functools.lru_cache(maxsize=None)
def _moving_weights(offsets: tuple, weights: tuple) -> torch.Tensor:
    return torch.tensor([w for c, w in zip(offsets, weights) if c != 0], dtype=torch.float64)


def centre_weight(p: NumericProblem) -> float:
    """The stencil's weight on fn at x itself (offset 0; 0.0 for a scheme without that point)."""
    return _centre_weight(p.scheme.offsets, p.scheme.weights)


@functools.lru_cache(maxsize=None)  # per scheme: read by every evaluator's finish
def _centre_weight(offsets: tuple, weights: tuple) -> float:
    return sum(w for c, w in zip(offsets, weights) if c == 0)


def moving_offsets(p: NumericProblem) -> torch.Tensor:
    """The stencil's nonzero offsets, float64 (one tensor per scheme, shared: read it, never write it)."""
    return _moving_offsets(p.scheme.offsets)


@functools.lru_cache(maxsize=None)
def _moving_offsets(offsets: tuple) -> torch.Tensor:
    return torch.tensor([c for c in offsets if c != 0], dtype=torch.float64)


def nominal_correction(p: NumericProblem, make_rows: RowMaker, moves: torch.Tensor,
                       rows: torch.Tensor) -> torch.Tensor | None:
    """(K, m): g·(nominal - actual) for each evaluated point, or None (no gradient set, or a
    complex step).

    In the dtype, ``x + c·h·d`` is rounded element by element: in bfloat16 a step of 0.2
    along a dense direction moves each element by a rounded amount off by up to 2 %
    of it, a systematic error no step search sees. To first order
    φ(nominal) = φ(actual) + g·(nominal - actual); with autograd's g this moves every
    evaluated value back to its nominal point. A wrong g_k shifts the result only by
    its error times the rounding of x_k (a fraction u·|x_k|/h of the error it checks)."""
    if p.gradient is None or moves.is_complex() or _exact(p):
        return None
    nominal = make_rows(moves, exact=True)
    gap = nominal - rows.to(torch.float64)
    if not p.flat.finite:  # an element holding ±inf or NaN is not moved (gradlab.check.inputs.skipped): inf - inf is NaN
        gap = gap.nan_to_num_(nan=0.0)
    return (gap @ p.gradient).reshape(moves.shape)


def _exact(p: NumericProblem) -> bool:
    """Whether the points are built in float64, where actual and nominal points are the same
    computation (the correction would be exactly 0)."""
    return p.flat.values.dtype == torch.float64


def shifts(p: NumericProblem, h: torch.Tensor) -> torch.Tensor:
    """(K, m) shifts c_k·h of the stencil's moving points (K = 1: i·h for the complex step)."""
    if p.scheme.complex_step:
        return (h * 1j)[None]
    return moving_offsets(p)[:, None] * h


def combine(p: NumericProblem, outputs: torch.Tensor, h: torch.Tensor):
    """fn's outputs at the (K·m) stencil rows -> (estimate (m,), scale (m,)); see estimates."""
    s, m = p.scheme, h.shape[0]
    if s.complex_step:
        reduced = reduce_outputs(outputs, p.reduction)
        if not reduced.is_complex():  # torch's own error would be 'imag is not implemented for ... non-complex dtypes'
            raise GradLabError("The complex-step scheme reads the imaginary part of fn at x + ih, but fn "
                               "returned real numbers for a complex input (abs, angle, .real or a comparison "
                               "drop the imaginary part), so there is nothing to read; pick another scheme, "
                               "such as central.")
        values = reduced.imag.to(torch.float64)
        return contract(p, values) / h, roundoff_scale(p, None, m)
    weights = moving_weights(p)
    values = reduce_outputs(outputs, p.reduction).reshape(weights.shape[0], m, -1)
    combined = torch.einsum("k,kmo->mo", weights, values.to(torch.float64))
    centre = centre_weight(p)
    if centre:
        combined = combined + centre * p.base_rows.to(torch.float64)
    changed = _changed(values, p.base_rows) if p.reduction == "none" else None
    return contract(p, combined) / h, roundoff_scale(p, changed, m)


def side_points(p: NumericProblem) -> tuple[int, int] | None:
    """Positions (among the moving points) of the offsets -1 and +1, or None when the
    scheme lacks either (forward, backward, complex step): no one-sided pair for free."""
    return _side_points(p.scheme.offsets, p.scheme.complex_step)


@functools.lru_cache(maxsize=None)  # per scheme: read by every evaluator's finish
def _side_points(offsets: tuple, complex_step: bool) -> tuple[int, int] | None:
    moving = [c for c in offsets if c != 0]
    if complex_step or -1.0 not in moving or 1.0 not in moving:
        return None
    return moving.index(-1.0), moving.index(1.0)


def one_sided(p: NumericProblem, outputs: torch.Tensor, h: torch.Tensor):
    """(left, right) one-sided differences (f(x) - f(x-h))/h and (f(x+h) - f(x))/h from
    fn's outputs at the (K·m) stencil rows, or None (see :func:`side_points`)."""
    where = side_points(p)
    if where is None:
        return None
    moving = sum(c != 0 for c in p.scheme.offsets)
    values = reduce_outputs(outputs, p.reduction).reshape(moving, h.shape[0], -1).to(torch.float64)
    base = p.base_rows.to(torch.float64)
    return (contract(p, base - values[where[0]]) / h, contract(p, values[where[1]] - base) / h)


def _changed(values: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
    """(K, m, out) outputs at the stencil points -> (m, out) float64, 1 where an output
    differs from its value at x at some point, else 0 (NaN counts as a change, and so
    does an infinite output that stays infinite: its estimate is NaN anyway).

    Taken as sign(max |y - y(x)|) rather than by boolean ops, which torch runs 3x
    slower: this mask costs as much as the rest of a 'none' chunk together."""
    spread = (values - base).abs_().amax(dim=0)
    return spread.sign_().nan_to_num_(nan=1.0).to(torch.float64)


def contract(p: NumericProblem, values: torch.Tensor) -> torch.Tensor:
    """(m, out) reduced values -> (m,): vᵀ(values) for none, the one column otherwise."""
    if p.reduction == "none":
        return values @ p.weights
    return values[:, 0]


def roundoff_scale(p: NumericProblem, changed: torch.Tensor | None, m: int) -> torch.Tensor:
    """Round-off scale per perturbation: |L| for sum/mean; for none the sum of
    |v_j y_j| over the outputs ``changed`` (a 0/1 float64 mask, None: all of them)."""
    if p.reduction != "none":  # |L| exactly as float64 (p.loss); numpy: torch's four small ops cost ~10 us
        return torch.from_numpy(np.full(m, abs(p.loss)))
    if changed is None:
        return p.output_sizes.sum().expand(m)
    return changed @ p.output_sizes


def predicted_roundoff(p: NumericProblem, scale: torch.Tensor) -> np.ndarray:
    """Predicted absolute round-off error of each estimate: sum|w_k|·u·scale/h."""
    u = facts(p.dtype).unit_roundoff
    return p.scheme.roundoff_constant * u * scale.numpy() / p.step  # numpy: the same ops, without torch's dispatch


def numeric_base(p: NumericProblem, shifts_: torch.Tensor) -> torch.Tensor:
    """The flat inputs, in the complex partner dtype when the shifts are imaginary."""
    if shifts_.is_complex():
        return p.flat.values.to(facts(p.dtype).complex_partner)
    return p.flat.values


def onehot_maker(p: NumericProblem, index: torch.Tensor) -> RowMaker:
    """Rows perturbing one element each: flat element ``index[r]`` for perturbation r.
    ``exact=True``: the nominal rows, in float64 (see :func:`nominal_correction`)."""
    def make(s: torch.Tensor, exact: bool = False) -> torch.Tensor:
        base = p.flat.values.to(torch.float64) if exact else numeric_base(p, s)
        return onehot_rows(base, index.repeat(s.shape[0]), s.reshape(-1))

    make.part = lambda a, b: onehot_maker(p, index[a:b])
    return make


def dense_maker(p: NumericProblem, directions: torch.Tensor) -> RowMaker:
    """Rows perturbing along dense directions: ``directions[r]`` for perturbation r.
    ``exact=True``: the nominal rows, in float64 (see :func:`nominal_correction`)."""
    def make(s: torch.Tensor, exact: bool = False) -> torch.Tensor:
        base = p.flat.values.to(torch.float64) if exact else numeric_base(p, s)
        return moved_rows(base, _distinct_rows(directions), s)

    make.part = lambda a, b: dense_maker(p, directions[a:b])
    return make


def onehot_rows(base: torch.Tensor, index: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """Copies of ``base`` with element ``index[r]`` of row r replaced by ``base[index[r]] + shift[r]``.

    The addition is done in base's dtype, as a user writing ``x[i] += h`` would.
    """
    m = index.shape[0]
    rows = base.expand(m, -1).clone()
    rows[torch.arange(m), index] = base[index] + shift.to(base.dtype)
    return rows


def _distinct_rows(directions) -> torch.Tensor:
    """The (m, N) dense rows of ``directions``, each distinct block made once: a ladder of steps
    along one direction is one row broadcast, not m copies (at 65 k elements making them and
    copying them per stencil point cost 3x fn's own work)."""
    if not isinstance(directions, BlockDirections):
        return directions
    _, first, inverse = np.unique(directions.keys, return_index=True, return_inverse=True)
    distinct = directions[first]
    return distinct.expand(len(inverse), -1) if len(first) == 1 else distinct[torch.from_numpy(inverse)]


def moved_rows(base: torch.Tensor, directions: torch.Tensor, shifts_: torch.Tensor) -> torch.Tensor:
    """(K·m, N) rows ``base + shifts_[k, r]·directions[r]``, k-major (as the stencil's values are
    read back), in base's dtype: the product rounded, then the sum, as a user writing ``x + h·d``
    computes it, without copying the directions K times.

    >>> d = torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    >>> moved_rows(torch.zeros(2, dtype=torch.float64), d, torch.tensor([[1.0, 1.0], [-1.0, -1.0]])).tolist()
    [[1.0, 0.0], [0.0, 2.0], [-1.0, 0.0], [0.0, -2.0]]
    """
    k, m = shifts_.shape
    rows = shifts_.to(base.dtype).reshape(k, m, 1) * directions.to(base.dtype)
    rows += base
    return rows.reshape(k * m, -1)

