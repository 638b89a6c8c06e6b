"""What a lab hands its page: one :class:`View` of one frozen settings object.

A lab's ``view(settings) -> View`` computes everything its page shows: the answer sentence (an
:class:`Answer`: a level and a text), the charts (each a :class:`Chart`: its builder and
arguments, built where it is drawn, so a page builds and caches only what it shows and a notebook
calls :meth:`Chart.figure`), the tables, the numbers (:class:`Number`: label, formatted value, help)
and the paragraphs its numbers make. The page only lays these out; ``result`` carries the engine's
own result for a page that offers more of it (a download, a link to the same view elsewhere).

>>> import plotly.graph_objects as go
>>> v = View(Answer("success", "Autograd is right."),
...          charts={"main": Chart(go.Figure, (go.Scatter(x=[1, 2], y=[3, 4]),))})
>>> v.answer.is_warning, v.charts["main"].figure().data[0].type
(False, 'scatter')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

__all__ = ["Answer", "AnswerLevel", "ANSWER_LEVELS", "Chart", "Number", "View"]

AnswerLevel = Literal["success", "info", "warning", "error"]
#: Every level an answer (or a Note) can have, best news first.
ANSWER_LEVELS: tuple[str, ...] = ("success", "info", "warning", "error")


@dataclass(frozen=True)
class Answer:
    """A page's one sentence and how to show it.

    >>> Answer("warning", "Round-off dominates.").is_warning
    True
    """

    level: AnswerLevel
    text: str

    def __post_init__(self) -> None:
        if self.level not in ANSWER_LEVELS:
            raise ValueError(f"An answer's level is one of {ANSWER_LEVELS}, not {self.level!r}.")

    @property
    def is_warning(self) -> bool:
        return self.level in ("warning", "error")


@dataclass(frozen=True)
class Chart:
    """A figure as its builder and arguments (plain values: it crosses a worker's pipe).

    >>> Chart(dict, kwargs={"a": 1}).figure()
    {'a': 1}
    """

    build: Callable[..., Any]
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def figure(self):
        """The figure itself (a ``go.Figure``, or a spec where the caller asked for specs)."""
        return self.build(*self.args, **self.kwargs)


@dataclass(frozen=True)
class Number:
    """One number a page shows as a metric: its label, its text and what it means."""

    label: str
    value: str
    help: str = ""


@dataclass(frozen=True)
class View:
    """Everything a page shows of one settings object (see the module docstring)."""

    answer: Answer
    charts: Mapping[str, Chart] = field(default_factory=dict)
    tables: Mapping[str, Any] = field(default_factory=dict)
    numbers: tuple[Number, ...] = ()
    texts: Mapping[str, str] = field(default_factory=dict)
    result: Any = None
