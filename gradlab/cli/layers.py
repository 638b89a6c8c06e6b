"""``python -m gradlab layers``: find the layer whose gradient is wrong, from a terminal.

The model is a stack of the layer vocabulary (:mod:`gradlab.layers.vocabulary`), e.g.
``--stack "linear:16, wrong_swish, layernorm, linear:1" --input 8x4``; each module is checked
on its own at the inputs it received, and the whole model's parameters beside it
(:func:`gradlab.layers.settings.run_layer_check`). Exit status by the layer check's verdict
(:data:`gradlab.check.verdicts.states.EXIT_CODES`): 0 pass, 1 fail (a module's gradient is wrong),
3 inconclusive, 4 not differentiable; 2 with one ``error: ...`` line for bad input.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> register(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["layers", "--stack", "linear:3, tanh", "--input", "2x2", "--dtype", "float64"])
>>> run(args)  # doctest: +ELLIPSIS
module ...
0
"""

from __future__ import annotations

import json
import sys

from gradlab.check import EXIT_CODES, MODES, REDUCTIONS, parse_shape
from gradlab.cli.common import records, run_check_command, to_json
from gradlab.layers.check import CALLS
from gradlab.layers.settings import LOSSES, LayerCheckSettings, run_layer_check
from gradlab.layers.vocabulary import LAYERS
from gradlab.limits import LIMITS
from gradlab.numerics.dtypes import DTYPE_NAMES
from gradlab.server.deadline import paced_progress

__all__ = ["register", "run", "report_json"]

_ADVICE = "Use a smaller --input or fewer layers; on your own machine gradlab.check_layers has no time limit."


def register(subparsers) -> None:
    """Add the ``layers`` sub-command to an argparse subparsers object."""
    p = subparsers.add_parser(
        "layers", help="check each layer of a model on its own: which one has the wrong gradient",
        description="Build a model from named layers, check every module's gradient on its own at the "
                    "inputs it received (and the whole model's beside it), and name the module whose "
                    "gradient is wrong.",
        epilog="Layers: " + "; ".join(f"{name} ({layer.help})" for name, layer in LAYERS.items())
               + ". Exit status: 0 pass, 1 fail, 3 inconclusive, 4 not differentiable, 2 bad usage.")
    p.add_argument("--stack", default="linear:16, tanh, wrong_swish, linear:8, gelu, linear:1",
                   help="layers, comma separated, e.g. 'linear:16, wrong_swish, layernorm, linear:1'")
    p.add_argument("--input", default="8x4", help="the input's shape, batch first, e.g. 8x4 or 2x5x8")
    p.add_argument("--dtype", choices=DTYPE_NAMES, default="float32")
    p.add_argument("--mode", choices=MODES, default=MODES[0], help="each module's check mode")
    p.add_argument("--calls", choices=CALLS, default="first",
                   help="a module called several times: checked at its first call, or at each")
    p.add_argument("--loss", choices=LOSSES, default="none",
                   help="none: check the model's outputs; mse: a last layer, the squared error to a seeded target")
    p.add_argument("--reduction", choices=REDUCTIONS, default="sum", help="how every check reduces its outputs")
    p.add_argument("--seed", type=int, default=0, help="the weights', the input's and the checks' seed")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(run=run)


def run(args) -> int:
    """Run the layer check described by parsed ``args``; print it as a table or JSON."""
    settings = lambda: LayerCheckSettings(args.stack, parse_shape(args.input), args.dtype,  # noqa: E731
                                          args.mode, args.seed, args.calls, args.loss, args.reduction).validated()
    return run_check_command(settings, _output, args.format, what="the layer check", advice=_ADVICE)


def _output(settings: LayerCheckSettings, format: str) -> tuple[str, int]:
    # stopped as soon as its pace over the modules projects past the limit, as a check is
    paced = paced_progress(LIMITS.full_check_seconds, "this layer check",
                           limit_name="LIMITS.full_check_seconds", advice=_ADVICE)
    report = run_layer_check(settings, progress=paced)
    status = EXIT_CODES[report.layers.verdict]
    if format == "json":
        return json.dumps(report_json(report), indent=1, allow_nan=False) + "\n", status
    table = report.layers.table[["module", "type", "checked over", "verdict", "element", "difference",
                                 "tolerance", "error bound"]]
    whole = report.whole.summary
    lines = [table.to_string(index=False, float_format=lambda v: f"{v:.3g}"), "",
             f"verdict: {report.layers.verdict.upper().replace('_', ' ')}", report.layers.answer, "",
             f"The whole model at once ({whole.mode} check of its parameters): {whole.headline}"]
    return "\n".join(lines) + "\n", status


def report_json(report) -> dict:
    """The layer check as plain JSON values: verdict, answer, rows, and the whole model's verdict."""
    s = report.settings
    whole = report.whole.summary
    return to_json({
        "stack": s.stack, "input_shape": list(s.input_shape), "dtype": s.dtype, "mode": s.mode, "seed": s.seed,
        "calls": s.calls, "loss": s.loss, "reduction": s.reduction, "verdict": report.layers.verdict, "answer": report.layers.answer,
        "failing_modules": list(report.layers.failing_modules), "exit_code": EXIT_CODES[report.layers.verdict],
        "rows": records(report.layers.table),
        "whole_model": {"verdict": whole.verdict, "headline": whole.headline,
                        "located": vars(whole.located) if whole.located else None},
    })
