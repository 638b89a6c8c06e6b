"""The default mode's directions: random signs over random blocks that cover every element.

A directional check compares autograd's ``g·v`` with a central difference of fn along
``v``; a wrong element k shows up as a residual ``δ_k·v_k``. Along a dense unit
direction ``v_k ≈ 1/sqrt(N)``, so one wrong element among N is diluted by sqrt(N) while
the tolerance ``atol + rtol·|g·v|`` is not: at 10 tolerances of error it is seen only
when N < 100 or so (torch's fast mode, or GradLab's ``directional``). Here the elements are
shuffled and dealt into blocks of at most :data:`BLOCK` (8), and each block is one
direction, so every element is in exactly one direction and is diluted by sqrt(8), not
sqrt(N).

Within a block element j is weighted by ``r_j/tol_j`` (``tol_j = atol + rtol·|g_j|`` from
autograd's own gradient, ``r_j`` a random sign times a random size in [1, 2)): an error of m
tolerances on any element then moves the direction by at least ``m·c`` (c the normalising
constant), while the direction's own tolerance, ``atol + rtol·|g·v|``, is at most
``atol + c·|Σ r_j·rtol·g_j/tol_j|``: about ``c·sqrt(Σ r_j²)`` ≈ ``c·sqrt(7B/3)``, ``2c·B`` at
worst. With B = 8, an element 10 tolerances off is 2.3x (at r_j = 1) to 4.6x (r_j = 2)
beyond the typical tolerance of its direction, whatever its gradient's size (an element
with a tiny gradient is not drowned by a large one in its block). The random sizes are
there for errors on many elements: with signs alone, equal errors on elements of equal
gradient (an input of ones, a term missing from every element's gradient) cancel exactly
whenever a block's signs balance, half the time for a block of 2 and a quarter for 8. That
typical size, ``c·sqrt(Σ r_j²)`` = ‖v ∘ tol‖₂, is also the least tolerance a block direction gets
(:func:`direction_tolerance`): where ``∇L·v``'s terms cancel,
``atol + rtol·|∇L·v|`` falls to atol, below what any finite difference of a 10^4-element
log_softmax can resolve, though each element's own tolerance is far larger.

The number of directions is ``ceil(N/8)``, capped at ``LIMITS.directional_checks``;
past ``8·cap`` elements the blocks grow and the dilution with them (say so: the README
lists what each mode can miss).

>>> d = block_directions(20, seed=0, tolerance=torch.ones(20, dtype=torch.float64)).dense()
>>> tuple(d.shape), bool(((d != 0).sum(dim=0) == 1).all())  # every element in one direction
((3, 20), True)
>>> torch.allclose(d.norm(dim=1), torch.ones(3, dtype=torch.float64))
True
"""

from __future__ import annotations

import math

import numpy as np
import torch

from gradlab.limits import LIMITS, within_limit

__all__ = ["BLOCK", "SHORT_BLOCK", "block_size", "block_count", "block_directions", "BlockDirections", "contract",
           "covered", "block_members", "some_of", "direction_tolerance"]

#: Elements per direction. Smaller finds smaller errors (see the module docstring) and
#: costs more directions: 8 keeps a 10-tolerance error 3.5x beyond its direction's tolerance.
BLOCK = 8


#: Elements per direction in float16 and bfloat16, whose tolerance (rtol 0.05-0.1) leaves a
#: 50 % error only 5-10 tolerances: sqrt(8) of dilution would hide about half of them.
SHORT_BLOCK = 2


def block_size(dtype: torch.dtype) -> int:
    """Elements per direction for a check whose least precise dtype is ``dtype``.

    >>> block_size(torch.float32), block_size(torch.bfloat16)
    (8, 2)
    """
    return SHORT_BLOCK if torch.finfo(dtype).bits <= 16 else BLOCK


def block_count(numel: int, block: int = BLOCK) -> int:
    """How many directions the default mode evaluates for ``numel`` elements.

    >>> block_count(1), block_count(8), block_count(9), block_count(10**6) == LIMITS.directional_checks
    (1, 1, 2, True)
    """
    return max(1, min(math.ceil(numel / block), LIMITS.directional_checks))


