"""What a gradient check returns: one row per checked value, a summary, the extras.

The summary carries structure, not prose to be parsed: ``headline`` (the
verdict in one line), ``message`` (the failing element, both values and the
difference, or the pass in one sentence) and ``hint`` (the diagnosis's
headline and first fix, empty on a pass); the diagnosis keeps its own
headline, details, fixes and display level.

An :class:`~gradlab.check.verdicts.element.Element` (one checked value) lives in a leaf module of its own,
so :mod:`gradlab.check.verdicts.states`, which words a verdict from elements, and this module, which asks
it for the overall verdict, depend on it and not on each other; it is imported here under its
old address too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from gradlab.check.further.taylor import TaylorResult
from gradlab.check.verdicts.columns import Columns
from gradlab.check.verdicts.diagnosis import Diagnosis
from gradlab.check.verdicts.element import Element
from gradlab.check.verdicts.states import overall
from gradlab.check.verdicts.table_rows import element, worst_position
from gradlab.errors import GradLabError
from gradlab.notebook_html import ShownInNotebook

__all__ = ["GradcheckError", "Element", "CheckSummary", "CheckResult"]


class GradcheckError(GradLabError):
    """A gradient check failed with ``raise_on_fail=True``; the message names the element."""


@dataclass(frozen=True)
class CheckSummary:
    """The verdict of a check, its worst value, and the diagnosis."""

    verdict: str  # "pass", "fail", "inconclusive" or "not_differentiable" (gradlab.check.verdicts.states)
    mode: str
    scheme: str
    step: float
    dtype: str  # autograd's dtype (the inputs')
    numeric_dtype: str  # the finite differences'
    reduction: str
    rtol: float
    atol: float
    checked: int
    failed: int  # values whose state is fail
    loss: float  # L(x) in the numeric dtype (for "none": the weighted sum, in float64)
    relative_perturbation: float
    machine_eps: float  # of the numeric dtype
    vacuous: bool
    worst: Element | None
    located: Element | None  # blocks and directional modes: the element a failing direction points at
    diagnosis: Diagnosis
    headline: str  # the verdict in one line
    message: str  # the failing element, both values, the difference (or the pass, in one sentence)
    hint: str  # what the diagnosis says and its first fix; "" on a pass
    counts: tuple[tuple[str, int], ...] = ()  # (state, how many values), every state
    backward_spread: float = 0.0  # max |difference| of two backward passes; added to atol
    notes: tuple[str, ...] = ()  # what else the reader must know (a widened tolerance)
    # What a hand-written check concludes: values over the tolerance at the check's own step,
    # with no error bound and no re-estimation (the question's "my grad check fails").
    fixed_step_failed: int = 0
    skipped: int = 0  # input elements holding ±inf or NaN, not perturbed (gradlab.check.inputs.skipped)
    # the dense directions' pass (mode "dense"): no element this many of its tolerances off
    seen_tolerances: float | None = None

    @property
    def fixed_step_verdict(self) -> str:
        """"fail" if any value is over the tolerance at this step alone, else "pass"."""
        return "fail" if self.fixed_step_failed else "pass"

    def count(self, state: str) -> int:
        """How many checked values are in ``state`` (``"skipped"``: input elements not perturbed)."""
        return self.skipped if state == "skipped" else dict(self.counts).get(state, 0)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def text(self) -> str:
        """Message and hint as one paragraph (the text of a GradcheckError)."""
        text = f"{self.message} Hint: {self.hint}" if self.hint else self.message
        return " ".join((text, *self.notes))


@dataclass(frozen=True, eq=False)
class CheckResult(ShownInNotebook):
    """Per-value table, summary, optional heatmap array and Taylor test.

    With ``check_forward=True`` or ``order=2`` the forward-mode and second-order
    checks ride along (``forward``, ``second_order``, each a CheckResult of its own);
    ``verdict`` is then the worst of the three, and ``table``/``summary`` stay the
    first-order check's. In a notebook the result shows as a table and a figure.
    """

    # one row per checked element (or direction; then the elements a failing direction was
    # narrowed to, each checked on its own: column ``kind``); ``table`` is its DataFrame
    columns: Columns
    _summary: "CheckSummary | Callable[[], CheckSummary]"  # or how to build it: see ``summary``
    error_map: np.ndarray | None  # full mode on a 1-D/2-D input: rel_error in its shape
    taylor: TaylorResult | None
    forward: "CheckResult | None" = None  # forward-mode AD against finite differences
    second_order: "CheckResult | None" = None  # the gradient's gradient (double backward)
    own_verdict: str | None = None  # this check's verdict without the extras (default: the summary's)
    dtype: str | None = None  # the checked (least precise) dtype's name, as the summary gives it

    @property
    def summary(self) -> CheckSummary:
        """The verdict, the worst value, the diagnosis and their words; built on first use
        when the engine handed over how to build it (a pass: its words are not needed to
        know it passed)."""
        made = self._summary
        if callable(made):
            made = made()
            object.__setattr__(self, "_summary", made)
        return made

    def __getstate__(self) -> dict:
        """What pickling keeps (a worker process sends results): the summary built, not how to build it."""
        _ = self.summary
        return dict(self.__dict__)

    @property
    def table(self) -> pd.DataFrame:
        """One row per checked element (or direction), as a DataFrame (built on first use).

        Column ``kind`` says which a row is: "element" or "direction". When a direction fails
        (blocks and directional modes), the elements it was narrowed to follow the directions,
        each checked on its own with its own tolerance, error bound and state, as rows of kind
        "element" whose ``found_along`` names the direction (the other rows' is ""); the
        summary's counts are of the directions, the check's own values."""
        return self.columns.frame()

    @property
    def worst_value(self) -> Element:
        """The checked value furthest over its tolerance, read from the table alone: what the
        summary names as its worst, without building the summary (a pass's words are built
        only when read).

        >>> import torch
        >>> from gradlab.check.running.engine import check_gradient
        >>> check_gradient(torch.sin, torch.tensor([0.5, 1.0], dtype=torch.float64), mode="full").worst_value.state
        'pass'
        """
        return element(self.columns, worst_position(self.columns))

    def worst_rows(self, limit: int) -> pd.DataFrame:
        """At most ``limit`` rows of :attr:`table`, furthest over their tolerance first (a NaN
        difference counts as furthest). A page and a notebook show these: a full check has up
        to 65,536 rows, too many to style and send on every rerun; the API keeps them all.

        >>> import torch
        >>> from gradlab.check.running.engine import check_gradient
        >>> r = check_gradient(lambda t: t.detach() * t, torch.tensor([1.0, 3.0], dtype=torch.float64),
        ...                    mode="full")
        >>> r.worst_rows(1)["element"].tolist()  # autograd says t, the truth is 2t: t[1] is further out
        ['t[1]']
        """
        t = self.columns
        tolerance = np.where(t["tolerance"] > 0, t["tolerance"], np.finfo(np.float64).tiny)
        with np.errstate(invalid="ignore"):
            excess = t["abs_error"] / tolerance
        order = np.argsort(-np.where(np.isnan(excess), np.inf, excess), kind="stable")[:limit]
        return self.table.iloc[order]

    @property
    def first_order(self) -> "CheckResult":
        """This check without the forward-mode and second-order results."""
        return replace(self, forward=None, second_order=None)

    @property
    def parts(self) -> tuple[tuple[str, "CheckResult"], ...]:
        """(name, result) of each check that ran: gradient, then forward mode, second order."""
        extra = (("forward mode", self.forward), ("second order", self.second_order))
        return (("gradient", self.first_order),) + tuple((n, r) for n, r in extra if r is not None)

    @property
    def verdict(self) -> str:
        return overall(r.own_verdict or r.summary.verdict for _, r in self.parts)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def figure(self):
        """The check's figure: the state heatmap in full mode, else each value's error."""
        from gradlab.check.verdicts.notebook import figure_of

        return figure_of(self)

    def _notebook_block(self):
        from gradlab.check.verdicts.notebook import block_of

        return block_of(self)

    @property
    def state_map(self) -> np.ndarray | None:
        """Each element's state in the layout of ``error_map`` (None where it is None)."""
        if self.error_map is None or "state" not in self.columns:
            return None
        return self.columns["state"].reshape(self.error_map.shape)
