"""Estimating every checked value and judging it, and naming the element a failing direction points at.

:func:`measure_values`, the body of a first-order check, runs the finite differences of a
check's perturbations (one-hot elements or directions), builds the first table, judges it
(:func:`gradlab.check.verdicts.judging.judge`) and, when a direction fails, names the element it
points at: in the default mode each element of the failing block (:mod:`gradlab.check.running.blocks`)
is checked on its own (:func:`name_in_block`), or, in a block of :data:`HALVING_FROM` elements or
more (past 512 elements), every failing block is halved down to its failing elements
(:mod:`gradlab.check.differences.halving`: 4 evaluations per halving, not 2 per element); in the directional mode, by bisection
(:func:`name_element`). The elements so checked are judged as the check's values are
(:func:`checked_elements`: their own finite difference at the check's step, then step search,
error bound and state) and follow the directions in the table, as rows of kind "element"
(:func:`gradlab.check.verdicts.report.with_narrowed`); the one named is the located element, whose
own values the failure's message quotes first.

A directional check compares ∇L·v with a finite difference along a dense
direction v, so a failure says "somewhere along v". Splitting v's support in
two halves, re-estimating both and keeping the worse half, ``log2(N)`` times,
ends at one element; that element is then checked on its own. A half is
"worse" by how far autograd's value lies outside the tolerance plus the
finite difference's error bound, after the per-value step search of
:mod:`gradlab.check.differences.step_search`, so a half whose estimate is off by
truncation (a function near a singularity) does not draw the search away
from a wrong gradient.

>>> from gradlab.check.running.problem import numeric_problem
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
>>> p = numeric_problem(lambda t: t ** 2, [x], "sum", None, get_scheme("central"), 1e-3, torch.float64)
>>> wrong = torch.tensor([2.0, 4.0, 60.0, 8.0], dtype=torch.float64)  # x[2] is wrong
>>> locate(p, wrong, torch.full((4,), 0.5, dtype=torch.float64), Tolerances(rtol=1e-5, atol=1e-8)).label
'x[2]'
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from gradlab.check.differences.error_bounds import bounded_estimates
from gradlab.check.differences.halving import HALVING_FROM, halve
from gradlab.check.differences.stencil import dense_maker, estimates, onehot_maker
from gradlab.check.differences.step_search import search, truncation_share
from gradlab.check.running.blocks import block_members, contract, direction_tolerance, some_of
from gradlab.check.running.check_run import CheckRun
from gradlab.check.running.evaluation import Dense, chunk_size, onehot_evaluator, run_chunks
from gradlab.check.running.float64_witness import AutogradRounding
from gradlab.check.running.problem import NumericProblem
from gradlab.check.verdicts.columns import Columns, Later, filled
from gradlab.check.verdicts.judging import dense_estimator, judge, onehot_estimator
from gradlab.check.verdicts.report import Estimates, Tolerances, value_table, with_narrowed
from gradlab.check.verdicts.results import Element
from gradlab.check.verdicts.table_rows import element, worst_position

__all__ = ["element_judge", "JUDGED_FIRST", "NARROWED_BLOCKS", "ONE_BY_ONE_MOST", "Measured", "measure_values", "locate",
           "name_element", "name_in_block", "checked_elements"]

#: The bound_source of a direction left unjudged once the check had failed.
NOT_REESTIMATED = "not re-estimated"

#: Suspect block directions (beyond tolerance at the check's step) judged before the others.
JUDGED_FIRST = 4

#: Failing blocks narrowed to their elements by halving, at most (the furthest beyond tolerance).
NARROWED_BLOCKS = 4

#: A failing block that halving could not narrow has its elements checked one by one up to this
#: many (2 evaluations each); a larger one (a model of millions of parameters) is bisected.
ONE_BY_ONE_MOST = 4096


@dataclass(frozen=True)
class Measured:
    """A first-order check's values, measured and judged (:func:`measure_values`)."""

    first: Columns  # each value at the check's step, before judging
    table: Columns  # the judged values (states, bounds, best estimates); narrowed elements after them
    scale: torch.Tensor  # each value's round-off scale at the check's step
    located: Element | None  # the element a failing direction points at, checked on its own
    truncation_share: float | None  # the truncation share at h/2 (:func:`~gradlab.check.differences.step_search.truncation_share`)


