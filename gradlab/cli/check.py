"""``python -m gradlab check``: the grad-check page's engine call from a terminal.

``register(subparsers)`` adds the ``check`` sub-command (``args.run`` is set to
:func:`run`); ``run(args)`` returns the exit status, by verdict
(:data:`gradlab.check.verdicts.states.EXIT_CODES`): 0 pass, 1 fail (a wrong gradient),
3 inconclusive, 4 not differentiable; 2 with one ``error: ...`` line on
stderr for bad input. JSON rows carry each value's ``state`` and
``error_bound`` besides the first step's columns, and its ``kind`` ("element" or
"direction"; a failing direction's elements, each checked on its own, follow the
directions with ``found_along`` naming it).

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> register(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["check", "--shape", "4x3", "--dtype", "float64", "--format", "json"])
>>> run(args)  # doctest: +ELLIPSIS
{...
0
"""

from __future__ import annotations

import argparse
import json

from gradlab.check import (COLUMN_WORDS, EXIT_CODES, GRAD_OUTPUTS, LOSSES, MODELS, MODES, REDUCTIONS, STATES,
                           CheckSettings, parse_shape, run_check)
from gradlab.cli.common import run_check_command, to_json
from gradlab.limits import LIMITS
from gradlab.server.deadline import paced_progress
from gradlab.numerics.dtypes import DTYPE_NAMES
from gradlab.numerics.schemes import SCHEME_NAMES

__all__ = ["register", "run", "result_json", "CLI_CHECK_ADVICE"]

#: What ends the sentence of a check stopped at its limit, in the CLI's own words.
CLI_CHECK_ADVICE = ("Pick --mode sampled or directional, fewer --samples, or a smaller --shape; on your "
                    "own machine raise the limit (GRADLAB_LIMITS=full_check_seconds=600) or call "
                    "gradlab.gradcheck, which has none.")


