"""``assert_gradients``: a gradient check as a pytest assertion.

A pass returns silently (with the result, for a test that wants to look
closer). Anything else raises ``AssertionError`` whose text is the check
summary's ``text`` (the element, both values, the difference, the hint):

- ``fail``: always raises;
- ``inconclusive`` (the finite difference cannot tell at the tolerance asked)
  and ``not_differentiable`` (a kink at the point checked): raise too, because a
  test should not pass on "cannot tell"; pass ``allow_inconclusive=True`` or
  ``allow_not_differentiable=True`` to accept them.

``check_forward=True`` also checks forward-mode AD (JVPs) and ``order=2`` the
second derivatives (double backward); each check must pass on its own.

>>> import torch
>>> assert_gradients(torch.sin, torch.linspace(-1, 1, 4, dtype=torch.float64, requires_grad=True))
>>> assert_gradients(lambda t: t.detach() ** 2 + t, torch.ones(2, dtype=torch.float64, requires_grad=True))
Traceback (most recent call last):
...
AssertionError: Gradient check failed at x[0]: ...
"""

from __future__ import annotations

from typing import Callable

import torch

__all__ = ["assert_gradients"]

#: Verdicts a test accepts, and the option that lets each one through.
_ALLOWED_BY = {"inconclusive": "allow_inconclusive", "not_differentiable": "allow_not_differentiable"}


def assert_gradients(fn: Callable, *inputs, allow_inconclusive: bool = False,
                     allow_not_differentiable: bool = False, check_forward: bool = False,
                     order: int = 1, **options) -> None:
    """Raise AssertionError unless ``gradlab.gradcheck(fn, *inputs, **options)`` passes.

    ``options`` are gradcheck's (``mode``, ``eps``, ``rtol``, ``atol``, ...).

    >>> import torch
    >>> x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    >>> assert_gradients(torch.matmul, x, torch.ones(4, 2, dtype=torch.float64), mode="full")
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2; got {order!r}.")
    allowed = {"pass"}
    allowed |= {"inconclusive"} if allow_inconclusive else set()
    allowed |= {"not_differentiable"} if allow_not_differentiable else set()
    for what, result in _checks(fn, inputs, options, check_forward, order):
        if result.verdict not in allowed:
            raise AssertionError(_message(what, result))


def _message(what: str, result) -> str:
    text = result.summary.text
    option = _ALLOWED_BY.get(result.verdict)
    if option:
        text += f" (verdict {result.verdict}; pass {option}=True to accept it)"
    return text if what == "gradient" else f"[{what}] {text}"


def _checks(fn, inputs, options, check_forward: bool, order: int):
    """(what, CheckResult) of each check asked for, run lazily (the first failure stops)."""
    # ---- ADAPTER to today's gradcheck(fn, x) -------------------------------------------
    # Today gradlab.gradcheck takes x as one tensor or a sequence of tensors, all checked,
    # and fn(*x). Here: the tensors that require grad are checked (all floating-point
    # tensors when none does), every other argument is passed through by a closure. After
    # the merge of gradcheck(fn, *inputs, wrt=None, check_forward=..., order=...), this
    # whole function becomes:  yield "gradient", gradcheck(fn, *inputs, check_forward=
    # check_forward, order=order, **options)  (or the lead's combined result).
    from gradlab.check.api import gradcheck
    from gradlab.check.forward_mode import check_forward_mode
    from gradlab.check.second_order import check_second_order

    closed, tensors = _close_over_passthrough(fn, inputs)
    yield "gradient", gradcheck(closed, tensors, **options)
    if check_forward:
        yield "forward mode", check_forward_mode(closed, tensors, **options)
    if order == 2:
        yield "second order", check_second_order(closed, tensors, **options)
    # ---- end of ADAPTER -----------------------------------------------------------------


def _close_over_passthrough(fn, inputs):
    """(fn of the checked tensors only, those tensors): the rest is fixed in a closure."""
    floating = [i for i, a in enumerate(inputs) if isinstance(a, torch.Tensor) and a.is_floating_point()]
    checked = [i for i in floating if inputs[i].requires_grad] or floating
    if not checked:
        raise ValueError("assert_gradients needs at least one floating-point tensor input.")
    if len(checked) == len(inputs):
        return fn, [a.detach() for a in inputs]

    def closed(*tensors):
        args = list(inputs)
        for i, t in zip(checked, tensors):
            args[i] = t
        return fn(*args)

    return closed, [inputs[i].detach() for i in checked]