def measure_values(run: CheckRun, index: torch.Tensor | None, directions, rounding: AutogradRounding | None, *,
                   blocks: bool = False, element_tolerance: np.ndarray | None = None) -> Measured:
    """The values of ``run`` along its perturbations (flat ``index``, or ``directions``: a
    tensor or the blocks' :class:`~gradlab.check.running.blocks.BlockDirections`), measured and
    judged. In ``blocks`` mode a failing block's element is named by checking each of its
    elements (:func:`name_in_block`); ``rounding``: autograd's own rounding (per value, and
    |g - float64 autograd| per element), or None; ``element_tolerance``: each element's
    tolerance, if the caller has it (else from the gradient)."""
    p, g, tol, workers = run.problem, run.gradient, run.tolerances, run.workers
    progress, float64_problem, autograd_eps = run.progress, run.witness, run.autograd_eps
    autograd_rounding, element_rounding = (None, None) if rounding is None else (rounding.rows, rounding)
    total = index.numel() if index is not None else directions.shape[0]
    chunk = chunk_size(p, total)
    if index is not None:
        maker_for = lambda a, b: onehot_maker(p, index[a:b])  # noqa: E731
        evaluator, autograd_values = onehot_evaluator(p, index, chunk), g[index]
    else:
        maker_for = lambda a, b: dense_maker(p, directions[a:b])  # noqa: E731
        evaluator, autograd_values = Dense(p, directions), contract(directions, g)
    numeric, scale = run_chunks(evaluator, total, chunk, progress, workers)
    first = value_table(p, index, Estimates(autograd_values, numeric, scale), tol)
    share = truncation_share(p, first, maker_for, numeric, autograd_values)
    estimator = onehot_estimator(index, workers) if index is not None else dense_estimator(directions)
    # a block's tolerance is its elements' (directional mode keeps torch's fast mode's atol + rtol·|∇L·v|)
    floor = None if not blocks else direction_tolerance(
        directions, tol.of(g.numpy()) if element_tolerance is None else element_tolerance)
    rows_judge = functools.partial(_judge_rows, p, first, lambda rows: dense_estimator(some_of(directions, rows)),
                                   tol, evaluator.sides, scale.numpy(), autograd_eps, autograd_rounding,
                                   float64_problem, floor)
    if blocks:  # the worst few suspects first: a bug on many elements costs a few directions' judging
        table = _judged_in_rounds(first, floor, tol, rows_judge)
    else:
        table = judge(p, first, estimator, tol.of, sides=evaluator.sides, scale=scale.numpy(),
                      autograd_eps=autograd_eps, autograd_rounding=autograd_rounding,
                      float64_problem=float64_problem, tolerance_floor=floor)
    located = None
    if directions is not None and "fail" in table["state"].tolist():
        worst = worst_position(table)

        judge_elements = element_judge(p, tol, workers, autograd_eps, float64_problem, element_rounding)
        halved = _halved(p, g, directions, table, tol, element_tolerance, judge_elements) if blocks else None
        if halved is not None:  # large blocks: every failing block's elements found by halving
            narrowed, alongs = halved
            at = worst_position(narrowed)
            located = replace(element(narrowed, at), found_along=alongs[at], found_by="block")
            found = np.concatenate([filled(len(table), ""), alongs])
            table = table.stacked(narrowed, found_along=Later(lambda: found))
            return Measured(first, table, scale, located, share)
        if blocks and len(block_members(directions, worst)) <= ONE_BY_ONE_MOST:  # every element of the block
            index = block_members(directions, worst)
        elif blocks:  # a block of a model of millions: the bisection's element (2 evaluations a level)
            index = torch.tensor([locate(p, g, directions[worst], tol).flat_index])
        else:  # the element bisection (and the residuals' matched filter) point at
            residual = table["autograd"] - table["best_numeric"]
            index = torch.tensor([name_element(p, g, directions, residual, worst, tol).flat_index])
        # each checked on its own, with the check's whole verdict machinery: the element named
        # is judged on its own autograd value and finite difference, tolerance and error bound
        narrowed = checked_elements(p, g, index, tol, judge_elements)
        along = str(table["element"][worst])
        located = replace(element(narrowed, worst_position(narrowed)), found_along=along,
                          found_by="block" if blocks else "bisection")
        table = with_narrowed(table, narrowed, along)
    return Measured(first, table, scale, located, share)


