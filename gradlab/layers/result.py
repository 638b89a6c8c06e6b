"""What ``check_layers`` returns: one row per module and checked side, a verdict, an answer.

A :class:`LayerRow` is one gradient check of one module call (over its parameters, or
over its inputs), or a check that could not run, with the reason. :class:`LayersResult`
holds the rows in forward order; its ``verdict`` is a gradient check's
(:func:`gradlab.check.states.overall` over the rows that ran), ``answer`` names the module
whose gradient is wrong in one sentence, ``table`` is a DataFrame, and ``figure()`` /
``_repr_html_`` show it in a notebook.

>>> row = LayerRow("layers.3", "Swish", "float64", "inputs", "fail", 0, 1, True, "x[2, 7]",
...                1.0, 2.0, 1.0, 1e-5, 1e-9, 0.01, "")
>>> ok = LayerRow("layers.0", "Linear", "float64", "parameters", "pass", 0, 1, False, "weight[0, 1]",
...               0.5, 0.5, 0.0, 1e-5, 1e-9, 0.01, "")
>>> r = LayersResult((ok, row), "first", "Sequential")
>>> r.verdict, r.failing_modules
('fail', ('layers.3',))
>>> print(r.answer)
layers.3 (Swish, a custom autograd.Function): wrong gradient with respect to its input at x[2, 7]; every other module passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import pandas as pd

from gradlab.check.report import element, worst_position
from gradlab.check.states import STATES, overall

__all__ = ["LayerRow", "LayersResult", "SKIPPED"]

#: A row whose check could not run (its ``note`` says why); not a state of a checked value.
SKIPPED = "skipped"


@dataclass(frozen=True)
class LayerRow:
    """One gradient check of one module call."""

    module: str  # its path in model.named_modules()
    kind: str  # its class
    dtype: str
    over: str  # "parameters", "inputs" or "-" (nothing to check)
    verdict: str  # a state (gradlab.check.states) or SKIPPED
    call: int  # which call of the module (0: the first)
    calls: int  # how many times the forward pass called it
    custom_function: bool
    element: str  # the worst (or failing) element, as the check names it
    autograd: float
    numeric: float
    difference: float
    tolerance: float
    bound: float  # the finite difference's error bound there
    seconds: float
    note: str  # why a row is skipped; what else the reader must know

    @classmethod
    def of(cls, call, times: int, over: str, result, seconds: float) -> "LayerRow":
        """The row of a finished check ``result`` (a CheckResult) of ``call``."""
        if result.own_verdict == "pass" and result.dtype is not None:
            # a pass's words are built only when read (CheckResult.summary): its worst value
            # straight from its table, as the summary takes it
            e = element(result.columns, worst_position(result.columns))
            dtype, verdict, headline = result.dtype, "pass", ""
        else:
            s = result.summary
            e = s.located if s.located is not None else s.worst
            dtype, verdict, headline = s.dtype, s.verdict, s.headline
        label = e.where if e is not None else ""
        if label.startswith("direction "):  # a passing default check's worst is a random direction
            label = ""
        if call.kwargs:  # the check ran on a wrapper holding the module as ``inner``
            label = label.replace("inner.", "", 1)
        return cls(call.path, call.kind, dtype, over, verdict, call.index, times, call.custom_function,
                   label, *(_number(e, name) for name in ("autograd", "numeric", "abs_error", "tolerance",
                                                          "error_bound")),
                   seconds, "" if verdict == "pass" else headline)

    @classmethod
    def skipped(cls, call, times: int, over: str, reason: str, seconds: float) -> "LayerRow":
        dtype = next((str(t.dtype).removeprefix("torch.") for t in _tensors(call)), "")
        nan = math.nan
        return cls(call.path, call.kind, dtype, over, SKIPPED, call.index, times, call.custom_function, "",
                   nan, nan, nan, nan, nan, seconds, reason)

    @property
    def where(self) -> str:
        """``layers.3 (Swish, a custom autograd.Function)``; a repeated module names its call."""
        what = f"{self.kind}, a custom autograd.Function" if self.custom_function else self.kind
        call = f", call {self.call + 1} of {self.calls}" if self.calls > 1 else ""
        return f"{self.module or 'the model'} ({what}{call})"


@dataclass(frozen=True)
class LayersResult:
    """Every module's check, in forward order (see the module docstring)."""

    rows: tuple[LayerRow, ...]
    calls: str  # "first" or "all": which calls of a repeated module were checked
    model: str  # the model's class

    @property
    def verdict(self) -> str:
        """A gradient check's verdict over the rows that ran; inconclusive when none ran."""
        ran = [r.verdict for r in self.rows if r.verdict != SKIPPED]
        return overall(ran) if ran else "inconclusive"

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def failing_modules(self) -> tuple[str, ...]:
        """The paths of the modules with a failing check, in forward order, each once."""
        return tuple(dict.fromkeys(r.module for r in self.rows if r.verdict == "fail"))

    @property
    def answer(self) -> str:
        """Which module's gradient is wrong, in one sentence (or that none is)."""
        failing = [r for r in self.rows if r.verdict == "fail"]
        if failing:
            first = failing[0]
            side = "its parameters" if first.over == "parameters" else "its input"
            at = f" at {first.element}" if first.element else ""
            # modules inside the failing one (a parametrization of its weight) are part of it
            others = len([m for m in self.failing_modules if not _within(m, first.module)])
            rest = "every other module passes" if not others and self._others_pass(first.module) else \
                (f"{others} more module{'s' if others > 1 else ''} fail" if others else
                 "the other modules do not all pass (see the table)")
            return f"{first.where}: wrong gradient with respect to {side}{at}; {rest}."
        counts = self.counts()
        checked = sum(v for k, v in counts.items() if k != SKIPPED)
        if self.verdict == "pass":
            skipped = f"; {counts[SKIPPED]} could not be checked" if counts.get(SKIPPED) else ""
            return (f"Every module's gradient is right: {checked} checks of {len(self.modules)} modules pass"
                    f"{skipped}.")
        words = ", ".join(f"{n} {STATES[k].label if k in STATES else k}" for k, n in counts.items() if n and k != "pass")
        return f"No module's gradient is shown wrong, but not every check could decide: {words} (see the table)."

    def _others_pass(self, module: str) -> bool:
        return all(r.verdict == "pass" for r in self.rows if not _within(r.module, module))

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.module for r in self.rows))

    def counts(self) -> dict[str, int]:
        """How many rows are in each state (and skipped)."""
        out = {name: 0 for name in (*STATES, SKIPPED)}
        for r in self.rows:
            out[r.verdict] += 1
        return out

    @property
    def table(self) -> pd.DataFrame:
        """One row per check: module, type, dtype, checked over, verdict, worst element,
        both values, difference, tolerance, bound, seconds, note."""
        frame = pd.DataFrame([asdict(r) for r in self.rows])
        return frame.rename(columns={"kind": "type", "over": "checked over", "bound": "error bound"})

    def figure(self):
        """One bar per check, coloured by its state: how far over its tolerance the difference is."""
        from gradlab.figures.layers import layers_figure

        return layers_figure(self)

    def _repr_html_(self) -> str:
        from gradlab.notebook_html import result_html

        return result_html(f"Layer-by-layer gradient check of {self.model}", [self.answer], self.table,
                           self.figure(), "One row per module and side checked, in forward order.")


def _within(path: str, module: str) -> bool:
    """Whether the module at ``path`` is ``module`` or inside it ("" is the whole model)."""
    return not module or path == module or path.startswith(module + ".")


def _number(element, name: str) -> float:
    return float(getattr(element, name)) if element is not None else math.nan


def _tensors(call):
    import torch

    for t in (*call.args, *call.kwargs.values(), *call.module.parameters()):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            yield t
