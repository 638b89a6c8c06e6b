"""The first-order check's engine: autograd's gradient against finite differences.

:func:`check_gradient` is what :func:`gradlab.check.api.gradcheck` does before its extra
checks, and what the forward-mode and second-order checks run on their twins
(:mod:`gradlab.check.further.forward_mode`, :mod:`gradlab.check.further.second_order`): it reads fn's
arguments (:mod:`~gradlab.check.inputs.arguments`; its outputs: :mod:`~gradlab.check.inputs.outputs`)
and checks the gradient in one of four modes:

- ``blocks`` (the default): random-sign directions over seeded random blocks of 8
  elements that cover every element (:mod:`gradlab.check.running.blocks`), so a wrong element
  anywhere moves some direction; a failing block's elements are then checked one by one;
- ``sampled``: k random elements (seeded, :func:`sample_indices`);
- ``full``: every element, batched (many perturbed copies per call, see
  :mod:`gradlab.check.running.batching`), with a ``progress(done, total)`` callback;
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

The parts a check runs, in order: :mod:`~gradlab.check.inputs.validation` (options),
:mod:`~gradlab.check.inputs.preconditions` (fn run twice, the step), :mod:`~gradlab.check.running.problem`
(autograd side, the numeric problem), :mod:`~gradlab.check.running.float64_witness` (fn in float64),
:mod:`~gradlab.check.running.measure` (the values, their verdicts, the element a failure points at),
:mod:`~gradlab.check.verdicts.report` (table, summary, words) and :mod:`~gradlab.check.verdicts.results` (what is returned).

>>> r = check_gradient(lambda x: (x ** 3).sum(), torch.linspace(-1, 1, 7, dtype=torch.float64),
...                    mode="full")
>>> r.verdict, len(r.table)
('pass', 7)
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

import numpy as np
import torch

from gradlab.check.further.taylor import taylor_test
from gradlab.check.inputs.arguments import Arguments, legacy_inputs, module_arguments, parameter_names, parse_arguments
from gradlab.check.inputs.caller_state import kept_state
from gradlab.check.inputs.outputs import leave_out, without_parts
from gradlab.check.inputs.preconditions import (confirm_repeatable, first_call, refuse_changed_arguments,
                                                require_usable_step)
from gradlab.check.inputs.skipped import Skipped, with_skipped_words
from gradlab.check.inputs.validation import require_callable, require_full_check_in_limit
from gradlab.check.running.batching import FEW_ROWS, FlatInputs, single_threaded_ops
from gradlab.check.running.blocks import BLOCK, block_directions, block_size
from gradlab.check.running.check_run import CheckOptions, CheckRun, Progress
from gradlab.check.running.cost_forecast import forecast_check, perturbation_count, stencil_points
from gradlab.check.running.detector import detected, detection_notes, looked, uses_detector
from gradlab.check.running.float64_witness import autograd_in_float64, autograd_rounding, float64_problem, float64_twin
from gradlab.check.running.measure import measure_values
from gradlab.check.running.problem import (NumericProblem, autograd_side, least_precise, numeric_problem, resolve_step,
                                           validated_inputs, weighted_outputs)
from gradlab.check.verdicts.autograd_slack import backward_spread
from gradlab.check.verdicts.culprit_output import culprit_output
from gradlab.check.verdicts.hand_written import hand_writable, hand_written_differences
from gradlab.check.verdicts.nonfinite import nonfinite_at_input, with_nonfinite_words
from gradlab.check.verdicts.report import CheckContext, Tolerances, error_map, state_counts, summarize
from gradlab.check.verdicts.results import CheckResult
from gradlab.check.verdicts.states import evidence_notes
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS, within_limit
from gradlab.numerics.dtypes import facts, resolve_tolerances
from gradlab.numerics.schemes import get_scheme, not_applicable_reason

__all__ = ["check_gradient", "checked_function", "caller_kept", "first_order", "perturbations", "sample_indices"]


def sample_indices(numel: int, samples: int, seed: int) -> torch.Tensor:
    """The flat indices the sampled mode checks: ``samples`` distinct ones, seeded, sorted.

    >>> sample_indices(10, 3, 0).tolist() == sample_indices(10, 3, 0).tolist()
    True
    """
    within_limit("sampled elements", samples, LIMITS.sampled_elements)
    gen = torch.Generator().manual_seed(seed)
    return torch.randperm(numel, generator=gen)[:min(samples, numel)].sort().values


def perturbations(mode: str, numel: int, samples: int, seed: int, tolerance=None,
                  block: int = BLOCK) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(flat indices, None) for sampled and full mode; (None, unit directions) for directional
    and blocks (``tolerance``: each element's, from autograd's gradient, weighting its block).

    >>> index, directions = perturbations("directional", 6, 2, 0)
    >>> index is None, directions.shape, directions.norm(dim=1).round(decimals=12).tolist()
    (True, torch.Size([2, 6]), [1.0, 1.0])
    """
    if mode == "blocks":
        return None, block_directions(numel, seed, np.ones(numel) if tolerance is None else tolerance, block)
    if mode == "full":
        return torch.arange(numel), None
    if mode == "sampled":
        return sample_indices(numel, samples, seed), None
    within_limit("directional checks", samples, LIMITS.directional_checks)
    gen = torch.Generator().manual_seed(seed)
    v = torch.randn(samples, numel, generator=gen, dtype=torch.float64)
    return None, v / v.norm(dim=1, keepdim=True)