def block_directions(numel: int, seed: int, tolerance, block: int = BLOCK) -> BlockDirections:
    """The M unit directions (:func:`block_count`): the seeded shuffle of the elements dealt
    into M blocks, random signs, element j weighted by 1/``tolerance[j]`` (a numpy array or a
    tensor), held as a :class:`BlockDirections`."""
    count = block_count(numel, block)
    within_limit("directional checks", count, LIMITS.directional_checks)
    # one seeded draw, the arithmetic in numpy (each torch op costs 5-15 us in a small check):
    # the shuffle from the first row, each element's sign and size from the second (u < 1/2:
    # negative; the size 1 + |2u - 1| is uniform in [1, 2) either way). Random sizes, not signs
    # alone: equal errors on elements of equal gradient (an input of ones) cancel exactly
    # whenever a block's signs balance (half the time for 2 elements).
    u = torch.rand(2, numel, generator=torch.Generator().manual_seed(seed), dtype=torch.float64).numpy()
    signs = np.copysign(1.0 + np.abs(2.0 * u[1] - 1.0), u[1] - 0.5)
    # at most 2/tiny: no overflow, no warning (a NaN tolerance gives NaN, then the bare sign)
    weighted = signs / np.maximum(np.asarray(tolerance, dtype=np.float64), np.finfo(np.float64).tiny)
    if not math.isfinite(weighted.sum()):  # one reduction: a NaN or an overflow shows in the sum
        weighted = np.where(np.isfinite(weighted), weighted, signs)
    if count == 1:  # one block of every element (the detector's dense directions): no shuffle to deal
        weights = weighted / np.abs(weighted).max()
        weights /= np.sqrt(np.square(weights).sum())  # not the dot: OpenBLAS's threads (problem.resolve_step)
        return BlockDirections(numel, torch.arange(numel), np.array([0, numel]), torch.from_numpy(weights))
    # the shuffled elements dealt out in turn (the first numel % count blocks one element longer),
    # then each block's members in ascending order
    order = np.argsort(u[0], kind="stable")
    block_of = np.arange(numel) % count
    by_block = np.lexsort((order, block_of))
    members, block_of = order[by_block], block_of[by_block]
    starts = np.searchsorted(block_of, np.arange(count + 1))
    weights = weighted[members]
    weights /= np.repeat(np.maximum.reduceat(np.abs(weights), starts[:-1]), np.diff(starts))  # first to 1: no overflow
    weights /= np.repeat(np.sqrt(np.add.reduceat(weights * weights, starts[:-1])), np.diff(starts))
    return BlockDirections(numel, torch.from_numpy(members), starts, torch.from_numpy(weights))


class BlockDirections:
    """M disjoint unit directions over N elements, held as each block's members and weights
    (16 bytes an element) rather than an (M, N) matrix (8·M bytes an element: 5 GB for a 10 M
    parameter model): the rows evaluated together are made dense when asked for
    (``directions[a:b]``, ``directions[rows]``, ``directions[k]``), a few at a time.

    >>> w = torch.tensor([0.6, -0.8, 1.0], dtype=torch.float64)
    >>> d = BlockDirections(4, torch.tensor([1, 3, 0]), np.array([0, 2, 3]), w)
    >>> d.shape, d[0].tolist(), d.members(1).tolist()
    (torch.Size([2, 4]), [0.0, 0.6, 0.0, -0.8], [0])
    >>> contract(d, torch.tensor([1.0, 5.0, 2.0, 5.0], dtype=torch.float64)).tolist()
    [-1.0, 1.0]
    """

    dtype = torch.float64

    def __init__(self, numel: int, members: torch.Tensor, starts: np.ndarray, weights: torch.Tensor,
                 keys: np.ndarray | None = None):
        # the blocks held: members[starts[i]:starts[i + 1]]; the directions: the blocks ``keys``
        self.numel, self.member_index, self.starts, self.weights = numel, members, starts, weights
        self.keys = np.arange(len(starts) - 1) if keys is None else keys
        self.shape = torch.Size((len(self.keys), numel))

    def __len__(self) -> int:
        return self.shape[0]

    def members(self, k: int) -> torch.Tensor:
        """The flat elements direction k moves, ascending."""
        block = self.keys[k]
        return self.member_index[self.starts[block]:self.starts[block + 1]]

    def per_block(self, values: np.ndarray) -> np.ndarray:
        """Per direction, the sum of ``values`` (one per member, last axis) over its block's members."""
        if not self.member_index.numel():
            return np.zeros((*values.shape[:-1], len(self)))
        return np.add.reduceat(values, self.starts[:-1], axis=-1)[..., self.keys]

    def __getitem__(self, key) -> torch.Tensor:
        """Dense rows: one (N,) row for an int, an (m, N) matrix for a slice or an index array."""
        if isinstance(key, (int, np.integer)) or (torch.is_tensor(key) and key.dim() == 0):
            return self[[int(key)]][0]
        keys = np.arange(len(self))[key] if isinstance(key, slice) else np.asarray(key, dtype=np.int64).reshape(-1)
        rows = torch.zeros(len(keys), self.numel, dtype=torch.float64)
        for r, k in enumerate(self.keys[keys].tolist()):
            a, b = self.starts[k], self.starts[k + 1]
            rows[r, self.member_index[a:b]] = self.weights[a:b]
        return rows

    def select(self, keys) -> BlockDirections:
        """The directions ``keys`` (ints, repeats allowed) only, sharing these blocks' members and
        weights (no copy: a ladder of steps asks for each direction several times).

        >>> d = block_directions(20, seed=0, tolerance=np.ones(20))
        >>> torch.equal(d.select([2, 0, 2]).dense(), d.dense()[[2, 0, 2]])
        True
        """
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        return BlockDirections(self.numel, self.member_index, self.starts, self.weights, self.keys[keys])

    def dense(self) -> torch.Tensor:
        """All M rows as one (M, N) matrix (small checks and tests)."""
        return self[:]

    def spread(self, kept: torch.Tensor, numel: int) -> BlockDirections:
        """These directions over ``numel`` elements, element j here being flat element ``kept[j]``."""
        return BlockDirections(numel, kept[self.member_index], self.starts, self.weights, self.keys)