def element_judge(p: NumericProblem, tol: Tolerances, workers: int, autograd_eps: float, float64_problem,
                  element_rounding=None):
    """``judge_elements(elements, first_rows, scale_rows)`` for :func:`checked_elements`: the
    elements each judged on its own, the worst few suspects first (as the directions are)."""
    def judge_elements(elements, first_rows, scale_rows):
        rounding = None if element_rounding is None else element_rounding[elements].numpy()
        return _judged_in_rounds(first_rows, None, tol, functools.partial(
            _judge_rows, p, first_rows, lambda rows: onehot_estimator(elements[torch.from_numpy(rows)], workers),
            tol, None, scale_rows.numpy(), autograd_eps, rounding, float64_problem, None))

    return judge_elements


def _judge_rows(p: NumericProblem, first: Columns, estimator_for, tol: Tolerances, sides, scale: np.ndarray,
                autograd_eps: float, autograd_rounding, float64_problem, floor: np.ndarray | None, rows: np.ndarray,
                settled: bool = False) -> Columns:
    """The judged table of the values ``rows`` of ``first`` (``estimator_for(rows)``: their
    RowEstimator; ``floor``: each value's least tolerance, or None). ``settled``:
    the check has already failed elsewhere, so these values are not re-estimated (no step search,
    noise or float64 witness: no evaluation of fn) and a value beyond its tolerance is
    inconclusive, not fail."""
    rounding = autograd_rounding
    if callable(rounding):
        rounding = lambda: autograd_rounding()[rows]  # noqa: E731
    elif rounding is not None:
        rounding = rounding[rows]
    whole = len(rows) == len(first)  # rows is every row, in order: the table itself
    table = first if whole else first.taken(rows)
    floor = None if floor is None else floor[rows]
    if not settled:
        return judge(p, table, estimator_for(rows), tol.of,
                     sides=None if sides is None or whole else tuple(s[torch.from_numpy(rows)] for s in sides),
                     scale=scale[rows], autograd_eps=autograd_eps, autograd_rounding=rounding,
                     float64_problem=float64_problem, tolerance_floor=floor)
    table = judge(p, table, estimator_for(rows), lambda x: np.full(len(x), np.inf), scale=scale[rows],
                  float64_problem=lambda: None)
    best_tolerance = tol.of(table["best_numeric"])
    return table.joined(state=filled(len(rows), "inconclusive"), bound_source=filled(len(rows), NOT_REESTIMATED),
                        best_tolerance=best_tolerance if floor is None else np.maximum(best_tolerance, floor))


