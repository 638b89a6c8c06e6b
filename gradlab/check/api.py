"""The public gradient check: ``gradcheck(fn, *inputs)``, a thin wrapper over the engine.

As ``torch.autograd.gradcheck`` wraps its helpers, :func:`gradcheck` reads its options,
runs the first-order check (:mod:`gradlab.check.running.engine`, which also holds the modes and
how an element is judged), adds forward mode (:mod:`~gradlab.check.further.forward_mode`) and
second order (:mod:`~gradlab.check.further.second_order`) when asked, and raises on a fail when
asked. The other public names of the check are importable from here too:
``sample_indices`` (:mod:`~gradlab.check.running.engine`), ``element_estimates`` and
``reduction_estimates`` (:mod:`~gradlab.check.further.estimates`), ``full_check_work`` and the
option lists (:mod:`~gradlab.check.inputs.validation`), the result types
(:mod:`~gradlab.check.verdicts.results`), ``random_weights`` and ``WEIGHT_SIZES`` (the default
``grad_outputs``: :mod:`~gradlab.check.running.problem`).

>>> r = gradcheck(lambda x: (x ** 3).sum(), torch.linspace(-1, 1, 7, dtype=torch.float64),
...               mode="full", taylor=False)
>>> r.verdict, len(r.table)
('pass', 7)
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable, Sequence

import torch

from gradlab.check.further.estimates import element_estimates, reduction_estimates
from gradlab.check.further.forward_mode import check_forward_mode
from gradlab.check.further.second_order import check_second_order
from gradlab.check.inputs.output_weights import WEIGHT_SIZES, random_weights
from gradlab.check.inputs.validation import GRAD_OUTPUTS, MODES, REDUCTIONS, full_check_work
from gradlab.check.running.check_run import CheckOptions
from gradlab.check.running.engine import caller_kept, checked_function, first_order, sample_indices
from gradlab.check.running.float64_witness import float64_twin
from gradlab.check.running.problem import validated_inputs
from gradlab.check.running.terminal_progress import terminal_progress
from gradlab.check.verdicts.results import CheckResult, CheckSummary, Element, GradcheckError
from gradlab.errors import GradLabError

__all__ = [
    "MODES", "REDUCTIONS", "GRAD_OUTPUTS", "GradcheckError", "Element", "CheckSummary",
    "CheckResult", "gradcheck", "full_check_work", "element_estimates", "reduction_estimates",
    "sample_indices", "random_weights", "WEIGHT_SIZES",
]

Progress = Callable[[int, int], None]


def gradcheck(
    fn: Callable[..., Any],
    *inputs: Any,
    wrt: int | str | Sequence[int | str] | None = None,
    mode: str = "blocks",
    samples: int = 5,
    seed: int = 0,
    scheme: str = "central",
    eps: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    reduction: str = "sum",
    grad_outputs: str | torch.Tensor = "random",
    numeric_float64: bool = False,
    numeric_fn: Callable[..., Any] | None = None,
    taylor: bool = False,
    progress: Progress | None = None,
    raise_on_fail: bool = False,
    workers: int | None = None,
    check_forward: bool = False,
    order: int = 1,
) -> CheckResult:
    """Check autograd's gradient of ``fn(*inputs)`` against finite differences.

    ``inputs`` are fn's arguments as you would pass them: tensors of any
    floating-point (float16 ... float64) or complex dtype, tensors without
    gradients and Python values (passed through untouched). The inputs that
    require grad are checked, or those ``wrt`` names (positions, or fn's parameter
    names); when none requires grad and ``wrt`` is None, every floating-point or
    complex tensor is. A complex input is checked through its real and imaginary
    parts (torch's Wirtinger convention: see :mod:`gradlab.check.inputs.arguments`).
    ``gradcheck(fn, [a, b])`` means ``fn(a, b)``, as in torch.autograd.gradcheck.
    For an ``nn.Module``, ``wrt="parameters"`` checks the gradients of its
    parameters, named as ``named_parameters()`` names them.

    fn returns a tensor, or a tuple, list or dict of tensors (their floating and
    complex parts are checked: :mod:`gradlab.check.inputs.outputs`). The check differentiates
    the loss ``L = Σ_j v_j·y_j`` over fn's output values y, with weights v given by
    ``grad_outputs``: ``"random"`` (the default) weights each output value by its own
    seeded random value, a random sign times a size in [1/2, 2] at least 1/4 away from 1
    (:data:`gradlab.check.inputs.output_weights.WEIGHT_SIZES`; the same ``seed`` gives the same weights:
    :func:`gradlab.check.inputs.output_weights.random_weights`), so the backward under test receives a
    grad_output that is not all ones and one that ignores, drops or mis-scales it fails,
    one-value outputs included; ``"ones"`` is the plain sum (``y.sum()``, what this check did
    before); a tensor (or a tuple, list or dict of them, shaped like fn's output) gives v
    itself. ``reduction`` says how L is taken: ``"sum"`` (the default) as one value per
    evaluation of fn, ``"mean"`` divided by the number of output values, ``"none"`` each
    output value differenced on its own and contracted with v afterwards (the least
    round-off, at 2-3x the cost of "sum" in full mode on large outputs). When autograd's
    gradient is zero at every element by construction (ones on a LayerNorm or a softmax,
    whose outputs add up to a constant; a function flat at the input) nothing was tested:
    the verdict is ``"inconclusive"``, not ``"pass"``, and the summary says why.
    ``samples`` is the number of elements (sampled) or directions
    (directional); blocks takes as many directions as covering every element needs.
    ``eps`` defaults to :func:`gradlab.numerics.schemes.default_step` and the tolerances
    to the least precise checked dtype's row of :mod:`gradlab.numerics.dtypes`.
    ``numeric_fn`` is a float64 twin of ``fn`` (same arguments) for ``numeric_float64=True`` when ``fn`` holds tensors of its own dtype.
    ``workers`` threads (default and at most ``LIMITS.check_workers``) share
    the finite differences; the results do not depend on their number. fn is
    then called from several threads at once: it must not mutate shared state.

    ``taylor=True`` adds the Taylor-remainder test (``result.taylor``): it needs no
    step or tolerance, but evaluates fn along a random direction at steps up to 1,
    points you did not give, so it is off unless asked for.
    ``check_forward=True`` also checks forward-mode AD (JVPs) against finite
    differences, ``order=2`` the gradient's own gradient (Hessian-vector products,
    as torch's gradgradcheck); they are ``result.forward`` and
    ``result.second_order``, and ``result.verdict`` is the worst of all.

    >>> x = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    >>> gradcheck(lambda t, n: (t ** n).sum(), x, 2, mode="full", taylor=False).passed
    True
    >>> gradcheck(torch.sin, x, mode="full", taylor=False, check_forward=True, order=2).verdict
    'pass'
    >>> gradcheck(lambda t: torch.softmax(t, 0), x, grad_outputs="ones").verdict  # Σ softmax = 1
    'inconclusive'
    """
    if order not in (1, 2):
        raise GradLabError(f"order is 1 (the gradient) or 2 (also its gradient); got {order!r}.")
    options = dict(mode=mode, samples=samples, seed=seed, scheme=scheme, eps=eps, rtol=rtol, atol=atol,
                   reduction=reduction, grad_outputs=grad_outputs, numeric_float64=numeric_float64,
                   workers=workers)
    line = terminal_progress() if progress is None else None  # a long check's line on a terminal
    with caller_kept(fn, inputs, numeric_fn), _closed(line):  # fn's modules and tensors as they were, even on a raise
        call, args = checked_function(fn, inputs, wrt)
        result = first_order(call, args, CheckOptions(**options, numeric_fn=numeric_fn, taylor=taylor,
                                                      progress=progress or line),
                             twin=lambda: float64_twin(fn, args, wrt, numeric_fn))
        if check_forward or order == 2:
            result = _with_higher_checks(result, call, validated_inputs(args.reals()), options, check_forward, order,
                                         args.names)
    if raise_on_fail and result.verdict == "fail":
        raise GradcheckError(_fail_text(result))
    return result


@contextlib.contextmanager
def _closed(line):
    """The terminal's progress line (or None) ended when the check ends, however it ends."""
    try:
        yield
    finally:
        if line is not None:
            line.close()


def _with_higher_checks(result: CheckResult, call, tensors, options, check_forward: bool, order: int, names):
    """The first-order result with forward-mode and/or second-order results attached.

    ``call`` is fn of the checked tensors (the rest fixed), the same the first-order check ran.
    """
    extra = {k: v for k, v in options.items() if k not in ("reduction", "grad_outputs")}
    forward = check_forward_mode(call, tensors, names=names, taylor=False, **options) if check_forward else None
    second = check_second_order(call, tensors, names=names, taylor=False, **extra) if order == 2 else None
    return dataclasses.replace(result, forward=forward, second_order=second)


def _fail_text(result: CheckResult) -> str:
    """The first failing part's message, named when it is not the gradient itself."""
    for what, part in result.parts:
        if part.summary.verdict == "fail":
            return part.summary.text if what == "gradient" else f"[{what}] {part.summary.text}"
    return result.summary.text
