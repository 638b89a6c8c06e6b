"""What ``check_layers`` returns: one row per module and checked side, a verdict, an answer.

A :class:`LayerRow` is one gradient check of one module call (over its parameters, or
over its inputs), or a check that could not run, with the reason. :class:`LayersResult`
holds the rows in forward order; its ``verdict`` is a gradient check's
(:func:`gradlab.check.verdicts.states.overall` over the rows that ran), ``answer`` names the module
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
layers.3 (Swish, a custom autograd.Function): wrong gradient with respect to its input at x[2, 7]; every other module passes. At x[2, 7] its backward gives 1 where the finite difference gives 2 ± 1e-09: 100,000 times the tolerance apart.

A module with children is checked whole when its own code does work between them
(:mod:`gradlab.layers.record`). A wrong backward inside a child would fail it too, so the
module named is the innermost failing one; ``check_layers`` does not check the modules
holding it (their rows say so), and a holder checked and failing fails "only through it":

>>> attn = LayerRow("h.0.attn", "Attention", "float64", "inputs", "fail", 0, 1, False, "x[0, 1]",
...                 1.0, 2.0, 1.0, 1e-5, 1e-9, 0.01, "", True, "AttnNoScale")
>>> block = LayerRow("h.0", "Block", "float64", "inputs", SKIPPED, 0, 1, False, "", math.nan, math.nan,
...                  math.nan, math.nan, math.nan, 0.0, HELD_BACK + "h.0.attn inside it fails", True)
>>> qkv = LayerRow("h.0.attn.qkv", "Linear", "float64", "inputs", "pass", 0, 1, False, "x[0, 0]",
...                0.5, 0.5, 0.0, 1e-5, 1e-9, 0.01, "")
>>> r = LayersResult((block, attn, qkv), "first", "GPT")
>>> r.failing_modules, r.failing_through
(('h.0.attn',), ('h.0',))
>>> print(r.answer)
h.0.attn (Attention, applying AttnNoScale, a custom autograd.Function): wrong gradient with respect to its input at x[0, 1], in its own code between its children (they pass); h.0, which holds it, is not checked whole; every other module passes. At x[0, 1] its backward gives 1 where the finite difference gives 2 ± 1e-09: 100,000 times the tolerance apart.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import pandas as pd

from gradlab.check import STATES, overall
from gradlab.notebook_html import NotebookBlock, ShownInNotebook

__all__ = ["LayerRow", "LayersResult", "SKIPPED", "HELD_BACK", "within", "owner"]

#: A row whose check could not run (its ``note`` says why); not a state of a checked value.
SKIPPED = "skipped"

#: How the note of a module not checked whole, since a module inside it fails, begins.
HELD_BACK = "not checked whole: "


@dataclass(frozen=True)
class LayerRow:
    """One gradient check of one module call."""

    module: str  # its path in model.named_modules()
    kind: str  # its class
    dtype: str
    over: str  # "parameters", "inputs" or "-" (nothing to check)
    verdict: str  # a state (gradlab.check.verdicts.states) or SKIPPED
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
    own_code: bool = False  # a module with children, checked whole for its own code between them
    functions: str = ""  # the custom autograd.Functions its own code applies, comma-separated

    @classmethod
    def of(cls, call, times: int, over: str, result, seconds: float) -> "LayerRow":
        """The row of a finished check ``result`` (a CheckResult) of ``call``."""
        if result.own_verdict == "pass" and result.dtype is not None:
            # a pass's words are built only when read (CheckResult.summary): its worst value
            # straight from its table, as the summary takes it
            e = result.worst_value
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
                   seconds, "" if verdict == "pass" else headline, *_own(call))

    @classmethod
    def skipped(cls, call, times: int, over: str, reason: str, seconds: float) -> "LayerRow":
        dtype = next((str(t.dtype).removeprefix("torch.") for t in _tensors(call)), "")
        nan = math.nan
        return cls(call.path, call.kind, dtype, over, SKIPPED, call.index, times, call.custom_function, "",
                   nan, nan, nan, nan, nan, seconds, reason, *_own(call))

    @classmethod
    def held_back(cls, call, times: int, over: str, inside: str) -> "LayerRow":
        """The row of a check not run: the module holds ``inside``, which fails, so its check
        would run that wrong backward and fail through it."""
        return cls.skipped(call, times, over, f"{HELD_BACK}{inside or 'the model'} inside it fails, and a "
                                              "check of it would run that backward again", 0.0)

    @property
    def held(self) -> bool:
        """Whether this check was not run since a module inside fails (:meth:`held_back`)."""
        return self.verdict == SKIPPED and self.note.startswith(HELD_BACK)

    @property
    def where(self) -> str:
        """``layers.3 (Swish, a custom autograd.Function)``; a repeated module names its call; a
        module checked for its own code names the custom Functions that code applies."""
        if self.custom_function:
            what = f"{self.kind}, a custom autograd.Function"
        elif self.own_code and self.functions:
            names = self.functions.split(", ")
            what = (f"{self.kind}, applying {_listed(names)}, "
                    f"{'a custom autograd.Function' if len(names) == 1 else 'custom autograd.Functions'}")
        else:
            what = self.kind
        call = f", call {self.call + 1} of {self.calls}" if self.calls > 1 else ""
        return f"{self.module or 'the model'} ({what}{call})"


@dataclass(frozen=True)
class LayersResult(ShownInNotebook):
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
        """The modules whose gradient is wrong, in forward order, each once: the paths of the
        modules with a failing check, less those failing only through a failing module inside
        them (:attr:`failing_through`). A failing parametrization of a module's weight is part
        of that module."""
        return self._failing()[0]

    @property
    def failing_through(self) -> tuple[str, ...]:
        """The modules holding a failing module, whose checks fail through it or were not run
        since they would (a wrong backward inside a child fails every module checked around
        it: a block, the model)."""
        return self._failing()[1]

    def _failing(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        failing = list(dict.fromkeys(r.module for r in self.rows if r.verdict == "fail"))
        # a parametrization of a failing module's weight is part of it
        failing = [m for m in failing if owner(m) == m or owner(m) not in failing]
        wrong = tuple(m for m in failing if not any(o != m and within(o, m) for o in failing))
        held = [r.module for r in self.rows if r.held]
        return wrong, tuple(m for m in dict.fromkeys(r.module for r in self.rows)
                            if m not in wrong and (m in failing or m in held))

    @property
    def answer(self) -> str:
        """Which module's gradient is wrong, in one sentence (or that none is)."""
        wrong, through = self._failing()
        if wrong:
            first = next(r for r in self.rows if r.verdict == "fail" and r.module == wrong[0])
            side = "its parameters" if first.over == "parameters" else "its input"
            at = f" at {first.element}" if first.element else ""
            own = ""
            if first.own_code:
                inside = [r for r in self.rows if r.module != first.module and within(r.module, first.module)]
                own = (", in its own code between its children (they pass)"
                       if inside and all(r.verdict == "pass" for r in inside) else
                       ", in its own code or in a module inside it whose check could not decide (see the table)"
                       if inside else ", in its own code")
            clauses = []
            if len(wrong) > 1:
                more = len(wrong) - 1
                clauses.append(f"{more} more module{'s fail' if more > 1 else ' fails'}")
            it = "it" if len(wrong) == 1 else "them"
            held = [m for m in through if all(r.held for r in self.rows if r.module == m)]
            if held:
                one = len(held) == 1
                clauses.append(f"{_listed([m or 'the model' for m in held])}, which hold{'s' if one else ''} {it}, "
                               f"{'is' if one else 'are'} not checked whole")
            if failing := [m for m in through if m not in held]:
                clauses.append(f"{_listed([m or 'the model' for m in failing])} fail{'s' if len(failing) == 1 else ''}"
                               f" only through {it}")
            if len(wrong) == 1:
                rest = [r for r in self.rows if not within(r.module, first.module) and r.module not in through]
                clauses.append("every other module passes" if all(r.verdict == "pass" for r in rest) else
                               "the other modules do not all pass (see the table)")
            return f"{first.where}: wrong gradient with respect to {side}{at}{own}; {'; '.join(clauses)}.{_why(first)}"
        counts = self.counts()
        checked = sum(v for k, v in counts.items() if k != SKIPPED)
        if self.verdict == "pass":
            skipped = f"; {counts[SKIPPED]} could not be checked" if counts.get(SKIPPED) else ""
            return (f"Every module's gradient is right: {checked} checks of {len(self.modules)} modules pass"
                    f"{skipped}.")
        words = ", ".join(f"{n} {STATES[k].label if k in STATES else k}" for k, n in counts.items() if n and k != "pass")
        return f"No module's gradient is shown wrong, but not every check could decide: {words} (see the table)."

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
        both values, difference, tolerance, bound, seconds, note; own code (a module with
        children checked whole for the work its own forward does between them) and the
        custom Functions that code applies."""
        frame = pd.DataFrame([asdict(r) for r in self.rows])
        return frame.rename(columns={"kind": "type", "over": "checked over", "bound": "error bound",
                                     "own_code": "own code"})

    def figure(self):
        """One bar per check, coloured by its state: how far over its tolerance the difference is."""
        from gradlab.notebook_html import plotted

        def build():
            from gradlab.figures.layers import layers_figure  # plotly: only when a figure is drawn

            return layers_figure(self)
        return plotted(build)

    def _notebook_block(self) -> NotebookBlock:
        return NotebookBlock(f"Layer-by-layer gradient check of {self.model}", [self.answer], self.table,
                             self.figure, "One row per module and side checked, in forward order.")


def _why(row: LayerRow) -> str:
    """What makes a failing row wrong, in its numbers: backward's value, the finite difference's
    (with its error bound) and how many tolerances apart; "" when the row has no such numbers."""
    numbers = (row.autograd, row.numeric, row.difference, row.tolerance)
    if not all(math.isfinite(v) for v in numbers) or row.tolerance <= 0:
        return ""
    bound = f" ± {row.bound:.1g}" if math.isfinite(row.bound) and row.bound > 0 else ""
    there = f"At {row.element} its" if row.element else "Its"
    return (f" {there} backward gives {row.autograd:.4g} where the finite difference gives {row.numeric:.4g}{bound}: "
            f"{row.difference / row.tolerance:,.0f} times the tolerance apart.")


def owner(path: str) -> str:
    """The module a path belongs to: itself, or the module whose weight's parametrization
    (``torch.nn.utils.parametrize``) it is part of.

    >>> owner("3.parametrizations.weight.0"), owner("3"), owner("parametrizations.weight")
    ('3', '3', '')
    """
    parts = path.split(".")
    return ".".join(parts[:parts.index("parametrizations")]) if "parametrizations" in parts else path


def _listed(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``, ``a, b, c and 2 more``."""
    if len(names) > 4:
        names = [*names[:3], f"{len(names) - 3} more"]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _own(call) -> tuple[bool, str]:
    """A call's own-code fields as a row holds them (a test's stand-in call may lack them)."""
    return bool(getattr(call, "own_code", False)), ", ".join(getattr(call, "functions", ()))


def within(path: str, module: str) -> bool:
    """Whether the module at ``path`` is ``module`` or inside it ("" is the whole model)."""
    return not module or path == module or path.startswith(module + ".")


def _number(element, name: str) -> float:
    return float(getattr(element, name)) if element is not None else math.nan


def _tensors(call):
    import torch

    for t in (*call.args, *call.kwargs.values(), *call.module.parameters()):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            yield t
