"""The Network page's answer: which gradient is wrong, autograd's or scipy's? One plain sentence.

Built from the finite difference's fields (never prose), in words a second-year student knows,
as an :class:`~gradlab.view.Answer`.

>>> from gradlab.labs.network.engine import NetworkSettings, finite_difference
>>> answer = network_answer(finite_difference(NetworkSettings()))
>>> answer.level
'success'
>>> print(answer.text)  # doctest: +NORMALIZE_WHITESPACE
Autograd (-0.00952) is right: the finite difference can only move in steps of ulp(y)/(2·dx) =
0.0149, and -0.0149 (-1 step) is the closest it can get.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gradlab.view import Answer

if TYPE_CHECKING:  # only for the annotation: the engine imports nothing from here
    from gradlab.labs.network.engine import FiniteDifference

__all__ = ["network_answer", "AGREE_RELATIVE", "ROUNDOFF_SHARE"]

#: Estimate and autograd "agree" when they differ by less than this fraction of the gradient.
AGREE_RELATIVE = 1e-3
#: A quantum this large against the estimate's error means round-off, not truncation, set the error.
ROUNDOFF_SHARE = 0.25


def _steps(k: int) -> str:
    return f"{k} step" if abs(k) == 1 else f"{k} steps"


def network_answer(fd: FiniteDifference) -> Answer:
    """The Network page's answer, from a :class:`gradlab.labs.network.engine.FiniteDifference`."""
    if fd.step_vanished:
        return Answer("warning", f"The step is too small for {fd.dtype}: x ± {fd.step:g} rounds back to x, "
                                 "so the finite difference is exactly 0. Autograd is not affected.")
    error = abs(fd.estimate - fd.reference)
    if error <= AGREE_RELATIVE * abs(fd.reference):
        return Answer("success", f"Both agree ({fd.autograd:.6g} and {fd.estimate:.6g}): in {fd.dtype} the "
                                 f"finite difference moves in steps of ulp(y)/(2·dx) = {fd.quantum:.2g}, "
                                 "far finer than the gradient.")
    if fd.quantum >= ROUNDOFF_SHARE * error:
        closest = "the closest it can get" if fd.k == fd.nearest_multiple_of_reference else (
            f"one of the few values it can take (the closest is {_steps(fd.nearest_multiple_of_reference)})")
        return Answer("success", f"Autograd ({fd.autograd:.3g}) is right: the finite difference can only move "
                                 f"in steps of ulp(y)/(2·dx) = {fd.quantum:.3g}, and {fd.estimate:.3g} "
                                 f"({_steps(fd.k)}) is {closest}.")
    return Answer("success", f"Autograd ({fd.autograd:.3g}) is right: dx = {fd.step:g} is too large, and the "
                             f"finite difference ({fd.estimate:.3g}) is off by the Taylor terms it leaves out.")