def _judged_in_rounds(first: Columns, floor: np.ndarray | None, tol: Tolerances, judge_rows) -> Columns:
    """The values of ``first`` (block directions, or the elements a failing one was narrowed to)
    judged: every one within its tolerance at the check's step and the JUDGED_FIRST furthest
    beyond it first; when one of those fails, the check has failed and the other suspects are
    left inconclusive, not re-estimated (each costs a step search, a noise table and the
    float64 witness, ~70 evaluations of fn: ~50 failing directions and 22 elements made a
    26 k-parameter model's bug cost 17x its pass in evaluations); else they are judged too."""
    a, n = first["autograd"], first["numeric"]
    limit = tol.of(n) if floor is None else np.maximum(tol.of(n), floor)
    excess = np.nan_to_num(np.abs(a - n) / limit, nan=np.inf)
    suspects = np.flatnonzero(~(excess <= 1.0))
    if suspects.size <= JUDGED_FIRST:
        return judge_rows(np.arange(len(first)))
    suspects = suspects[np.argsort(-excess[suspects], kind="stable")]
    head = np.sort(np.concatenate([np.flatnonzero(excess <= 1.0), suspects[:JUDGED_FIRST]]))
    rest = np.sort(suspects[JUDGED_FIRST:])
    judged = judge_rows(head)
    table = judged.stacked(judge_rows(rest, settled="fail" in judged["state"].tolist()))
    return table.taken(np.argsort(np.concatenate([head, rest]), kind="stable"))


def _halved(p: NumericProblem, g: torch.Tensor, directions: torch.Tensor, table: Columns, tol: Tolerances,
            element_tolerance, judge_elements):
    """When the failing blocks are large (:data:`HALVING_FROM`): the elements halving finds
    in every failing block (:func:`gradlab.check.differences.halving.halve`), checked on their own (a judged
    table), and the direction each was found along. None for small blocks, or when no element
    so found fails on its own: then every element of the worst block is checked, one by one."""
    failing = np.flatnonzero(table["state"] == "fail")
    # the furthest beyond tolerance first, at most NARROWED_BLOCKS of them: a bug on many elements
    # fails many blocks, and naming its worst few costs a few halvings, not one per block
    excess = np.nan_to_num(table["best_abs_error"][failing] / table["best_tolerance"][failing], nan=np.inf)
    failing = failing[np.argsort(-excess, kind="stable")[:NARROWED_BLOCKS]]
    blocks = [block_members(directions, k) for k in failing]
    if not blocks or min(b.numel() for b in blocks) < HALVING_FROM:
        return None
    own = tol.of(g.numpy()) if element_tolerance is None else element_tolerance
    found = [halve(p, g, b, directions[k], tol, own) for k, b in zip(failing, blocks)]
    if not sum(f.numel() for f in found):
        return None
    narrowed = checked_elements(p, g, torch.cat(found), tol, judge_elements)
    if "fail" not in narrowed["state"].tolist():
        return None
    alongs = np.concatenate([filled(f.numel(), str(table["element"][k])) for k, f in zip(failing, found)])
    return narrowed, alongs


def _worse(p: NumericProblem, masks: torch.Tensor, autograd: np.ndarray, tol: Tolerances, rows) -> int:
    """0 or 1: the half (a row of ``masks``) whose autograd value is further beyond
    tolerance plus error bound, after a step search."""
    def estimator(q, r, h):
        return estimates(q, dense_maker(q, masks[torch.from_numpy(r)]), h)

    start = bounded_estimates(p, estimator, rows, np.full(2, p.step))
    best = search(p, estimator, rows, autograd, tol.of(autograd), start)
    excess = (np.abs(best.estimate - autograd) - best.bound) / tol.of(best.estimate)
    return int(np.argmax(np.nan_to_num(excess, nan=math.inf)))


