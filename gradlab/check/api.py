"""Tensor gradient checks: autograd against finite differences, with a diagnosis.

``gradcheck(fn, *inputs)`` compares autograd's gradient of a PyTorch function
with finite differences (the inputs checked and how: :mod:`~gradlab.check.arguments`;
its outputs: :mod:`~gradlab.check.outputs`), in four modes:

- ``blocks`` (the default): random-sign directions over seeded random blocks of 8
  elements that cover every element (:mod:`gradlab.check.blocks`), so a wrong element
  anywhere moves some direction; bisection then names it;
- ``sampled``: k random elements (seeded);
- ``full``: every element, batched (many perturbed copies per call, see
  :mod:`gradlab.check.batching`), with a ``progress(done, total)`` callback;
- ``directional``: random directions v, comparing the finite-difference
  directional derivative with autograd's ``∇L·v`` (gradcheck's fast mode).

A tensor output is reduced by ``sum``, ``mean`` or ``none``; with ``none`` the
check is of the vector–Jacobian product ``vᵀJ`` with explicit
``grad_outputs`` v, and every difference is taken per output element (then
contracted with v in float64), so no summed loss hides the perturbation.

Finite differences use the input's dtype (or float64 with
``numeric_float64=True``); the stencil is combined in float64, as in
:func:`gradlab.numerics.schemes.stencil_estimates`. An element passes when
``|autograd - numeric| <= atol + rtol·|numeric|``.

This module holds the public entry points only; the parts live next to it:
:mod:`~gradlab.check.validation` (options and their checks),
:mod:`~gradlab.check.problem` (set-up, autograd side), :mod:`~gradlab.check.stencil`
(finite differences), :mod:`~gradlab.check.evaluation` (chunks and threads),
:mod:`~gradlab.check.report` (table, summary, words), :mod:`~gradlab.check.bisection`,
:mod:`~gradlab.check.step_halving`, :mod:`~gradlab.check.taylor_remainders` and
:mod:`~gradlab.check.results` (what is returned).

>>> r = gradcheck(lambda x: (x ** 3).sum(), torch.linspace(-1, 1, 7, dtype=torch.float64),
...               mode="full", taylor=False)
>>> r.verdict, len(r.table)
('pass', 7)
"""

from __future__ import annotations

import dataclasses

from typing import Any, Callable, Sequence

import numpy as np
import torch

from gradlab.check.arguments import Arguments, module_arguments, parse_arguments
from gradlab.check.behaviour import check_repeatable, check_user_step
from gradlab.check.batching import FlatInputs
from gradlab.check.blocks import BLOCK, block_directions, block_size
from gradlab.check.evaluation import SharedOnehot, chunk_size, run_chunks
from gradlab.check.measure import measure_values as _measure
from gradlab.check.problem import (NumericProblem, as_inputs, autograd_gradient, check_inputs, least_precise,
                                   numeric_problem, resolve_step)
from gradlab.check.output_blame import culprit_output
from gradlab.check.outputs import differentiable_only, leave_out
from gradlab.check.pace import forecast_check, perturbation_count, stencil_points
from gradlab.check.report import CheckContext, Tolerances, error_map, summarize
from gradlab.check.results import CheckResult, CheckSummary, Element, GradcheckError
from gradlab.check.taylor_remainders import taylor_test
from gradlab.check.verdicts import backward_spread
from gradlab.check.verdict_words import evidence_notes
from gradlab.check.witness import autograd_in_float64, float64_problem as _float64_problem, float64_twin
from gradlab.check.validation import (GRAD_OUTPUTS, MODES, REDUCTIONS, check_full_limit, check_samples,
                                      check_seed, choose, full_check_work, resolve_workers)
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS, check_limit
from gradlab.numerics.dtypes import facts, resolve_tolerances
from gradlab.numerics.schemes import get_scheme, not_applicable_reason

__all__ = [
    "MODES", "REDUCTIONS", "GRAD_OUTPUTS", "GradcheckError", "Element", "CheckSummary",
    "CheckResult", "gradcheck", "full_check_work", "element_estimates", "reduction_estimates",
    "sample_indices",
]