def check_gradient(
    fn: Callable[..., Any],
    inputs: Any,
    *,
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
    workers: int | None = None,
) -> CheckResult:
    """The first-order check of autograd's gradient of ``fn`` at ``inputs``.

    ``inputs`` is a tensor or a sequence of fn's arguments (a tuple ``(a, b)`` means
    ``fn(a, b)``); the options mean what :func:`gradlab.check.api.gradcheck`'s mean.

    >>> x = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)
    >>> check_gradient(lambda t, n: (t ** n).sum(), (x, 2), mode="full").passed
    True
    """
    inputs = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)
    with caller_kept(fn, inputs, numeric_fn):
        call, args = checked_function(fn, inputs, wrt)
        options = CheckOptions(mode=mode, samples=samples, seed=seed, scheme=scheme, eps=eps, rtol=rtol, atol=atol,
                               reduction=reduction, grad_outputs=grad_outputs, numeric_float64=numeric_float64,
                               numeric_fn=numeric_fn, taylor=taylor, progress=progress, workers=workers)
        return first_order(call, args, options, twin=lambda: float64_twin(fn, args, wrt, numeric_fn))


def caller_kept(fn: Callable, inputs: tuple, numeric_fn: Callable | None = None) -> kept_state:
    """Refuse an fn (or numeric_fn) that cannot be called; else the block a check runs in, after
    which the modules and tensors fn holds are as they were (:mod:`gradlab.check.inputs.caller_state`;
    fn's tensor arguments are copied by :func:`~gradlab.check.inputs.arguments.parse_arguments`).

    >>> bn = torch.nn.BatchNorm1d(3)
    >>> with caller_kept(bn, (torch.randn(4, 3),)):
    ...     _ = bn(torch.randn(4, 3))
    >>> int(bn.num_batches_tracked)
    0
    """
    require_callable(fn)
    if numeric_fn is not None:
        require_callable(numeric_fn, "numeric_fn")
    inputs = legacy_inputs(tuple(inputs))
    return kept_state(fn, inputs, lambda: parameter_names(fn, len(inputs)), also=(numeric_fn,))


def checked_function(fn: Callable, inputs: tuple, wrt) -> tuple[Callable, Arguments]:
    """(fn as a function of the checked real tensors, the other arguments fixed; the arguments).

    >>> call, args = checked_function(lambda t, n: t ** n, (torch.ones(2), 3), None)
    >>> args.names, call(torch.full((2,), 2.0)).tolist()
    (('t',), [8.0, 8.0])
    """
    if isinstance(fn, torch.nn.Module) and wrt == "parameters":
        module_fn, args = module_arguments(fn, inputs)
        return of_checked_tensors(module_fn, args), args
    args = parse_arguments(fn, inputs, wrt)
    return of_checked_tensors(fn, args), args


def of_checked_tensors(fn: Callable, args: Arguments) -> Callable:
    """fn as a function of the checked (real) tensors only, the other arguments fixed (with
    fn's ``rows``, its cheap way over many rows, if it has one: see module_arguments)."""
    def call(*reals):
        return args.call(fn, reals)

    call.rows = getattr(fn, "rows", None)
    return call