def locate(p: NumericProblem, grad: torch.Tensor, direction: torch.Tensor, tol: Tolerances) -> Element:
    """Bisect a failing ``direction`` down to one element; return that element's checked value.

    ``grad`` is autograd's flat gradient (float64).
    """
    numel = p.flat.numel
    active = torch.nonzero(direction).flatten()  # a block direction moves its block only
    if active.numel() == 0:
        active = torch.arange(numel)
    rows = np.arange(2)
    while active.numel() > 1:
        halves = torch.tensor_split(active, 2)
        masks = torch.zeros(2, numel, dtype=torch.float64)
        for k, part in enumerate(halves):
            masks[k, part] = direction[part]
        active = halves[_worse(p, masks, (masks @ grad).numpy(), tol, rows)]
    i = active[:1]
    est, scale = estimates(p, onehot_maker(p, i), torch.full((1,), p.step, dtype=torch.float64))
    return element(value_table(p, i, Estimates(grad[i], est, scale), tol), 0)


def _element_excess(p: NumericProblem, grad: torch.Tensor, index: torch.Tensor, tol: Tolerances) -> np.ndarray:
    """How far beyond tolerance plus bound each element's autograd value is, after a step search."""
    def estimator(q, r, h):
        return estimates(q, onehot_maker(q, index[torch.from_numpy(r)]), h)

    rows = np.arange(len(index))
    a = grad[index].numpy()
    start = bounded_estimates(p, estimator, rows, np.full(len(rows), p.step))
    best = search(p, estimator, rows, a, tol.of(a), start)
    excess = (np.abs(best.estimate - a) - best.bound) / tol.of(best.estimate)
    return np.nan_to_num(excess, nan=math.inf)


def name_element(p: NumericProblem, grad: torch.Tensor, directions: torch.Tensor, residual: np.ndarray,
                 worst: int, tol: Tolerances) -> Element:
    """The element a directional check's failures point at: the bisection of the worst
    direction, checked against the element every direction's residual (autograd minus
    finite difference) points at together (a matched filter: argmax_k |Σ_j r_j v_jk|/‖v_k‖,
    exact for one wrong element when the residuals are exact). When the two differ, the one
    further beyond its own tolerance plus bound, checked on its own, is named: one
    direction's bisection can be drawn away by truncation in another half."""
    bisected = locate(p, grad, directions[worst], tol)
    r = np.nan_to_num(residual)
    norms = directions.norm(dim=0).numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.abs(r @ directions.numpy()) / np.where(norms > 0, norms, np.inf)
    matched = int(np.argmax(score))
    if matched == bisected.flat_index or bisected.flat_index < 0:
        return bisected
    index = torch.tensor([bisected.flat_index, matched])
    if int(np.argmax(_element_excess(p, grad, index, tol))) == 0:
        return bisected
    est, scale = estimates(p, onehot_maker(p, index[1:]), torch.full((1,), p.step, dtype=torch.float64))
    return element(value_table(p, index[1:], Estimates(grad[index[1:]], est, scale), tol), 0)


def name_in_block(p: NumericProblem, grad: torch.Tensor, direction: torch.Tensor, tol: Tolerances,
                  judge_elements) -> Element:
    """The element a failing block direction points at: every element of its block (a
    handful, :mod:`gradlab.check.running.blocks`) checked on its own, with the check's whole
    verdict machinery (``judge_elements(index, first_table)``: step search, measured noise,
    float64 witness), and the worst of them named. A bisection would compare halves of
    the block whose finite differences, in low precision, can be noisier than the error."""
    table = checked_elements(p, grad, torch.nonzero(direction).flatten(), tol, judge_elements)
    return element(table, worst_position(table))


def checked_elements(p: NumericProblem, grad: torch.Tensor, index: torch.Tensor, tol: Tolerances,
                     judge_elements) -> Columns:
    """The judged table of the flat elements ``index``, each checked on its own: a finite
    difference at the check's step (one stencil per element, in the numeric dtype), then
    ``judge_elements(index, first_table, scale)``'s states, bounds and best estimates."""
    chunk = chunk_size(p, len(index))
    numeric, scale = run_chunks(onehot_evaluator(p, index, chunk), len(index), chunk)
    first = value_table(p, index, Estimates(grad[index], numeric, scale), tol)
    return judge_elements(index, first, scale)
