"""The four states of a checked value, one row each: label, colour, CLI marker, meaning.

A value is **pass** when autograd and the finite difference agree within the
tolerance; **fail** when they disagree by more than the tolerance *and* the
finite difference's error bound (the finite difference cannot explain it);
**inconclusive** when the disagreement is within the bound and the bound
exceeds the tolerance (the finite difference is too inexact to decide); **not
differentiable** when the left and right one-sided differences disagree beyond
their bounds (a kink: relu or abs at 0, max with ties, round). The overall
verdict is fail if any value fails, else inconclusive or not differentiable if
any value is, else pass (:func:`overall`).

The colours come from :data:`gradlab.figures.style.PALETTE`, each 3:1 on the
light (#ffffff) and the dark (#0e1117) background.

>>> STATES["fail"].marker, STATES["not_differentiable"].label
('FAIL', 'not differentiable')
>>> overall(["pass", "inconclusive", "pass"]), overall(["not_differentiable", "fail"])
('inconclusive', 'fail')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["State", "STATES", "STATE_NAMES", "overall", "EXIT_CODES"]


@dataclass(frozen=True)
class State:
    """One state of a checked value (and of a whole check)."""

    name: str
    label: str
    colour: str  # 3:1 on #ffffff and #0e1117
    marker: str  # the CLI's column value
    exit_code: int  # ``python -m gradlab check``'s status when this is the verdict
    meaning: str


_ROWS = (
    State("pass", "pass", "#2a9d5c", "ok", 0,
          "autograd and the finite difference agree within the tolerance"),
    State("fail", "fail", "#d1495b", "FAIL", 1,
          "they disagree by more than the tolerance and the finite difference's error bound: "
          "the finite difference cannot explain it, the gradient is wrong"),
    State("inconclusive", "inconclusive", "#d47500", "?", 3,
          "the finite difference's error bound exceeds the tolerance, even at the best step "
          "found: it cannot decide"),
    State("not_differentiable", "not differentiable", "#8e44ad", "kink", 4,
          "the left and right one-sided differences disagree beyond their bounds: the function "
          "has a kink here, and autograd picked one of the slopes (or a value between)"),
)
STATES: Mapping[str, State] = MappingProxyType({s.name: s for s in _ROWS})
STATE_NAMES: tuple[str, ...] = tuple(STATES)
#: Exit status of ``python -m gradlab check`` by verdict (2 is bad usage).
EXIT_CODES: Mapping[str, int] = MappingProxyType({s.name: s.exit_code for s in _ROWS})


def overall(states: Iterable[str]) -> str:
    """The verdict of a check from its values' states: fail > inconclusive > not differentiable > pass."""
    present = set(states)
    for name in ("fail", "inconclusive", "not_differentiable"):
        if name in present:
            return name
    return "pass"
