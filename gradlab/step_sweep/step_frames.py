"""The sweep at the steps a slider offers: one frame per step, computed once per view.

A slider over h moves a mark along every curve of the Explorer's chart. Each of its
stops is a *frame*: every (dtype, scheme) estimate at that one step, its step taken and
its errors, computed with the same stencils as the sweep itself
(:func:`gradlab.numerics.schemes.estimates_by_scheme`), so dragging only switches frames
in the browser and never asks the server for a number.

The stops are the 1-2-5 steps (``1e-04``, ``2e-04``, ``5e-04``, ``1e-03`` ...): three a
decade, each a short decimal the URL can carry, the decades of the older step sliders
among them.

>>> slider_steps(1e-3, 1e-1)
(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1)
>>> from gradlab.step_sweep.engine import SweepSettings
>>> t = step_frames(SweepSettings("x**2", 3.0, ("float64",), ("forward",)), (0.5,))
>>> float(t.columns["estimate"][0]), float(t.columns["abs_error"][0])  # ((3.5)**2 - 9) / 0.5 = 6.5
(6.5, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from gradlab.numerics.dtypes import facts
from gradlab.numerics.expressions import parse
from gradlab.numerics.exact_derivatives import reference_at
from gradlab.numerics.schemes import estimates_by_scheme, get_scheme, not_applicable_reason, step_taken

__all__ = ["SLIDER_MANTISSAS", "FRAME_COLUMNS", "slider_steps", "nearest_step", "step_frames", "frame_block",
           "StepFrames"]

#: Each decade's stops: m·10^k for m in these.
SLIDER_MANTISSAS = (1, 2, 5)
FRAME_COLUMNS = ("dtype", "scheme", "h", "step", "estimate", "reference", "abs_error", "rel_error")
_LABELS = ("dtype", "scheme")  # one label per part, repeated over its rows


def slider_steps(smallest: float, largest: float) -> tuple[float, ...]:
    """The 1-2-5 steps from ``smallest`` to ``largest`` (both ends rounded out to a stop), as
    decimals (``float("2e-05")``, not ``2 * 1e-05``), so a step reads back from its URL text.

    >>> slider_steps(3e-5, 1.5e-4)
    (2e-05, 5e-05, 0.0001, 0.0002)
    """
    if not (0 < smallest <= largest and math.isfinite(largest)):
        raise ValueError(f"slider_steps needs 0 < smallest <= largest; got {smallest!r}, {largest!r}.")
    k_lo, k_hi = math.floor(math.log10(smallest)), math.ceil(math.log10(largest))
    stops = sorted(float(f"{m}e{k}") for k in range(k_lo, k_hi + 1) for m in SLIDER_MANTISSAS)
    below = [s for s in stops if s <= smallest * (1 + 1e-12)]
    above = [s for s in stops if s >= largest * (1 - 1e-12)]
    low, high = below[-1] if below else stops[0], above[0] if above else stops[-1]
    return tuple(s for s in stops if low <= s <= high)


def nearest_step(steps: Sequence[float], h: float) -> float:
    """The stop of ``steps`` nearest ``h`` on a log scale.

    >>> nearest_step((1e-4, 2e-4, 5e-4), 3e-4)
    0.0002
    """
    return min(steps, key=lambda s: abs(math.log(s / h)))


def step_frames(settings, steps: Sequence[float]) -> StepFrames:
    """Every (dtype, scheme) estimate of ``settings`` (a validated ``SweepSettings``) at each of
    ``steps``: one row per (dtype, scheme, h), columns :data:`FRAME_COLUMNS`.

    The numbers are the sweep's own: x rounded to the dtype, the stencil's points in the dtype,
    errors against the exact derivative at the rounded x. A dtype x does not fit in, or a scheme
    that does not apply, has no rows (the sweep says why in its notes). :func:`run_sweep` makes
    the same blocks (:func:`frame_block`) with the references it has already computed.
    """
    expr = parse(settings.expression)
    hs = np.asarray(steps, dtype=np.float64)
    parts = []
    for dtype in settings.dtypes:
        if abs(settings.x) > facts(dtype).max:
            continue
        ref = reference_at(expr, settings.x, dtype)
        usable = [s for s in settings.schemes if not not_applicable_reason(s, dtype, expr)]
        with np.errstate(all="ignore"):
            estimates = estimates_by_scheme(expr, ref.x, hs, usable, dtype) if usable else {}
        parts.extend(frame_block(ref, dtype, hs, estimates))
    return StepFrames.joined(parts)


def frame_block(ref, dtype: str, steps: Sequence[float], estimates: dict[str, np.ndarray]) -> list[dict]:
    """The frames of one dtype, a part per scheme (its label and its numpy columns, for
    :meth:`StepFrames.joined`): each scheme's ``estimates`` at ``steps`` (from
    :func:`~gradlab.numerics.schemes.estimates_by_scheme` at ``ref.x``, x rounded to the dtype),
    with the step taken and the errors against ``ref.d1``.

    >>> ref = reference_at(parse("x**2"), 3.0, "float64")
    >>> (part,) = frame_block(ref, "float64", [0.5], {"forward": np.array([6.5])})
    >>> part["scheme"], part["abs_error"].tolist(), part["step"].tolist()
    ('forward', [0.5], [0.5])
    """
    hs = np.asarray(steps, dtype=np.float64)
    if not estimates or not len(hs):
        return []
    taken = step_taken(ref.x, hs, dtype)
    held = torch.as_tensor(hs).to(facts(dtype).torch_dtype).to(torch.float64).numpy()
    exact = float(ref.d1) if ref.defined else math.nan
    reference = np.full(len(hs), exact)
    parts = []
    for name, est in estimates.items():
        s = get_scheme(name)
        with np.errstate(all="ignore"):
            abs_error = np.abs(est - exact)
            rel_error = abs_error / abs(exact) if exact != 0 else np.full_like(abs_error, math.nan)
        parts.append({  # the complex step moves along the imaginary axis: h as held
            "dtype": dtype, "scheme": s.name, "h": hs, "step": held if s.complex_step else taken,
            "estimate": np.asarray(est, dtype=np.float64), "reference": reference, "abs_error": abs_error,
            "rel_error": rel_error})
    return parts


@dataclass(frozen=True, eq=False)
class StepFrames:
    """The frames as numpy columns, one array per column of :data:`FRAME_COLUMNS` over every
    (dtype, scheme, h) row (labels as object arrays): a chart reads the arrays it draws, and a
    DataFrame is made only for a reader that asks (:meth:`table`).

    >>> f = StepFrames.joined([{"dtype": "float64", "scheme": "forward", "h": np.array([0.1, 0.2]),
    ...     "step": np.array([0.1, 0.2]), "estimate": np.array([2.1, 2.2]), "reference": np.array([2.0, 2.0]),
    ...     "abs_error": np.array([0.1, 0.2]), "rel_error": np.array([0.05, 0.1])}])
    >>> len(f), f.columns["scheme"].tolist(), list(f.table().columns) == list(FRAME_COLUMNS)
    (2, ['forward', 'forward'], True)
    >>> len(StepFrames.joined(())), len(StepFrames.joined(()).table())
    (0, 0)
    """

    columns: dict[str, np.ndarray]

    @staticmethod
    def joined(parts: Sequence[dict]) -> "StepFrames":
        """The parts of :func:`frame_block` as one set of columns, each concatenated once."""
        parts = [p for p in parts if len(p["h"])]
        lengths = [len(p["h"]) for p in parts]
        columns = {name: np.repeat(np.array([p[name] for p in parts] or [], dtype=object), lengths)
                   for name in _LABELS}
        columns.update({name: np.concatenate([p[name] for p in parts]) if parts else np.empty(0)
                        for name in FRAME_COLUMNS if name not in _LABELS})
        return StepFrames(columns)

    def __len__(self) -> int:
        return len(self.columns["h"])

    def table(self) -> pd.DataFrame:
        """The frames as a DataFrame, columns :data:`FRAME_COLUMNS` (every column float when empty)."""
        if not len(self):
            return pd.DataFrame({c: pd.Series(dtype=float) for c in FRAME_COLUMNS})
        return pd.DataFrame({c: self.columns[c] for c in FRAME_COLUMNS})
