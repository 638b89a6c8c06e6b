"""The report of a check: the per-value table, the summary, and its words.

:func:`value_table` gives one row per checked value (element or direction);
:func:`summarize` gathers the evidence, asks :func:`gradlab.check.verdicts.diagnosis.diagnose`
why the check passed or failed, and words the verdict: a one-line ``headline``,
the ``message`` that names the failing element with both values and the
difference, and the ``hint`` (the diagnosis and its first fix).

>>> from gradlab.check.running.problem import numeric_problem
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.tensor([1.0, 2.0], dtype=torch.float64)
>>> p = numeric_problem(lambda t: t ** 2, [x], "sum", None, get_scheme("forward"), 0.5, torch.float64)
>>> est = Estimates(torch.tensor([2.0, 4.0]), torch.tensor([2.5, 4.5]), torch.tensor([5.0, 5.0]))
>>> table = value_table(p, torch.tensor([0, 1]), est, Tolerances(rtol=0.0, atol=0.1))
>>> table["element"].tolist(), table["abs_error"].tolist(), table["ok"].tolist()
(['x[0]', 'x[1]'], [0.5, 0.5], [False, False])
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import torch

from gradlab.check.differences.stencil import predicted_roundoff
from gradlab.check.running.batching import FlatInputs
from gradlab.check.running.problem import NumericProblem
from gradlab.check.verdicts.columns import Columns, Later, filled, own_rows
from gradlab.check.verdicts.diagnosis import Diagnosis, Evidence, diagnose
from gradlab.check.verdicts.results import CheckSummary, Element
from gradlab.check.verdicts.states import STATE_NAMES, overall, spread_note, verdict_words
from gradlab.check.verdicts.table_rows import element, worst_position, worst_position_in
from gradlab.numerics.dtypes import facts

__all__ = ["Tolerances", "Estimates", "CheckContext", "value_table", "with_narrowed", "own_rows", "error_map",
           "state_counts", "summarize"]


@dataclass(frozen=True)
class Tolerances:
    """A value passes when |autograd - numeric| <= atol + rtol·|numeric|."""

    rtol: float
    atol: float

    def of(self, numeric):
        return self.atol + self.rtol * abs(numeric)

    def widened(self, spread: float) -> "Tolerances":
        """atol widened by a nondeterministic backward's ``spread`` (unchanged when 0)."""
        return self if not spread > 0 else Tolerances(self.rtol, self.atol + spread)


@dataclass(frozen=True, eq=False)
class Estimates:
    """Both gradients of each checked value, and the round-off scale of its estimate (float64)."""

    autograd: torch.Tensor
    numeric: torch.Tensor
    scale: torch.Tensor


@dataclass(frozen=True)
class CheckContext:
    """What the summary reports besides the problem and the table."""

    mode: str
    autograd_dtype: torch.dtype
    tolerances: Tolerances
    summed_elements: int  # output elements of fn (what sum and mean add up)
    backward_spread: float = 0.0  # max |difference| of two backward passes (already in atol)


def _labels(flat: FlatInputs, index: torch.Tensor | None, count: int):
    if index is None:
        return [f"direction {k}" for k in range(count)], [(k,) for k in range(count)], [-1] * count
    flat_index = index.numpy()
    sizes = np.array([int(torch.Size(s).numel()) for s in flat.shapes])
    if flat_index.size and (flat_index.min() < 0 or flat_index.max() >= sizes.sum()):
        raise IndexError(f"flat index beyond the {int(sizes.sum())} input elements")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    inputs = np.searchsorted(np.cumsum(sizes), flat_index, side="right")
    idx: list[tuple[int, ...]] = [()] * len(flat_index)
    for k, shape in enumerate(flat.shapes):  # vectorised per input: a full check has 10^4+ rows
        rows = np.flatnonzero(inputs == k)
        if rows.size:
            coords = np.unravel_index(flat_index[rows] - starts[k], tuple(shape) or (1,))
            located = zip(*(c.tolist() for c in coords)) if len(shape) else [()] * rows.size
            for r, t in zip(rows.tolist(), located):
                idx[r] = tuple(t)
    labels = [flat.label(k, t) for k, t in zip(inputs.tolist(), idx)]
    return labels, idx, inputs.tolist()


def value_table(p: NumericProblem, index: torch.Tensor | None, est: Estimates,
                tol: Tolerances) -> Columns:
    """One row per checked value: flat elements ``index``, or directions when it is None."""
    a, n, scale = est.autograd.numpy(), est.numeric.numpy(), est.scale.numpy()
    abs_err = np.abs(a - n)
    tolerance = tol.of(n)
    big = np.maximum(np.abs(a), np.abs(n))
    # what only a reader of the table needs is computed when first read (most checks pass unread)
    labels = Later(lambda: _labels(p.flat, index, len(a)))
    return Columns({
        "element": Later(lambda: np.array(labels()[0], dtype=object)),
        "input": Later(lambda: np.array(labels()[2], dtype=np.int64)),
        "index": Later(lambda: _objects(labels()[1])),
        "autograd": a, "numeric": n, "ratio": Later(lambda: _divided(n, a, a != 0, np.nan)), "abs_error": abs_err,
        "rel_error": Later(lambda: _divided(abs_err, big, big > 0, 0.0)), "tolerance": tolerance,
        "ok": abs_err <= tolerance,
        "relative_perturbation": Later(lambda: _divided(p.step * np.abs(a), scale, scale > 0, np.nan)),
        "roundoff": Later(lambda: np.asarray(predicted_roundoff(p, est.scale))),
        "below_atol": big <= tol.atol,
        "flat": Later(lambda: index.numpy().astype(np.int64) if index is not None
                      else np.full(len(a), -1, dtype=np.int64)),
        "kind": Later(lambda: filled(len(a), "element" if index is not None else "direction")),
        "found_along": Later(lambda: filled(len(a), "")),
    }, len(a))


