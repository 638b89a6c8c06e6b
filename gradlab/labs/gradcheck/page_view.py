"""What the Grad check page shows: one view per view of the page, each a worker entry.

- :func:`function_view` (a function, or a built-in model, checked as a whole): the check
  (:func:`gradlab.check.run_check`), its answer, the diagnosis (its box, numbers and sentences),
  the values table, the Taylor test and, for a full check of a 2-D input, the heatmap;
- :func:`eps_sweep_view`: the function view's main chart, the error against the step for sum, mean
  and none (:func:`gradlab.check.check_sweep`), computed once for every check that differs only
  in mode or step (:func:`gradlab.check.sweep_settings_for`); :func:`marked` marks the check's
  own step on it;
- :func:`layer_view` (a model built from named layers, layer by layer): each module's check beside
  the whole model's (:func:`gradlab.layers.settings.run_layer_check`), its answer naming the
  module, the chart of every module, the table and the Python call.

Each is stopped once its pace projects past ``LIMITS.full_check_seconds`` (every mode: a sampled
check of 1,000 elements of a 1M-element complex-step expression would take minutes).

>>> from gradlab.check import CheckSettings
>>> v = function_view(CheckSettings(shape=(6, 5), dtype="float64", scheme="central"))
>>> v.answer.level, sorted(v.charts), list(v.tables["values"].columns)[:2]
('success', ['taylor'], ['element', 'state'])
>>> from gradlab.layers.settings import LayerCheckSettings
>>> v = layer_view(LayerCheckSettings("linear:4, wrong_swish, linear:1", (3, 2), "float64"))
>>> v.answer.text.startswith("Module 1 (WrongSwish"), v.whole.level
(True, 'error')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gradlab.check import CheckSettings, check_sweep, perturbation_count, run_check
from gradlab.figures.check import error_heatmap
from gradlab.labs.gradcheck.answer import check_answer, layer_answer, whole_model_answer
from gradlab.labs.gradcheck.diagnosis import diagnosis_box, diagnosis_numbers, diagnosis_texts
from gradlab.labs.gradcheck.figures import eps_sweep_figure, layer_chart, taylor_figure
from gradlab.labs.gradcheck.python_call import python_call
from gradlab.labs.gradcheck.tables import module_table, values_table
from gradlab.layers.settings import LayerCheckSettings, run_layer_check
from gradlab.limits import LIMITS, server_limits
from gradlab.literal_text import markdown_literal
from gradlab.server.deadline import paced_progress
from gradlab.server.worker_entries import worker_entry
from gradlab.view import Answer, Chart, View

__all__ = ["CheckView", "LayerView", "function_view", "eps_sweep_view", "marked", "layer_view",
           "CHECK_ADVICE", "LAYERS_ADVICE"]

CHECK_ADVICE = ("Pick mode 'sampled' or 'directional', fewer samples, or a smaller shape; on your own "
                "machine gradlab.gradcheck has no time limit.")
LAYERS_ADVICE = ("Pick fewer or narrower layers, a smaller input shape, or mode 'sampled'; on your own "
                 "machine gradlab.check_layers has no time limit.")

#: One element of one perturbed evaluation in a check (one core: 3e-8 s for the affine model).
_CHECK_ELEMENT_SECONDS = 1e-8


def _check_forecast(settings: CheckSettings, *_) -> float:
    """Seconds a check takes, roughly: its perturbed evaluations of fn, each of every element."""
    import torch

    numel = math.prod(settings.shape)
    rows = perturbation_count(settings.mode, numel, settings.samples, getattr(torch, settings.dtype))[0]
    return rows * numel * _CHECK_ELEMENT_SECONDS


@dataclass(frozen=True)
class CheckView(View):
    """A :class:`~gradlab.view.View` of a function check and what only it shows: the check's step
    (marked on the eps sweep), the diagnosis in its box (Markdown, literal parts escaped) and the
    engine's notes (one caption each)."""

    step: float = math.nan
    diagnosis: Answer | None = None
    notes: tuple[str, ...] = ()


@worker_entry("the check", "full_check_seconds", "request_seconds", advice=CHECK_ADVICE,
              forecast=_check_forecast)