def _number(text: str) -> float:
    """An argparse type: text to a float. Its range is the engine's to check (CheckSettings)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _step(text: str) -> float | None:
    """'default' (the scheme's best step for the dtype) or a number."""
    return None if text.strip().lower() in ("default", "auto", "none") else _number(text)


def register(subparsers) -> None:
    """Add the ``check`` sub-command to an argparse subparsers object."""
    p = subparsers.add_parser(
        "check", help="finite-difference gradient check of a built-in model and loss",
        description="Check autograd's gradient of a loss against finite differences and "
                    "explain the verdict (same engine as the Grad check page).",
        epilog="Each value is pass, fail (the finite difference cannot explain the difference: "
               "a wrong gradient), inconclusive (the finite difference's error bound exceeds the "
               "tolerance) or not differentiable (a kink). Exit status: 0 pass, 1 fail, "
               "3 inconclusive, 4 not differentiable, 2 bad usage.")
    p.add_argument("--model", choices=MODELS, default="affine")
    p.add_argument("--expression", default="sin(x)", help="for --model expression: f(x), elementwise")
    p.add_argument("--shape", default="140x120", help="e.g. 140x120")
    p.add_argument("--loss", choices=LOSSES, default="mse")
    p.add_argument("--reduction", choices=REDUCTIONS, default="sum")
    p.add_argument("--grad-outputs", choices=GRAD_OUTPUTS, default="ones",
                   help="weights v of the checked loss sum_j v_j*y_j: ones (the default here: the plain "
                        "sum or mean) or random (seeded by --seed; gradlab.gradcheck's default in Python)")
    p.add_argument("--dtype", choices=DTYPE_NAMES, default="float32")
    p.add_argument("--scheme", choices=SCHEME_NAMES, default="central")
    p.add_argument("--eps", type=_step, default=None, help="step h, or 'default' (from the dtype)")
    p.add_argument("--mode", choices=MODES, default=MODES[0],
                   help="blocks (default): directions covering every element; sampled: --samples "
                        "elements; full: every element; directional: --samples random directions")
    p.add_argument("--samples", type=int, default=5, help="elements (sampled) or directions (directional)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--numeric-float64", action="store_true",
                   help="finite differences in float64, autograd in --dtype")
    p.add_argument("--rtol", type=_number, default=None)
    p.add_argument("--atol", type=_number, default=None)
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(run=run)


def _settings(args) -> CheckSettings:
    """The one frozen settings object; CheckSettings validates every value."""
    return CheckSettings(
        model=args.model, shape=parse_shape(args.shape), loss=args.loss, reduction=args.reduction,
        dtype=args.dtype, scheme=args.scheme, eps=args.eps, mode=args.mode, samples=args.samples,
        seed=args.seed, numeric_float64=args.numeric_float64, expression=args.expression,
        grad_outputs=args.grad_outputs, rtol=args.rtol, atol=args.atol)


def run(args) -> int:
    """Run the check described by parsed ``args``; print it as a table or JSON."""
    return run_check_command(lambda: _settings(args), _output, args.format, what="the check",
                             advice=CLI_CHECK_ADVICE)


def _output(settings: CheckSettings, format: str) -> tuple[str, int]:
    """What ``check`` prints and its exit status (run in the child)."""
    paced = paced_progress(LIMITS.full_check_seconds, f"this {settings.mode} check",
                           limit_name="LIMITS.full_check_seconds", advice=CLI_CHECK_ADVICE)
    result = run_check(settings, progress=paced)
    if format == "json":
        return json.dumps(result_json(result), indent=1, allow_nan=False) + "\n", EXIT_CODES[result.verdict]
    return _text(result), EXIT_CODES[result.verdict]


_ROW_KEYS = ("element", "index", "autograd", "numeric", "ratio", "abs_error", "rel_error",
             "tolerance", "ok", "relative_perturbation", "state", "error_bound", "best_numeric",
             "best_step", "best_dtype", "best_abs_error", "best_tolerance", "left_slope",
             "right_slope", "autograd_side", "kind", "found_along")


def result_json(result) -> dict:
    """The check as plain JSON values (see the module docstring for the keys)."""
    s, d = result.summary, result.summary.diagnosis
    keys = _ROW_KEYS + (("hand_written",) if "hand_written" in result.columns else ())
    rows = [{k: row[k] for k in keys} for row in result.table.to_dict(orient="records")]
    out = {
        "verdict": s.verdict, "diagnosis": d.text, "diagnosis_kind": d.kind, "level": d.level,
        "headline": d.headline, "fixes": list(d.fixes), "message": s.message, "hint": s.hint,
        "summary_headline": s.headline,
        "relative_perturbation": s.relative_perturbation, "machine_eps": s.machine_eps,
        "predicted_roundoff": d.predicted_roundoff, "suggested_step": d.suggested_step,
        "mode": s.mode, "scheme": s.scheme, "step": s.step, "dtype": s.dtype,
        "numeric_dtype": s.numeric_dtype, "reduction": s.reduction, "rtol": s.rtol,
        "atol": s.atol, "loss": s.loss, "checked": s.checked, "failed": s.failed,
        "vacuous": s.vacuous, "counts": dict(s.counts), "exit_code": EXIT_CODES[s.verdict],
        "backward_spread": s.backward_spread, "notes": list(s.notes), "worst": vars(s.worst) if s.worst else None,
        "located": vars(s.located) if s.located else None, "rows": rows,
    }
    if result.taylor is not None:
        t = result.taylor
        out["taylor"] = {"slope": t.slope, "verdict": t.verdict, "h_min": t.h_min,
                         "h_max": t.h_max, "floor": t.floor, "text": t.text,
                         "curve": t.table[["h", "remainder"]].to_dict(orient="list")}
    return to_json(out)


def _text(result) -> str:
    s, d = result.summary, result.summary.diagnosis
    printed = ["hand_written"] if "hand_written" in result.columns else []
    table = result.table[["element", "autograd", *printed, "numeric", "best_numeric", "error_bound", "state"]].copy()
    table["state"] = [STATES[k].marker for k in table["state"]]
    lines = [
        f"{s.mode} check, {s.scheme} differences, h = {s.step:.3g}, dtype {s.dtype} "
        f"(finite differences in {s.numeric_dtype}), reduction {s.reduction}, "
        f"rtol {s.rtol:g}, atol {s.atol:g}",
        "",
        table.to_string(index=False, float_format=lambda v: f"{v:.6g}"),
        *(f"{name}: {words}" for name, words in COLUMN_WORDS.items() if printed),
        "",
        f"verdict: {STATES[s.verdict].label.upper()} "
        f"({', '.join(f'{n} {STATES[k].label}' for k, n in s.counts if n)})",
        f"relative perturbation h·|dL/dx_i|/|L| = {s.relative_perturbation:.3g} "
        f"(machine eps {s.machine_eps:.3g})",
        "",
        d.text,
    ]
    if not s.passed:
        lines += ["", s.message, f"Hint: {s.hint}"]
    lines += [note for note in s.notes]
    if result.taylor is not None:
        lines += ["", "Taylor test: " + result.taylor.text]
    return "\n".join(lines) + "\n"
