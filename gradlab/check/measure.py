"""Estimating every checked value and judging it: the body of a first-order check.

:func:`measure_values` runs the finite differences of a check's perturbations (one-hot
elements or directions), builds the first table, judges it (:func:`gradlab.check.verdicts.judge`)
and, when a direction fails, names the element it points at (:mod:`gradlab.check.bisection`).
"""

from __future__ import annotations

import torch

from gradlab.check.bisection import name_element, name_in_block
from gradlab.check.evaluation import Dense, chunk_size, onehot_evaluator, run_chunks
from gradlab.check.problem import NumericProblem
from gradlab.check.report import Estimates, Tolerances, value_table, worst_position
from gradlab.check.step_halving import truncation_share
from gradlab.check.stencil import dense_maker, onehot_maker
from gradlab.check.verdicts import dense_estimator, direction_tolerance, judge, onehot_estimator

__all__ = ["measure_values"]


def measure_values(p: NumericProblem, g: torch.Tensor, index, directions, tol: Tolerances, progress, workers,
                   float64_problem, autograd_eps: float, autograd_rounding=None, *, blocks: bool = False,
                   element_rounding=None):
    """The first table (at the check's step), the final one (with states), the round-off
    scales, the located element and the truncation share. In ``blocks`` mode a failing
    block's element is named by checking each of its elements (bisection.name_in_block),
    with autograd's rounding ``element_rounding`` (|g - float64 autograd| per element, or None)."""
    total = index.numel() if index is not None else directions.shape[0]
    chunk = chunk_size(p, total)
    if index is not None:
        maker_for = lambda a, b: onehot_maker(p, index[a:b])  # noqa: E731
        evaluator, autograd_values = onehot_evaluator(p, index, chunk), g[index]
    else:
        maker_for = lambda a, b: dense_maker(p, directions[a:b])  # noqa: E731
        evaluator, autograd_values = Dense(p, directions), directions @ g
    numeric, scale = run_chunks(evaluator, total, chunk, progress, workers)
    first = value_table(p, index, Estimates(autograd_values, numeric, scale), tol)
    share = truncation_share(p, first, maker_for, numeric, autograd_values)
    estimator = onehot_estimator(index, workers) if index is not None else dense_estimator(directions)
    # a block's tolerance is its elements' (directional mode keeps torch's fast mode's atol + rtol·|∇L·v|)
    floor = None if not blocks else direction_tolerance(directions, torch.as_tensor(tol.of(g.numpy())))
    table = judge(p, first, estimator, tol.of, sides=evaluator.sides, scale=scale.numpy(),
                  autograd_eps=autograd_eps, autograd_rounding=autograd_rounding,
                  float64_problem=float64_problem, tolerance_floor=floor)
    located = None
    if directions is not None and "fail" in table["state"].tolist():
        worst = worst_position(table)
        if blocks:
            def judge_elements(rows, first_rows, scale_rows):
                rounding = None if element_rounding is None else element_rounding[rows].numpy()
                return judge(p, first_rows, onehot_estimator(rows, workers), tol.of, scale=scale_rows.numpy(),
                             autograd_eps=autograd_eps, autograd_rounding=rounding, float64_problem=float64_problem)
            located = name_in_block(p, g, directions[worst], tol, judge_elements)
        else:
            residual = table["autograd"] - table["best_numeric"]
            located = name_element(p, g, directions, residual, worst, tol)
    return first, table, scale, located, share