def with_narrowed(table: Columns, narrowed: Columns, along: str) -> Columns:
    """A directional table's rows, then those of the elements a failing direction (labelled
    ``along``) was narrowed to, each checked on its own: ``kind`` "element", ``found_along``
    the direction. The check's own values stay the first rows (:func:`own_rows`)."""
    rows = len(table)
    found = Later(lambda: np.concatenate([filled(rows, ""), filled(len(narrowed), along)]))
    return table.stacked(narrowed, found_along=found)


def _divided(top: np.ndarray, bottom: np.ndarray, where: np.ndarray, otherwise: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(where, top / bottom, otherwise)


def _objects(items) -> np.ndarray:
    column = np.empty(len(items), dtype=object)
    column[:] = items
    return column


def error_map(flat: FlatInputs, mode: str, table: Columns) -> np.ndarray | None:
    """Full mode on one 1-D or 2-D input: each element's rel_error in its shape (a row for 1-D)."""
    if mode != "full" or len(flat.shapes) != 1 or len(flat.shapes[0]) not in (1, 2):
        return None
    shape = tuple(flat.shapes[0])
    return table["rel_error"].reshape(shape if len(shape) == 2 else (1, shape[0]))


def state_counts(table: Columns) -> tuple[tuple[tuple[str, int], ...], str]:
    """((state, how many values) for every state, the verdict they make).

    >>> from gradlab.check.verdicts.columns import Columns, Later
    >>> state_counts(Columns({"state": np.array(["pass", "inconclusive", "pass"])}))[1]
    'inconclusive'
    """
    table = own_rows(table)
    states = table["state"] if "state" in table else np.where(table["ok"], "pass", "fail")
    tally = Counter(states.tolist())  # one pass over the states (a full check has 10^4+ rows)
    counts = tuple((name, tally.get(name, 0)) for name in STATE_NAMES)
    return counts, overall(name for name, count in counts if count)


def summarize(p: NumericProblem, table: Columns, context: CheckContext, *, scale: torch.Tensor,
              located: Element | None, truncation_share: float | None,
              first: Columns | None = None,
              output_of: Callable[[int], str | None] | None = None,
              notes: tuple[str, ...] = (), counted=None) -> CheckSummary:
    """The verdict, the worst value, the diagnosis and their words.

    ``table`` carries the final estimates and states; ``first`` (default: table) the
    values at the check's own step, which the diagnosis explains. ``output_of(flat_index)``
    names the output part a failing element's disagreement comes through (fn with
    several outputs); ``counted``: :func:`state_counts` of ``table``, if the caller has it.
    The rows of elements a failing direction was narrowed to are ``located``'s evidence, not
    values of the check: they are not counted (:func:`own_rows`)."""
    table = own_rows(table)
    counts, verdict = state_counts(table) if counted is None else counted
    position = worst_position_in(table, verdict if "state" in table else None) if len(table) else None
    worst = element(table, position) if position is not None else None
    if verdict == "fail" and output_of is not None:
        worst, located = _through(worst, output_of), _through(located, output_of)
    first = table if first is None else first
    named = located if located is not None else worst
    if named is not None and verdict == "pass":  # the diagnosis speaks of the first step
        named = element(first, position if _same_errors(first, table) else worst_position(first))
    loss, tol = p.loss, context.tolerances
    evidence = _evidence(p, first, context, scale=scale, named=named, truncation_share=truncation_share, loss=loss)
    diagnosis = diagnose(evidence)
    nd = facts(p.dtype)
    headline, message, hint = verdict_words(p, verdict, dict(counts), diagnosis, tol, worst=worst,
                                            located=located, refined=_refined(p, table))
    notes = ((spread_note(context.backward_spread),) if context.backward_spread > 0 else ()) + tuple(notes)
    return CheckSummary(
        verdict=verdict, mode=context.mode, scheme=p.scheme.name, step=p.step,
        dtype=facts(context.autograd_dtype).name, numeric_dtype=nd.name, reduction=p.reduction,
        rtol=tol.rtol, atol=tol.atol, checked=len(table), failed=dict(counts)["fail"], loss=loss,
        relative_perturbation=evidence.relative_perturbation, machine_eps=nd.eps,
        vacuous=diagnosis.kind == "vacuous", worst=worst, located=located, diagnosis=diagnosis,
        headline=headline, message=message, hint=hint, counts=counts,
        backward_spread=context.backward_spread, notes=notes,
        fixed_step_failed=_fixed_step_failed(evidence, first, table, tol),
    )


def _fixed_step_failed(evidence: Evidence, first: Columns, table: Columns, tol: Tolerances) -> int:
    """How many values a hand-written check at the check's step finds over the tolerance: its own
    printed values where the table has them (gradlab.check.verdicts.hand_written), else GradLab's."""
    if "hand_written" in table:
        printed = table["hand_written"]
        return int((~(np.abs(table["autograd"] - printed) <= tol.of(printed))).sum())
    return evidence.failed if first["ok"] is table["ok"] else int((~table["ok"]).sum())


def _same_errors(first: Columns, table: Columns) -> bool:
    """Whether ``first`` holds the very columns worst_position reads of a passing ``table``
    (judge adds its columns to the first table's): then its worst row is table's."""
    return first is table or ("state" not in first
                              and all(first[c] is table[c] for c in ("ok", "abs_error", "tolerance")))


def _through(e: Element | None, output_of: Callable[[int], str | None]) -> Element | None:
    if e is None or e.flat_index < 0:
        return e
    return replace(e, output=output_of(e.flat_index) or "")


def _refined(p: NumericProblem, table: Columns) -> int:
    """How many values were taken at another step or dtype than the check's."""
    if "best_step" not in table:
        return 0
    steps, dtypes, name = table["best_step"], table["best_dtype"], facts(p.dtype).name
    kept = dtypes.tolist().count(name)  # the usual cases: every row in p's dtype, or none (a float64 twin)
    if not kept:
        return len(dtypes)
    if kept == len(dtypes):
        return int((steps != p.step).sum())
    return int(((steps != p.step) | (dtypes != name)).sum())


def _evidence(p: NumericProblem, table: Columns, context: CheckContext, *, scale: torch.Tensor,
              named: Element | None, truncation_share: float | None, loss: float) -> Evidence:
    failing = ~table["ok"]
    failed = int(failing.sum())
    rows = failing if failed else slice(None)  # explain the failures, if any
    rho = table["relative_perturbation"][rows]
    explained = float((table["roundoff"][rows] >= table["tolerance"][rows]).mean()) if failed else 0.0
    finite = np.isfinite(table["autograd"]) & np.isfinite(table["numeric"])
    tol = context.tolerances
    return Evidence(
        passed=not failed, dtype=facts(p.dtype).name, scheme=p.scheme.name, step=p.step,
        reduction=p.reduction, rtol=tol.rtol, atol=tol.atol,
        relative_perturbation=_median(rho) if np.isfinite(rho).any() else 0.0,
        loss=float(scale.median()), summed_elements=context.summed_elements,
        grad_scale=_median(np.abs(table["autograd"][rows])), roundoff_explained=explained,
        nonfinite=int((~finite).sum()) + (not math.isfinite(loss)),
        checked=len(table), failed=failed, below_atol=int(table["below_atol"].sum()),
        autograd_dtype=facts(context.autograd_dtype).name,
        worst_label=named.label if named else "", worst_autograd=named.autograd if named else math.nan,
        worst_numeric=named.numeric if named else math.nan,
        worst_rel_error=named.rel_error if named else math.nan,
        truncation_share=truncation_share, quantum=_quantum(p, loss),
    )


def _median(values: np.ndarray) -> float:
    """The median as pandas takes it: NaN ignored, NaN when nothing is left. np.median's
    arithmetic (the middle value, or the mean of the two middle ones) without its
    dispatch, which costs more than a small check's whole summary."""
    if values.size == 1:
        return float(values[0])  # NaN when it is NaN
    finite = np.sort(values[~np.isnan(values)])
    k = finite.size // 2
    if not finite.size:
        return math.nan
    return float(finite[k]) if finite.size % 2 else float((finite[k - 1] + finite[k]) / 2)


#: The dtypes whose spacing numpy gives (bfloat16 and float16 take torch's nextafter).
_NUMPY_FLOATS = {torch.float32: np.float32}


def _quantum(p: NumericProblem, loss: float) -> float | None:
    """ulp(L)/h: the spacing of the values a finite difference of L can take."""
    if p.reduction == "none" or p.scheme.complex_step or not math.isfinite(loss):
        return None
    return _ulp(abs(loss), p.dtype) * max(abs(w) for w in p.scheme.weights) / p.step


def _ulp(value: float, dtype: torch.dtype) -> float:
    """The spacing above ``value`` (rounded to ``dtype``) in ``dtype``, as torch.nextafter gives it."""
    if dtype == torch.float64:
        return math.nextafter(value, math.inf) - value
    kind = _NUMPY_FLOATS.get(dtype)
    if kind is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            x = kind(value)
            return float(np.nextafter(x, kind(np.inf)) - x)
    x = torch.tensor(value, dtype=dtype)
    return float(torch.nextafter(x, torch.tensor(math.inf, dtype=dtype)) - x)
