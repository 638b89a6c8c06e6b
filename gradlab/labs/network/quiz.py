"""The Network page's "predict, then look": the same network in float64, in steps of what size can
the finite difference move? Its choices and its reveal are worked out from the network's own output
y and step, so every preset asks about its own numbers.

>>> from gradlab.labs.network.engine import NetworkSettings, finite_difference
>>> table = prediction(finite_difference(NetworkSettings()))
>>> list(table.index), list(table["right"])
(['float32', 'float64', 'step'], [False, True, False])
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from gradlab.numerics.ulp import ulp
from gradlab.view import Answer

if TYPE_CHECKING:  # only for the annotation: the engine imports nothing from here
    from gradlab.labs.network.engine import FiniteDifference

__all__ = ["NETWORK_QUESTION", "network_guesses", "network_reveal", "prediction"]

NETWORK_QUESTION = ("**Predict, then look:** the same network in float64, still dx = {step:g}. "
                    "In steps of what size can the finite difference move now?")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _quantum(y: float, step: float, dtype: str) -> float:
    """ulp(y) / (2·dx) in ``dtype``: the size of the steps a central difference of y can move in."""
    return float(ulp(y, dtype)) / (2 * step)


def network_guesses(y: float, step: float) -> dict[str, str]:
    """Answer key -> how it reads, from the network's output ``y`` and the step: float32's quantum
    (what the page shows), float64's (the right one) and the step itself.

    >>> network_guesses(0.39, 1e-6)
    {'float32': 'about 0.015, as in float32', 'float64': 'about 3e-11', 'step': 'about 1e-06, the step itself'}
    """
    return {"float32": f"about {_quantum(y, step, 'float32'):.2g}, as in float32",
            "float64": f"about {_quantum(y, step, 'float64'):.1g}",
            "step": f"about {step:g}, the step itself"}


def network_reveal(guess: str, y: float, step: float, reference: float) -> Answer:
    """The verdict on ``guess`` (level ``success`` when right, else ``info``), with float64's numbers
    for this network: ulp(y) as a power of two, the quantum, and how many digits of autograd's
    ``reference`` a difference can then agree to.

    >>> print(network_reveal("float64", 0.39, 1e-6, -0.00952).text)  # doctest: +NORMALIZE_WHITESPACE
    Right. In float64, ulp(y) for y ≈ 0.39 is 2⁻⁵⁴ ≈ 5.6e-17; divided by 2·dx = 2e-06 that is 2.8e-11,
    so the difference agrees with autograd to about 8 digits. Press “Same in float64” to see it.
    """
    right = guess == "float64"
    verdict = "Right" if right else f"Not quite: {network_guesses(y, step)['float64']}"
    spacing, quantum = float(ulp(y, "float64")), _quantum(y, step, "float64")
    power = f"2{str(int(math.log2(spacing))).translate(_SUPERSCRIPT)} ≈ "  # a float64 spacing: a power of two
    digits = (f", so the difference agrees with autograd to about {math.floor(math.log10(abs(reference) / quantum))} "
              "digits") if math.isfinite(reference) and abs(reference) > quantum else ""
    return Answer("success" if right else "info",
                  f"{verdict}. In float64, ulp(y) for y ≈ {y:.2g} is {power}{spacing:.2g}; divided by "
                  f"2·dx = {2 * step:g} that is {quantum:.2g}{digits}. Press “Same in float64” to see it.")


def prediction(fd: FiniteDifference) -> pd.DataFrame:
    """The page's prediction for the difference ``fd``: one row per choice (its key the index), how
    it reads (``choice``), whether it is ``right`` and the ``reveal`` shown once it is picked."""
    reveals = {key: network_reveal(key, fd.y, fd.step, fd.reference) for key in network_guesses(fd.y, fd.step)}
    return pd.DataFrame({"choice": network_guesses(fd.y, fd.step),
                         "right": {key: r.level == "success" for key, r in reveals.items()},
                         "reveal": {key: r.text for key, r in reveals.items()}})
