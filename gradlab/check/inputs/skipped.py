"""Input elements a finite difference cannot move: ±inf and NaN, skipped, counted and named.

``x + h`` is ``x`` when x is ±inf (and NaN when it is NaN), so a perturbation of such an
element measures nothing, and the step chosen from the inputs' size is itself infinite: a
softmax over attention scores masked with ``-inf`` (``masked_fill(mask, -inf)``, the way
causal attention is written) would be inconclusive at every element, the finite ones too.
:class:`Skipped` finds those elements; every mode then perturbs the others only (the sampled
mode draws among them, a block or random direction is 0 at the skipped ones), the step
comes from the finite values, and autograd's gradient is not read there (it is 0 in the
contractions along directions: autograd may well give NaN at such an element). The result
counts them (``summary.skipped``, ``summary.count("skipped")``), and its words name them and
say what the input holds there (:func:`with_skipped_words`).

>>> x = torch.tensor([1.0, -math.inf, 2.0, math.nan], dtype=torch.float64)
>>> s = Skipped.of(FlatInputs.of([x]))
>>> s.index.tolist(), s.kept.tolist(), s.values.tolist()
([1, 3], [0, 2], [1.0, 2.0])
>>> print(s.sentence())
x holds -inf and NaN at 2 of its 4 elements (x[1] and x[3]): a finite difference cannot move such a value (x + h is x, or NaN), so those elements are skipped (not perturbed, their gradient not checked) and the other 2 are checked.
>>> Skipped.of(FlatInputs.of([torch.ones(3)])) is None
True
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable

import torch

from gradlab.check.inputs.flat_inputs import FlatInputs
from gradlab.check.running.blocks import BlockDirections
from gradlab.check.verdicts.results import CheckSummary
from gradlab.errors import GradLabError

__all__ = ["Skipped", "with_skipped_words"]

#: Skipped elements named in the words; the rest are counted.
NAMED = 4


@dataclass(frozen=True, eq=False)
class Skipped:
    """The flat input elements holding ±inf or NaN (``index``) and the others (``kept``)."""

    flat: FlatInputs
    index: torch.Tensor  # flat indices holding ±inf or NaN, ascending
    kept: torch.Tensor  # flat indices of the finite elements, ascending

    @classmethod
    def of(cls, flat: FlatInputs) -> "Skipped | None":
        """The skipped elements of ``flat``, or None when every element is finite (the usual
        case: one op). Refused when no element is finite: there is nothing to perturb."""
        if flat.finite:
            return None
        finite = torch.isfinite(flat.values)
        kept = finite.nonzero().reshape(-1)
        if not kept.numel():
            raise GradLabError("Every element of the checked inputs is NaN or ±inf: a finite difference cannot "
                               "move such a value (x + h is x, or NaN), so there is nothing to check. Check the "
                               "gradient at finite inputs.")
        return cls(flat, (~finite).nonzero().reshape(-1), kept)

    @property
    def count(self) -> int:
        return int(self.index.numel())

    @property
    def values(self) -> torch.Tensor:
        """The finite elements' values: the step and a step given are judged on them."""
        return self.flat.finite_values

    def over_kept(self, make: Callable) -> Callable:
        """:func:`gradlab.check.running.engine.perturbations` (``make``) drawn over the finite elements as
        if they were all the inputs, then put in their places: flat indices among the kept
        elements, directions 0 at the skipped ones. Same signature (``numel`` is the kept count).

        >>> from gradlab.check.running.engine import perturbations
        >>> s = Skipped.of(FlatInputs.of([torch.tensor([1.0, math.inf, 2.0, 3.0])]))
        >>> s.over_kept(perturbations)("full", 4, 5, 0)[0].tolist()
        [0, 2, 3]
        >>> s.over_kept(perturbations)("directional", 4, 2, 0)[1][:, 1].tolist()
        [0.0, 0.0]
        """
        kept = self.kept

        def draw(mode: str, numel: int, samples: int, seed: int, tolerance=None, *rest):
            index, directions = make(mode, kept.numel(), samples, seed,
                                     None if tolerance is None else tolerance[kept.numpy()], *rest)
            if index is not None:
                return kept[index], None
            if isinstance(directions, BlockDirections):
                return None, directions.spread(kept, self.flat.numel)
            spread = torch.zeros(directions.shape[0], self.flat.numel, dtype=directions.dtype)
            spread[:, kept] = directions
            return None, spread

        return draw

    def zeroed(self, gradient: torch.Tensor | None) -> torch.Tensor | None:
        """``gradient`` (flat) with 0 at the skipped elements: along a direction, which is 0 there,
        autograd's NaN or inf at such an element would make the whole contraction NaN."""
        if gradient is None:
            return None
        out = gradient.clone()
        out[self.index] = 0
        return out

    def holds(self) -> str:
        """What the skipped elements hold: ``-inf``, ``inf and NaN``..."""
        v = self.flat.values[self.index]
        kinds = [k for k, present in (("-inf", bool((v == -math.inf).any())), ("inf", bool((v == math.inf).any())),
                                      ("NaN", bool(v.isnan().any()))) if present]
        return " and ".join(kinds) if len(kinds) < 3 else "-inf, inf and NaN"

    def sentence(self) -> str:
        """Which elements are skipped, what they hold, and why."""
        inputs = sorted({self.flat.locate(int(i))[0] for i in self.index[:NAMED]} |
                        {self.flat.locate(int(self.index[-1]))[0]})
        total = self.flat.numel
        if len(self.flat.shapes) == 1:
            who = f"{self._name(0)} holds"
            of = f"of its {total} elements"
        else:
            who = f"{self._name(inputs[0])} holds" if len(inputs) == 1 else "The inputs hold"
            of = f"of the {total} checked elements"
        named = [self.flat.label(*self.flat.locate(int(i))) for i in self.index[:NAMED]]
        more = self.count - len(named)
        listed = named + ([f"{more} more"] if more > 0 else [])
        listed_text = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]
        return (f"{who} {self.holds()} at {self.count} {of} ({listed_text}): a finite difference cannot move "
                "such a value (x + h is x, or NaN), so those elements are skipped (not perturbed, their "
                f"gradient not checked) and the other {self.kept.numel()} are checked.")

    def _name(self, k: int) -> str:
        return self.flat.names[k] if k < len(self.flat.names) else f"x{k}"


def with_skipped_words(summary: CheckSummary, skipped: Skipped | None) -> CheckSummary:
    """``summary`` with the skipped elements counted (``skipped``) and its message and hint saying
    what the input holds there; ``summary`` itself when nothing was skipped."""
    if skipped is None:
        return summary
    counted = (f"{skipped.count} of the {skipped.flat.numel} input elements were skipped: they hold "
               f"{skipped.holds()}.")
    return dataclasses.replace(summary, skipped=skipped.count, message=f"{summary.message} {counted}",
                               hint=f"{summary.hint} {skipped.sentence()}".strip())
