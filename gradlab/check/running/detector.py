"""The default mode's first look at a large float64 or float32 check: two dense directions, each
over every element, judged against their own measured error bound rather than the elements' tolerances.

A block direction (:mod:`gradlab.check.running.blocks`) is judged against its elements' tolerances, so
it must be short: an element m tolerances off moves its direction by m·c, the direction's own
tolerance is about c·sqrt(Σ r_j²), and past 8·64 elements the 64 blocks grow and a 10-tolerance
element sinks below its block's tolerance. A dense direction v over all N elements, element j
weighted r_j/tol_j (r_j a random sign times a size in [1, 2), :func:`block_directions` with one
block), is moved by an element k that is m tolerances off by ``m·|v_k|·tol_k ≥ m·c_min``
(c_min = min_k |v_k|·tol_k), whatever N. A float64 finite difference along v, Richardson-extrapolated on a ladder of steps
(:mod:`gradlab.check.differences.extrapolation`), is good to its error bound B: round-off from fn's noise
measured along the first direction (Moré and Wild's difference table), truncation from the next
extrapolation. Far below the shift of one wrong element for a
smooth fn: about 1e-13 of |∇L·v| on the MSE question, tanh(X @ W) and a 1.2 M-parameter GPT,
where a plain difference at its best step is good to 1e-9 and could not see one element. So:

- ``usable``: B + autograd's own rounding ≤ ``c_min·m/2`` for both directions, i.e. one element
  m tolerances off would move the direction by at least twice what the finite difference and
  autograd can be off by, for m no more than the blocks' own (:func:`sight`: 64 blocks dilute an
  element by the root of their length). m is SEEN_TOLERANCES (10) or the fewest the bound allows:
  10 in float64, 10-17 in float32, where autograd's own rounding is summed over every element.
  Else the detector cannot see such an element (a noisy fn, a large truncation) and the check
  runs its blocks, as before.
- ``suspect``: |∇L·v - R_v| > B + autograd's rounding along either direction. A suspicion is never
  a fail: halving then narrows it to elements (:func:`narrow`, the same extrapolated differences
  over half the elements), each judged against its own tolerance (a finite difference more
  precise than the tolerances may be suspicious of a difference within them: they then pass).
- otherwise the check passes on the two directions: every element is in both, and no element is
  m tolerances off (nor are several whose errors add up to that, unless they cancel
  along two independent random directions at once).

The cost: the noise table along the first direction at the check's step (2·(POINTS - 1)
evaluations of fn), the first direction at every step of :data:`LADDER` (2 evaluations each) and
the second at the four steps its best level needs (8): 34 evaluations in two batches, where 64
blocks cost 128 and their judging; a suspicion adds about 8·log2(N) evaluations per wrong
element and its own judging. Only float64 and float32 checks of more than :data:`DETECT_FROM`
elements with a finite-difference stencil use it (:func:`uses_detector`; below, the blocks are 8
elements long and cheap), float32 differenced on fn's float64 twin (the engine passes it as ``p``).

>>> from gradlab.check.running.problem import numeric_problem
>>> from gradlab.check.verdicts.report import Tolerances
>>> from gradlab.numerics.schemes import get_scheme
>>> x = torch.linspace(0.1, 3.0, 2000, dtype=torch.float64)
>>> p = numeric_problem(lambda t: torch.sin(t) * t, [x], "sum", None, get_scheme("central"), 1e-5, torch.float64)
>>> g = torch.cos(x) * x + torch.sin(x)
>>> tol = Tolerances(rtol=1e-5, atol=1e-8)
>>> detect(p, g, tol, tol.of(g.numpy()), seed=0).outcome
'pass'
>>> g[1234] += 10 * tol.of(g[1234:1235].numpy())[0]  # one element 10 tolerances off
>>> detect(p, g, tol, tol.of(g.numpy()), seed=0).outcome
'suspect'
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import torch

from gradlab.check.differences.error_bounds import Bounded
from gradlab.check.differences.extrapolation import RATIO, extrapolated, ladder, least_consistent
from gradlab.check.differences.halving import group_test
from gradlab.check.differences.noise import dense_estimator, measure_noise
from gradlab.check.differences.stencil import dense_maker, estimates
from gradlab.check.running.blocks import BlockDirections, block_directions, contract
from gradlab.check.running.float64_witness import AutogradRounding, ROUNDING_SAFETY
from gradlab.check.running.measure import checked_elements, element_judge
from gradlab.check.running.problem import NumericProblem, resolve_step
from gradlab.check.verdicts.autograd_slack import AUTOGRAD_ULPS
from gradlab.check.verdicts.columns import Columns, filled
from gradlab.check.verdicts.report import Estimates, Tolerances, value_table
from gradlab.check.verdicts.table_rows import element, worst_position
from gradlab.errors import GradLabError
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import facts
from gradlab.numerics.schemes import Scheme, get_scheme

__all__ = ["DETECTORS", "DETECT_FROM", "LADDER", "SEEN_TOLERANCES", "Detection", "detect", "detection_notes",
           "detected", "looked", "narrow", "sight", "uses_detector"]

#: Dense directions the detector evaluates.
DETECTORS = 2

#: Elements above which a float64 default check looks with the detector first: 64 blocks of 8.
DETECT_FROM = 8 * 64

#: The detector is used only where one element this many tolerances off would show clearly.
SEEN_TOLERANCES = 10.0

#: The steps the first direction is differenced at, times the central difference's: the best
#: level lies far above one element's step: 4,096 times it on the MSE question (a quadratic:
#: round-off only), 256 on tanh(X @ W), 1,024-4,096 on a GPT's parameters.
LADDER = tuple(RATIO ** k for k in range(2, 9))


_CENTRAL = get_scheme("central")


@dataclass(frozen=True)
class Detection:
    """The detector's outcome (``pass``, ``suspect`` or ``unusable``; after narrowing a suspicion,
    ``narrowed`` to a failing element or ``unconfirmed``), its directions and their
    table (first-table columns plus the judged ones a passing check reports)."""

    outcome: str
    directions: BlockDirections
    table: Columns
    bounded: Bounded
    problem: NumericProblem  # the float64 problem differenced: the check's own, or its float64 twin's
    rounding: AutogradRounding | None = None  # autograd's measured rounding below float64
    model_slack: np.ndarray | None = None  # AUTOGRAD_ULPS of Σ|g_j·v_j| per direction (the twin's own)
    seen_tolerances: float = SEEN_TOLERANCES  # a pass: no element this many of its tolerances off


def uses_detector(mode: str, dtype: torch.dtype, numel: int, scheme: Scheme) -> bool:
    """Whether a check looks with the detector first: the default mode in float64 or float32
    (differenced on its float64 twin, when fn has one), past DETECT_FROM, with a finite-difference
    stencil (not the complex step). In bfloat16 and float16 the blocks decide: autograd's own
    rounding along a dense direction is about what one element 10 of their tolerances off moves it by.

    >>> central = get_scheme("central")
    >>> uses_detector("blocks", torch.float64, 10_000, central), uses_detector("blocks", torch.bfloat16, 10_000, central)
    (True, False)
    >>> uses_detector("blocks", torch.float64, 10_000, get_scheme("complex"))
    False
    """
    return mode == "blocks" and dtype in (torch.float64, torch.float32) and numel > DETECT_FROM and \
        not scheme.complex_step


def detect(p: NumericProblem, g: torch.Tensor, tol: Tolerances, element_tolerance, seed: int,
           rounding_along=None) -> Detection:
    """The two dense directions' extrapolated differences at the level of :data:`LADDER` (times
    the check's step) whose bound is least along the first, bounded by fn's noise measured along
    the first at the check's step (the second's noise is the same in distribution).

    ``p`` is a float64 problem: the check's own, or for a check in a lower precision its float64
    twin's, whose differences are judged against autograd ``g`` in the lower precision with
    ``rounding_along(directions)`` (an :class:`~gradlab.check.running.float64_witness.AutogradRounding`) allowing
    for autograd's own rounding there, as measured along each direction (its distance from the
    twin's autograd, up to what re-rounding the twin's backward moves it by)."""
    directions = _dense_directions(p.flat.numel, seed, element_tolerance)
    estimator = dense_estimator(directions)
    noise = measure_noise(p, estimator, np.zeros(1, dtype=np.int64), np.array([p.step]))
    sigma = None if noise is None else float(noise.sigma[0])
    # from the central difference's step at least: a one-sided stencil's own is its square root of
    # eps, where an extrapolation (second order) would be swamped by round-off
    base = max(p.step, resolve_step(None, _CENTRAL, p.dtype, p.flat.values))
    steps = base * np.asarray(LADDER)
    first = ladder(p, estimator, 0, steps, sigma)
    best = least_consistent(first)
    second = ladder(p, estimator, 1, steps[best] * RATIO ** np.arange(4), sigma)
    bounded = Bounded(*(np.array([getattr(first, f)[best], getattr(second, f)[0]]) for f in
                        ("estimate", "step", "scale", "roundoff", "truncation")),
                      noise=None if sigma is None else np.full(DETECTORS, sigma))
    a = contract(directions, g).numpy()
    magnitude = contract(BlockDirections(directions.numel, directions.member_index, directions.starts,
                                         directions.weights.abs(), directions.keys), g.abs()).numpy()
    # autograd's own rounding along a direction: AUTOGRAD_ULPS machine epsilons of Σ|g_j·v_j| (the
    # sum of the magnitudes, not |∇L·v|: its terms may cancel)
    slack = model_slack = AUTOGRAD_ULPS * facts(p.dtype).eps * magnitude
    rounding = None if rounding_along is None else rounding_along(directions)
    if rounding is not None:  # NaN (not measurable): the direction is unusable, the blocks decide
        slack = slack + np.nan_to_num(rounding.rows(), nan=np.inf)
    least = _least_shift(directions, element_tolerance)
    limit = bounded.bound + slack
    # the fewest tolerances one element must be off to move both directions by twice their limit
    # (SEEN_TOLERANCES at least: float64's bound allows far fewer; float32's rounding over a
    # million elements 17)
    resolution = float(np.max(2 * limit / least))
    claimed = max(SEEN_TOLERANCES, math.ceil(resolution)) if math.isfinite(resolution) else math.inf
    seen = claimed * least
    table = value_table(p, None, Estimates(torch.from_numpy(a), torch.from_numpy(bounded.estimate),
                                           torch.from_numpy(bounded.scale)), tol)
    # beyond its bound along either direction: a suspicion, however loose the bound (halving says
    # where); within both, a pass only where the directions see as few tolerances as blocks would
    if not (np.abs(a - bounded.estimate) <= limit).all():
        outcome = "suspect"
    else:
        outcome = "pass" if claimed <= sight(p.flat.numel) else "unusable"
    table = table.joined(
        best_numeric=bounded.estimate, best_step=bounded.step, best_dtype=filled(DETECTORS, "float64"),
        best_abs_error=np.abs(a - bounded.estimate), best_tolerance=seen / 2, error_bound=bounded.bound,
        state=filled(DETECTORS, "pass"), left_slope=filled(DETECTORS, np.nan, np.float64),
        right_slope=filled(DETECTORS, np.nan, np.float64), autograd_side=filled(DETECTORS, ""),
        noise=bounded.noise if bounded.noise is not None else np.zeros(DETECTORS),
        bound_source=filled(DETECTORS, "measured noise" if noise is not None else "model"), autograd_rounding=slack)
    return Detection(outcome, directions, table, bounded, p, rounding, model_slack, claimed)


#: A half of a suspect direction is followed when autograd and its finite difference (at the
#: direction's step) differ by more than this many times the whole direction's bound plus
#: autograd's rounding: a half's round-off is the whole's (the same loss, differenced), its
#: truncation may not be (the halves' truncations can cancel in the whole).
HALF_SAFETY = 4.0

#: Halves followed to the next level, at most (the furthest beyond first): several wrong elements
#: are each followed down to itself.
MOST_HALVES = 4


def narrow(p: NumericProblem, g: torch.Tensor, detection: Detection) -> tuple[torch.Tensor, np.ndarray]:
    """(flat elements, the direction each was found along): the most suspect direction halved, its
    halves (the same weights, half the elements) differenced and extrapolated at the direction's
    step, the ones beyond HALF_SAFETY times its bound followed down to single elements. Group
    testing: about 8·log2(N) evaluations for one wrong element. The elements are a suspicion: the
    caller judges each against its own tolerance."""
    t = detection.table
    # the direction furthest beyond its bound: every element is in each, so one is enough
    excess = np.abs(t["autograd"] - t["best_numeric"]) / (t["error_bound"] + t["autograd_rounding"])
    k = int(np.argmax(np.nan_to_num(excess, nan=np.inf)))
    spread = None if detection.rounding is None else detection.rounding.element_spread()
    if spread is None:
        limit = lambda halves: HALF_SAFETY * (t["error_bound"][k] + t["autograd_rounding"][k])  # noqa: E731
    else:  # autograd's rounding below float64: each half's own, from each element's measured spread
        def limit(halves: BlockDirections) -> np.ndarray:
            own = halves.per_block((spread[halves.member_index] * halves.weights).pow(2).numpy())
            return HALF_SAFETY * (t["error_bound"][k] + detection.model_slack[k]) + ROUNDING_SAFETY * np.sqrt(own)

    def judged(halves, a, n, scale):  # followed: beyond the limit (NaN too, first)
        beyond = np.abs(a - n) - limit(halves)
        return ~(beyond <= 0), beyond

    def differenced(halves: BlockDirections, steps: torch.Tensor):  # at s and 2s, extrapolated
        twice = halves.select(np.tile(np.arange(len(halves)), 2))
        est, scale = estimates(p, dense_maker(p, twice), torch.cat([steps, 2 * steps]))
        m = len(steps)
        return torch.from_numpy(extrapolated(p, est[:m].numpy(), est[m:].numpy())), scale[:m]

    index = group_test(p, g, detection.directions.members(k), detection.directions[k], float(t["best_step"][k]),
                       judged, MOST_HALVES, differenced)
    return index, filled(index.numel(), str(t["element"][k]))


def detected(p: NumericProblem, g: torch.Tensor, detection: Detection, tol: Tolerances, workers: int,
             witness_of=lambda: None):
    """(the detection, (first table, table, located element)) when the detector decides the check,
    else None (the blocks decide). A pass decides; a suspicion decides when halving narrows it to
    elements: each judged against its own tolerance with the check's whole machinery, a failing
    one named (the directions it was found along fail), none failing a pass said so."""
    if detection.outcome == "pass":
        return detection, (detection.table, detection.table, None)
    if detection.outcome != "suspect":
        return None
    index, along = narrow(detection.problem, g, detection)
    if not index.numel():
        return None
    elements = checked_elements(p, g, index, tol, element_judge(p, tol, workers, facts(p.dtype).eps, witness_of,
                                                                detection.rounding))
    failing = elements["state"] == "fail"
    # a wrong element moves every dense direction: each suspect one fails with it (else all pass)
    t = detection.table
    suspect = ~(np.abs(t["autograd"] - t["best_numeric"]) <= t["error_bound"] + t["autograd_rounding"])
    states = np.where(suspect & failing.any(), "fail", "pass").astype(object)
    table = detection.table.joined(state=states).stacked(
        elements, found_along=np.concatenate([filled(DETECTORS, ""), along]))
    if not failing.any():
        return dataclasses.replace(detection, outcome="unconfirmed"), (detection.table, table, None)
    at = worst_position(elements)
    located = dataclasses.replace(element(elements, at), found_along=str(along[at]), found_by="dense")
    return dataclasses.replace(detection, outcome="narrowed"), (detection.table, table, located)


def detection_notes(detection: Detection | None) -> tuple[str, ...]:
    """What the detector decided, when it looked and the blocks then checked (a passing
    detector's words are the summary's own).

    >>> detection_notes(None)
    ()
    """
    if detection is None or detection.outcome in ("pass", "narrowed"):  # the summary's own words say it
        return ()
    if detection.outcome == "unconfirmed":
        return ("Two dense random directions over every element were suspicious (autograd and the finite "
                "difference differed by more than its measured error bound); narrowed by halving, the elements "
                "they pointed at each pass their own tolerance: a difference within the tolerances that a "
                "finite difference more precise than them can see, not a wrong gradient.",)
    if detection.outcome == "suspect":
        return ("Two dense random directions over every element were suspicious (autograd and the finite "
                "difference differed by more than its measured error bound) and halving them found no element, "
                "so every block of elements was checked against the elements' own tolerances.",)
    return (f"Two dense random directions over every element could not see one element "
            f"{sight(detection.problem.flat.numel):.0f} tolerances off, as the blocks can (their finite differences' "
            "measured error bound and autograd's own rounding are too large), so every block of elements was "
            "checked.",)


def looked(p: NumericProblem, g: torch.Tensor, tol: Tolerances, element_tolerance, seed: int,
           rounding_along=None) -> Detection | None:
    """:func:`detect`, or None when fn refuses a point of its ladder (its largest step is 65,536
    times the central difference's, along a unit direction, where a solver or a domain check may raise):
    then the blocks decide, whose points stay at the check's step."""
    try:
        return detect(p, g, tol, element_tolerance, seed, rounding_along)
    except (GradLabError, RuntimeError, ValueError, ArithmeticError):
        return None


def _dense_directions(numel: int, seed: int, element_tolerance) -> BlockDirections:
    """DETECTORS directions, each one block over every element (seeds ``seed`` + k)."""
    one = [block_directions(numel, seed + k, element_tolerance, block=numel) for k in range(DETECTORS)]
    return BlockDirections(numel, torch.cat([d.member_index for d in one]),
                           np.arange(DETECTORS + 1) * numel, torch.cat([d.weights for d in one]))


def sight(numel: int) -> float:
    """How many tolerances one element must be off for the default mode's blocks to see it (its
    worst case, SEEN_TOLERANCES at least): a block of n elements is judged against about
    ``BLOCK_SIGHT·sqrt(n)`` times an element's tolerance, so an element off by less is diluted.
    The dense directions are used where they see at least as few.

    >>> sight(1000), round(sight(1_208_384))
    (10.0, 210)
    """
    n = math.ceil(numel / LIMITS.directional_checks)
    return max(SEEN_TOLERANCES, BLOCK_SIGHT * math.sqrt(n))


#: sqrt(E[r²]) of the blocks' weight sizes r, uniform in [1, 2): a block's tolerance over its
#: smallest element's shift, per sqrt of its elements.
BLOCK_SIGHT = math.sqrt(7 / 3)


def _least_shift(directions: BlockDirections, element_tolerance) -> np.ndarray:
    """Per direction, min_k |v_k|·tol_k: what one element one tolerance off moves it by, at least."""
    tolerance = np.asarray(element_tolerance, dtype=np.float64)[directions.member_index.numpy()]
    shifts = np.abs(directions.weights.numpy()) * tolerance
    return np.minimum.reduceat(shifts, directions.starts[:-1])[directions.keys]