Progress = Callable[[int, int], None]
_check_full_limit = check_full_limit  # the name tests/test_limits.py checks the bound through


def sample_indices(numel: int, samples: int, seed: int) -> torch.Tensor:
    """The flat indices the sampled mode checks: ``samples`` distinct ones, seeded, sorted.

    >>> sample_indices(10, 3, 0).tolist() == sample_indices(10, 3, 0).tolist()
    True
    """
    check_limit("sampled elements", samples, LIMITS.sampled_elements)
    gen = torch.Generator().manual_seed(seed)
    return torch.randperm(numel, generator=gen)[:min(samples, numel)].sort().values


def _perturbations(mode, numel, samples, seed, tolerance=None, block=BLOCK):
    """(flat indices, None) for sampled and full mode; (None, unit directions) for directional
    and blocks (``tolerance``: each element's, from autograd's gradient, weighting its block)."""
    if mode == "blocks":
        return None, block_directions(numel, seed, torch.ones(numel) if tolerance is None else tolerance, block)
    if mode == "full":
        return torch.arange(numel), None
    if mode == "sampled":
        return sample_indices(numel, samples, seed), None
    check_limit("directional checks", samples, LIMITS.directional_checks)
    gen = torch.Generator().manual_seed(seed)
    v = torch.randn(samples, numel, generator=gen, dtype=torch.float64)
    return None, v / v.norm(dim=1, keepdim=True)


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
    grad_outputs: str | torch.Tensor = "ones",
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
    parts (torch's Wirtinger convention: see :mod:`gradlab.check.arguments`).
    ``gradcheck(fn, [a, b])`` means ``fn(a, b)``, as in torch.autograd.gradcheck.
    For an ``nn.Module``, ``wrt="parameters"`` checks the gradients of its
    parameters, named as ``named_parameters()`` names them.

    fn returns a tensor, or a tuple, list or dict of tensors (their floating and
    complex parts are checked: :mod:`gradlab.check.outputs`), reduced by
    ``reduction``. ``samples`` is the number of elements (sampled) or directions
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
    """
    if order not in (1, 2):
        raise GradLabError(f"order is 1 (the gradient) or 2 (also its gradient); got {order!r}.")
    options = dict(mode=mode, samples=samples, seed=seed, scheme=scheme, eps=eps, rtol=rtol, atol=atol,
                   reduction=reduction, grad_outputs=grad_outputs, numeric_float64=numeric_float64,
                   workers=workers)
    call, args = _arguments(fn, inputs, wrt)
    twin = float64_twin(fn, args, wrt, numeric_fn)
    result = _first_order(call, args, **options, numeric_fn=numeric_fn, taylor=taylor, progress=progress,
                          twin=twin)
    if check_forward or order == 2:
        result = _with_higher_checks(result, call, check_inputs(args.reals()), options, check_forward, order,
                                     args.names)
    if raise_on_fail and result.verdict == "fail":
        raise GradcheckError(_fail_text(result))
    return result


def _with_higher_checks(result: CheckResult, call, tensors, options, check_forward: bool, order: int, names):
    """The first-order result with forward-mode and/or second-order results attached.

    ``call`` is fn of the checked tensors (the rest bound), the same the first-order check ran.
    """
    from gradlab.check.forward_mode import check_forward_mode
    from gradlab.check.second_order import check_second_order

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


def _first_order(call, args: Arguments, *, mode, samples, seed, scheme, eps, rtol, atol, reduction,
                 grad_outputs, numeric_float64, workers, numeric_fn, taylor, progress, twin=None) -> CheckResult:
    """The check of autograd's gradient (what ``gradcheck`` does without its extra checks);
    ``twin``: fn in float64 (gradlab.check.witness), or None."""
    choose("mode", mode, MODES)
    choose("reduction", reduction, REDUCTIONS)
    samples, seed, workers = check_samples(samples), check_seed(seed), resolve_workers(workers)
    xs = check_inputs(args.reals())
    if not sum(t.numel() for t in xs):
        raise GradLabError("The checked inputs have no elements: there is no gradient to check.")
    user_dtype = least_precise(xs)
    step_dtype = torch.float64 if numeric_float64 else user_dtype
    s = get_scheme(scheme)
    reason = not_applicable_reason(s, step_dtype)
    if reason is None and s.complex_step and any(args.complex_parts()):
        reason = "The complex step needs real inputs; this check has a complex one. Pick another scheme."
    if reason:
        raise GradLabError(reason)
    tol = Tolerances(*resolve_tolerances(user_dtype, rtol, atol))
    if not s.complex_step:
        check_user_step(eps, FlatInputs.of(xs).values, step_dtype)
    h = resolve_step(eps, s, step_dtype, FlatInputs.of(xs).values)
    numel = sum(t.numel() for t in xs)
    numeric_call = _bound(numeric_fn, args) if numeric_float64 and numeric_fn is not None else call
    # A bounded caller's forecast, before the set-up's dozen evaluations of fn (gradlab.check.pace);
    # a full check over its element bound is refused below, in its own words.
    count, unit = perturbation_count(mode, numel, samples)
    over_full_bound = mode == "full" and numel > LIMITS.full_check_elements
    pace = forecast_check(None if over_full_bound else progress, numeric_call, xs,
                          torch.float64 if numeric_float64 else None, perturbations=count, unit=unit,
                          points=stencil_points(s), workers=workers, complex_step=s.complex_step)
    check_repeatable(call, xs)
    call = differentiable_only(call, xs)  # output parts that need no gradient: left out, as torch does
    numeric_call, twin = leave_out(numeric_call, call), leave_out(twin, call)
    g, y, v = autograd_gradient(call, xs, reduction, grad_outputs, seed)
    spread = backward_spread(g, autograd_gradient(call, xs, reduction, grad_outputs, seed)[0])
    tol = tol.widened(spread)
    if mode == "full":
        check_full_limit(numel, y.numel(), s)
    p = numeric_problem(numeric_call, xs, reduction, v, s, h, torch.float64 if numeric_float64 else None,
                        names=args.names, complex_parts=args.complex_parts())
    p = dataclasses.replace(p, gradient=g)  # evaluated points moved back to nominal (stencil.nominal_correction)
    pace.after_setup()
    index, directions = _perturbations(mode, numel, samples, seed, torch.as_tensor(tol.of(g.abs().numpy())),
                                       block_size(user_dtype))
    twin = twin if twin is not None else call
    float64_problem = _float64_problem(twin, xs, reduction, v, s, p, args, g)
    g64 = autograd_in_float64(twin, xs, reduction, v, y) if user_dtype != torch.float64 else None
    rounding = None if g64 is None else ((g - g64)[index] if index is not None else directions @ (g - g64)).abs()
    first, table, scale, located, share = _measure(p, g, index, directions, tol, progress, workers,
                                                   float64_problem, facts(user_dtype).eps,
                                                   None if rounding is None else rounding.numpy(),
                                                   blocks=mode == "blocks",
                                                   element_rounding=None if g64 is None else (g - g64).abs())
    notes = evidence_notes(table, facts(user_dtype).name, g64 is not None, numeric_fn is not None)
    summary = summarize(p, table, CheckContext(mode, user_dtype, tol, y.numel(), spread), scale=scale,
                        located=located, truncation_share=share, first=first,
                        output_of=_output_of(call, xs, reduction, v, p), notes=notes)
    return CheckResult(table, summary, error_map(p.flat, mode, table), _taylor(p, g, seed) if taylor else None)


def _output_of(call, xs, reduction, v, p: NumericProblem):
    """flat index -> the output part a failing element's disagreement comes through
    (None: fn has one output part, nothing to name)."""
    if p.batched.layout is None or len(p.batched.layout.names) < 2:
        return None
    return lambda i: culprit_output(call, xs, reduction, v, flat_index=i, step=p.step)


def _taylor(p: NumericProblem, g: torch.Tensor, seed: int):
    """The Taylor test, or None when fn refuses one of its points: they lie along a random
    direction up to far from x (a solver or a domain check may reject them), and the check's
    verdict does not depend on them."""
    try:
        return taylor_test(p, g, seed)
    except GradLabError:
        return None


def _bound(fn: Callable, args: Arguments) -> Callable:
    """fn as a function of the checked (real) tensors only, the other arguments bound."""
    return lambda *reals: args.call(fn, reals)


def _arguments(fn: Callable, inputs: tuple, wrt) -> tuple[Callable, Arguments]:
    if isinstance(fn, torch.nn.Module) and wrt == "parameters":
        module_fn, args = module_arguments(fn, inputs)
        return _bound(module_fn, args), args
    args = parse_arguments(fn, inputs, wrt)
    return _bound(fn, args), args


def element_estimates(
    fn: Callable[..., torch.Tensor],
    x: torch.Tensor | Sequence[torch.Tensor],
    index: torch.Tensor,
    steps: torch.Tensor,
    *,
    reduction: str = "sum",
    scheme: str = "central",
    grad_outputs: str | torch.Tensor = "ones",
    seed: int = 0,
    numeric_float64: bool = False,
    numeric_fn: Callable[..., torch.Tensor] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(autograd, finite difference) at flat element ``index[r]`` with step ``steps[r]``.

    The building block of error-vs-eps sweeps: every (element, step) pair is
    one perturbed row, and rows are evaluated a chunk at a time.

    >>> a, n = element_estimates(lambda t: t ** 2, torch.tensor([3.0], dtype=torch.float64),
    ...                          torch.tensor([0, 0]), torch.tensor([1e-1, 1e-3]), scheme="forward")
    >>> a.tolist(), n.round(6).tolist()  # forward error = h exactly for x**2
    ([6.0, 6.0], [6.1, 6.001])
    """
    return reduction_estimates(
        fn, x, index, steps, reductions=(reduction,), scheme=scheme, grad_outputs=grad_outputs,
        seed=seed, numeric_float64=numeric_float64, numeric_fn=numeric_fn)[reduction]


def reduction_estimates(
    fn: Callable[..., torch.Tensor],
    x: torch.Tensor | Sequence[torch.Tensor],
    index: torch.Tensor,
    steps: torch.Tensor,
    *,
    reductions: Sequence[str] = REDUCTIONS,
    scheme: str = "central",
    grad_outputs: str | torch.Tensor = "ones",
    seed: int = 0,
    numeric_float64: bool = False,
    numeric_fn: Callable[..., torch.Tensor] | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`element_estimates` under several reductions, by reduction name.

    fn runs once per perturbed row, whatever the number of reductions: its
    outputs are reduced each way (a sweep of sum, mean and none costs one
    sweep of fn, not three), and each reduction's values are what it alone
    would give.

    >>> est = reduction_estimates(lambda t: t ** 2, torch.tensor([3.0, 1.0], dtype=torch.float64),
    ...                           torch.tensor([0]), torch.tensor([1e-1]), scheme="forward")
    >>> {r: n.round(6).tolist() for r, (_, n) in est.items()}  # mean halves L and dL/dx alike
    {'sum': [6.1], 'mean': [3.05], 'none': [6.1]}
    """
    for reduction in reductions:
        choose("reduction", reduction, REDUCTIONS)
    if not reductions:
        raise GradLabError("Name at least one reduction.")
    xs = as_inputs(x)
    s = get_scheme(scheme)
    numeric_dtype = torch.float64 if numeric_float64 else xs[0].dtype
    reason = not_applicable_reason(s, numeric_dtype)
    if reason:
        raise GradLabError(reason)
    callable_ = (numeric_fn or fn) if numeric_float64 else fn
    grads, problems = [], []
    for reduction in reductions:
        g, _, v = autograd_gradient(fn, xs, reduction, grad_outputs, seed)
        grads.append(g[index].numpy())
        problems.append(numeric_problem(callable_, xs, reduction, v, s, 1.0, numeric_dtype,
                                        like=problems[0] if problems else None))
    steps = steps.to(torch.float64)
    chunk = chunk_size(problems[0], len(index))
    results = run_chunks(SharedOnehot(problems, index, chunk, steps), len(index), chunk)
    return {r: (g, est.numpy()) for r, g, (est, _) in zip(reductions, grads, results)}