def function_view(settings: CheckSettings, workers: int | None = 1, progress=None) -> CheckView:
    """The function view of ``settings`` (see the module docstring). ``workers``: the check's
    threads, one on the page (``gradlab.ui.runtime.CHECK_WORKERS``: one visitor, one core)."""
    paced = paced_progress(LIMITS.full_check_seconds, f"this {settings.mode} check", progress,
                           limit_name="LIMITS.full_check_seconds", advice=CHECK_ADVICE)
    with server_limits():  # the server's size limits (gradlab.limits.size_limit)
        result = run_check(settings, progress=paced, workers=workers)
    s, table = result.summary, values_table(result)
    charts = {}
    if result.taylor is not None:
        charts["taylor"] = Chart(taylor_figure, (result.taylor,))
    if result.error_map is not None:
        charts["heatmap"] = Chart(error_heatmap, (result.error_map, result.state_map))
    return CheckView(
        answer=check_answer(s, result.columns),
        charts=charts,
        tables={"values": table},
        numbers=diagnosis_numbers(s),
        texts={**diagnosis_texts(s, result.columns),
               "values shown": (f"The {len(table)} values furthest over their tolerance, of {len(result.columns):,}."
                                if len(table) < len(result.columns) else ""),
               "tolerance": (f"tolerance = atol + rtol·|numeric|, with atol = {s.atol:g} (absolute tolerance) and "
                             f"rtol = {s.rtol:g} (relative tolerance): for values near 0 it is atol itself."),
               "taylor": (markdown_literal(result.taylor.text) + " This test needs no step and no tolerance."
                          if result.taylor is not None else "")},
        result=result,
        step=s.step,
        diagnosis=diagnosis_box(s),
        notes=tuple(markdown_literal(note) for note in s.notes),
    )


@worker_entry("the eps sweep", "request_seconds", advice="Pick a smaller shape, or a simpler model or expression.")
def eps_sweep_view(sweep_settings: CheckSettings) -> View:
    """The eps sweep of sum, mean and none for ``sweep_settings`` (``sweep_settings_for(settings)``):
    its chart, ``"eps sweep"``, with the rtol line; :func:`marked` adds a check's own step."""
    with server_limits():
        sweep = check_sweep(sweep_settings)
    return View(Answer("info", "The error of the finite difference against the step eps, for sum, mean and none."),
                charts={"eps sweep": Chart(eps_sweep_figure, (sweep.table,), {"rtol": sweep.rtol})},
                tables={"sweep": sweep.table}, result=sweep)


def marked(sweep: View, step: float) -> View:
    """``sweep`` (an :func:`eps_sweep_view`) with the check's own ``step`` marked on its chart.

    >>> v = View(Answer("info", "."), charts={"eps sweep": Chart(dict, (), {"rtol": 1e-3})})
    >>> marked(v, 1e-3).charts["eps sweep"].kwargs
    {'rtol': 0.001, 'step': 0.001}
    """
    chart = sweep.charts["eps sweep"]
    return replace(sweep, charts={"eps sweep": Chart(chart.build, chart.args, {**chart.kwargs, "step": step})})


@dataclass(frozen=True)
class LayerView(View):
    """A :class:`~gradlab.view.View` of a layer check and the whole model's one check beside it."""

    whole: Answer | None = None


@worker_entry("the layer-by-layer check", "full_check_seconds", "request_seconds", advice=LAYERS_ADVICE)
def layer_view(settings: LayerCheckSettings, progress=None) -> LayerView:
    """The layer view of ``settings`` (see the module docstring), stopped once its pace over the
    modules projects past ``LIMITS.full_check_seconds``."""
    paced = paced_progress(LIMITS.full_check_seconds, "this layer-by-layer check", progress,
                           limit_name="LIMITS.full_check_seconds", advice=LAYERS_ADVICE)
    with server_limits():
        report = run_layer_check(settings, progress=paced)
    return LayerView(
        answer=layer_answer(report.layers),
        charts={"layers": Chart(layer_chart, (report.layers,))},
        tables={"modules": module_table(report.layers)},
        texts={"whole model": _whole_model_words(report), "python call": python_call(settings)},
        result=report,
        whole=whole_model_answer(report.whole),
    )


def _whole_model_words(report) -> str:
    """Why the whole model's check names a parameter, not the layer (Markdown, literal parts escaped)."""
    failing = report.layers.failing_modules
    if report.whole.verdict == "fail" and failing:
        return (f"It names a parameter, not the layer: a wrong backward in module {markdown_literal(failing[0])} "
                "reaches every parameter before it through the chain rule, so the first parameter "
                "already fails. Each layer checked on its own names the one whose backward is wrong.")
    if report.whole.verdict == "fail":
        return "The layer checks found no failing module: see the table for the checks that could not decide."
    return "Each module is also checked on its own, at the inputs it received, in the model's dtype."