def contract(directions, x: torch.Tensor) -> torch.Tensor:
    """``x @ directions.T`` for ``x`` of shape (N,) or (R, N): ∇L·v per direction, for a dense
    (M, N) tensor or a :class:`BlockDirections` (each block's members only: an element in no
    block, a skipped non-finite one, is never read)."""
    if not isinstance(directions, BlockDirections):
        return x @ directions.T
    terms = (x[..., directions.member_index].to(torch.float64) * directions.weights).numpy()
    return torch.from_numpy(np.ascontiguousarray(directions.per_block(terms)))


def some_of(directions, rows) -> torch.Tensor | BlockDirections:
    """The directions ``rows`` (an int array or tensor): block directions stay held by their members."""
    if isinstance(directions, BlockDirections):
        return directions.select(np.asarray(rows))
    return directions[torch.as_tensor(rows)]


def covered(directions) -> torch.Tensor:
    """The flat elements some direction moves, ascending."""
    if isinstance(directions, BlockDirections):
        return torch.unique(torch.cat([directions.members(k) for k in range(len(directions))]))
    return (directions != 0).any(dim=0).nonzero().reshape(-1)


def block_members(directions, k: int) -> torch.Tensor:
    """The flat elements direction k moves, ascending."""
    if isinstance(directions, BlockDirections):
        return directions.members(k)
    return torch.nonzero(directions[k]).flatten()


def direction_tolerance(directions: torch.Tensor, element_tolerance) -> np.ndarray:
    """Per direction v, ‖v ∘ tol‖₂: what its elements' tolerances make of ∇L·v when each
    element is off by its own tolerance (an array or a tensor) with a random sign (the typical
    size; Σ|v_j|·tol_j is the worst). ``atol + rtol·|∇L·v|`` alone is not the direction's scale: where the
    terms of ∇L·v cancel it falls to atol, far below every element's tolerance.

    >>> v = torch.tensor([[0.6, -0.8]], dtype=torch.float64)
    >>> direction_tolerance(v, torch.tensor([1.0, 1.0], dtype=torch.float64)).tolist()
    [1.0]
    """
    # |v_j|·tol_j squares as v_j·tol_j does; in numpy: a few values, where a torch op costs 5-15 us
    tolerance = np.asarray(element_tolerance, dtype=np.float64)
    if isinstance(directions, BlockDirections):
        scaled = directions.weights.numpy() * tolerance[directions.member_index.numpy()]
        return np.sqrt(directions.per_block(scaled * scaled))
    scaled = directions.numpy() * tolerance
    return np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