def first_order(call, args: Arguments, options: CheckOptions, twin: Callable[[], Callable | None] | None = None
                ) -> CheckResult:
    """The check of autograd's gradient of ``call`` (:func:`checked_function`'s) over ``args``;
    ``options`` are :func:`check_gradient`'s, and ``twin``: a function building fn in float64
    (:func:`gradlab.check.running.float64_witness.float64_twin`, called only for a check in a lower
    precision), or None.

    The check's own numpy work ignores floating-point errors (numpy's ``errstate``): a NaN or
    inf from fn, an overflow in an error bound at a huge input, are values the check judges and
    words, not RuntimeWarnings for the caller's stderr; fn itself runs under the caller's error
    handling (:meth:`gradlab.check.inputs.arguments.Arguments.call`), and so do worker threads' calls.

    Torch runs on one thread meanwhile, as the chunks do
    (:func:`gradlab.check.running.batching.single_threaded_ops`; the worker threads share the chunks):
    every evaluation of fn at x, the backward and the verdicts' own evaluations are small
    ops, which a busy machine's cores make wait for the slowest (with torch's threads, a
    BatchNorm1d check's set-up takes 40 ms of CPU for 1 ms of work).

    >>> call, args = checked_function(torch.sin, (torch.ones(3, dtype=torch.float64),), None)
    >>> options = CheckOptions(mode="full", samples=5, seed=0, scheme="central", eps=None, rtol=None, atol=None,
    ...                        reduction="sum", grad_outputs="ones", numeric_float64=False, numeric_fn=None,
    ...                        taylor=False, progress=None, workers=1)
    >>> first_order(call, args, options).verdict
    'pass'
    """
    with single_threaded_ops(), np.errstate(all="ignore"):  # NaN and inf are values here (see above)
        return _first_order(call, args, options.validated(), twin)


def _first_order(call, args: Arguments, o: CheckOptions, twin) -> CheckResult:
    mode, samples, seed, eps, reduction, grad_outputs = o.mode, o.samples, o.seed, o.eps, o.reduction, o.grad_outputs
    numeric_float64, numeric_fn, progress, workers = o.numeric_float64, o.numeric_fn, o.progress, o.workers
    # sum/mean: fn's outputs weighted by grad_outputs, the loss Σ v_j·y_j (gradlab.check.running.problem)
    call, numeric_fn, twin = weighted_outputs(call, numeric_fn, twin, reduction, grad_outputs, seed)
    xs = validated_inputs(args.reals())
    if not sum(t.numel() for t in xs):
        raise GradLabError("The checked inputs have no elements: there is no gradient to check.")
    user_dtype = least_precise(xs)
    step_dtype = torch.float64 if numeric_float64 else user_dtype
    s = get_scheme(o.scheme)
    reason = not_applicable_reason(s, step_dtype)
    if reason is None and s.complex_step and any(args.complex_parts()):
        reason = "The complex step needs real inputs; this check has a complex one. Pick another scheme."
    if reason:
        raise GradLabError(reason)
    tol = Tolerances(*resolve_tolerances(user_dtype, o.rtol, o.atol))
    flat = FlatInputs.of(xs, args.names, args.complex_parts())
    skipped = Skipped.of(flat)  # elements holding ±inf or NaN: not perturbed, counted (gradlab.check.inputs.skipped)
    values = flat.values if skipped is None else skipped.values
    if not s.complex_step:
        require_usable_step(eps, values, step_dtype)
    h = resolve_step(eps, s, step_dtype, values)
    numel = sum(t.numel() for t in xs)
    numeric_call = of_checked_tensors(numeric_fn, args) if numeric_float64 and numeric_fn is not None else call
    # A time-limited caller's forecast, before the set-up's dozen evaluations of fn
    # (gradlab.check.running.cost_forecast); a full check over its element limit is refused
    # below, in its own words.
    count, unit = perturbation_count(mode, numel, samples)
    over_full_limit = mode == "full" and numel > LIMITS.full_check_elements
    pace = forecast_check(None if over_full_limit else progress, numeric_call, xs,
                          torch.float64 if numeric_float64 else None, perturbations=count, unit=unit,
                          points=stencil_points(s), workers=workers, complex_step=s.complex_step)
    at_x = first_call(call, xs, args.names)
    refuse_changed_arguments(args)  # the arguments fn gets unchecked are copies too: unchanged?
    # one forward pass with grad: the output parts that need no gradient are left out (as torch
    # does) and the backward runs twice on its graph, to measure its own nondeterminism
    side = autograd_side(call, xs, reduction, grad_outputs, seed)
    confirm_repeatable(call, xs, at_x, side.parts)  # fn twice at x: that pass is its second call
    call, g, y, v = side.call, side.gradient, side.output, side.weights
    nonfinite = nonfinite_at_input(at_x, getattr(call, "left_out", None), flat, y)  # NaN or inf at x: said plainly
    numeric_call = leave_out(numeric_call, call)
    spread = backward_spread(g, side.again)
    g = g if skipped is None else skipped.zeroed(g)
    tol = tol.widened(spread)
    if mode == "full":
        require_full_check_in_limit(numel, y.numel(), s)
    p = numeric_problem(numeric_call, xs, reduction, v, s, h, torch.float64 if numeric_float64 else None,
                        names=args.names, complex_parts=args.complex_parts(),
                        few_rows=count * stencil_points(s) <= FEW_ROWS, flat=None if numeric_float64 else flat,
                        at_x=None if numeric_float64 else _own_output(at_x, call, xs),
                        gradient=g)  # evaluated points moved back to nominal (stencil.nominal_correction)
    pace.after_setup()
    # weights the blocks' elements and floors their tolerance (the other modes have no blocks)
    element_tolerance = tol.of(g.numpy()) if mode == "blocks" else None
    lower = user_dtype != torch.float64
    if lower:  # fn in float64 is a witness for a lower precision only (building it copies a module)
        twin = leave_out(twin() if callable(twin) else None, call) or call
        witness = float64_problem(twin, xs, reduction, v, s, p, args, g)
        g64 = autograd_in_float64(twin, xs, reduction, v, y)
        g64 = g64 if skipped is None else skipped.zeroed(g64)
    else:
        twin, witness, g64 = call, lambda: None, None
    # a large default check looks along two dense directions first (gradlab.check.running.detector): in
    # float64 on fn itself, below it on the float64 twin, with autograd's own rounding measured
    detection = None
    # not at a step the caller chose: what fn's differences do there is what they asked (the
    # grad-check question's eps = 1e-3 in float32), and the blocks show it before re-estimating
    if skipped is None and not numeric_float64 and eps is None and uses_detector(mode, user_dtype, numel, s):
        differenced = p if not lower else witness() if g64 is not None else None
        rounding_along = (lambda dense: autograd_rounding(call, twin, xs, reduction, v, g, g64, user_dtype,
                                                          directions=dense)) if lower else None
        detection = None if differenced is None else looked(differenced, g, tol, element_tolerance, seed,
                                                            rounding_along)
    decided = None if detection is None else detected(p, g, detection, tol, workers, witness)
    rounding, compared = None, mode if decided is None else "dense"
    if decided is not None:  # no element SEEN_TOLERANCES off, or the wrong ones narrowed to and judged
        detection, (first, table, located) = decided
        scale, share, rounding = torch.from_numpy(detection.bounded.scale), None, detection.rounding
    else:
        draw = perturbations if skipped is None else skipped.over_kept(perturbations)
        index, directions = draw(mode, numel, samples, seed, element_tolerance, block_size(user_dtype))
        # autograd's own rounding: its distance from g64 allowed for only up to what rounding can produce (witness)
        rounding = None if not lower else autograd_rounding(call, twin, xs, reduction, v, g, g64, user_dtype, index,
                                                            directions)
        run = CheckRun(p, g, tol, workers, progress, witness, facts(user_dtype).eps)
        measured = measure_values(run, index, directions, rounding, blocks=mode == "blocks",
                                  element_tolerance=element_tolerance)
        first, table, scale, located, share = (measured.first, measured.table, measured.scale, measured.located,
                                               measured.truncation_share)

    if decided is None and hand_writable(mode, reduction, grad_outputs, s, numeric_float64, skipped, at_x):
        elements = zip(table["input"].tolist(), table["index"])  # the table's own (input, index) of each row
        table = table.joined(hand_written=hand_written_differences(call, xs, elements, reduction, s.name, p.step))

    @functools.cache  # one summary for this result and its copies (result.first_order)
    @np.errstate(all="ignore")  # built when first read, after the check: quiet as the check is
    def summary():
        notes = evidence_notes(table, facts(user_dtype).name, rounding, numeric_fn is not None) + \
            detection_notes(detection)
        summary = summarize(p, table, CheckContext(compared, user_dtype, tol, y.numel(), spread), scale=scale,
                            located=located, truncation_share=share, first=first,
                            output_of=_output_of(call, xs, reduction, v, p), notes=notes, counted=counted)
        if compared == "dense":
            summary = dataclasses.replace(summary, seen_tolerances=detection.seen_tolerances)
        return side.worded(with_skipped_words(with_nonfinite_words(summary, nonfinite), skipped))

    counted = state_counts(table)
    verdict = side.verdict(counted[1])  # a gradient zero by construction: inconclusive, not pass
    # A pass's words are built when first read (a tenth of a small check; a test asserting
    # the verdict never reads them); any other verdict's now, while fn is as it was: naming
    # the output part a wrong gradient comes through evaluates fn again.
    # (no map of every element when some were skipped: the table has no row for them)
    return CheckResult(table, summary if verdict == "pass" else summary(),
                       error_map(p.flat, mode, table) if skipped is None else None,
                       _taylor(p, g, seed) if o.taylor else None, own_verdict=verdict, dtype=facts(user_dtype).name)


def _own_output(out, call, xs):
    """fn's output at x from the repeatability check, as ``call`` (the numeric side's fn, parts
    without a gradient left out) gives it, when the inputs are contiguous (the loop's rows are:
    a strided input may round differently); else None."""
    if not all(t.is_contiguous() for t in xs):
        return None
    left_out = getattr(call, "left_out", None)
    return without_parts(out, left_out) if left_out else out


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
