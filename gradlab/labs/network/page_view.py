"""What the Network page shows of one settings object: :func:`view`, the page's worker entry.

The experiment (:func:`~gradlab.labs.network.engine.network_experiment`: the central difference at
dx and the sweep over steps), then the answer, the two charts, the values side by side, the sweep's
rows, the prediction and the sentences their numbers make. Its forward passes round every sum
exactly, in Python, 10-40 ms of one core per view, which in the server's interpreter every other
session's rerun would wait behind: a page runs it in a worker process.

>>> v = view(NetworkSettings(points=9))
>>> v.answer.level, sorted(v.charts), list(v.tables["prediction"].index)
('success', ['staircase', 'step error'], ['float32', 'float64', 'step'])
>>> v.texts["chart caption"]
'y = 0.394690573, ulp(y) = 2.98e-08, q = ulp(y)/(2·dx) = 0.0149012.'
"""

from __future__ import annotations

import math

import pandas as pd

from gradlab.labs.network.answer import network_answer
from gradlab.labs.network.engine import FiniteDifference, NetworkSettings, StepSweep, network_experiment
from gradlab.labs.network.figures import staircase_figure, step_error_figure
from gradlab.labs.network.quiz import NETWORK_QUESTION, prediction
from gradlab.literal_text import markdown_literal
from gradlab.numerics.mp_format import latex_number as tex
from gradlab.server.worker_entries import worker_entry
from gradlab.view import Chart, View

__all__ = ["view"]


@worker_entry("the network's differences", "request_seconds")
def view(settings: NetworkSettings) -> View:
    """The Network page's view of ``settings`` (see the module docstring)."""
    experiment = network_experiment(settings)
    fd, sweep = experiment.difference, experiment.sweep
    notes = {f"note {n}": markdown_literal(note) for n, note in enumerate(sweep.notes, start=1)}
    vanished = {"step vanished": f"In {fd.dtype}, x_i ± {fd.step:g} rounds back to x_i itself: the difference "
                                 "is exactly 0. Try a larger step."} if fd.step_vanished else {}
    return View(
        answer=network_answer(fd),
        charts={"staircase": Chart(staircase_figure, (sweep.table, sweep.autograd, sweep.reference, fd.step,
                                                      fd.quantum, fd.dtype, fd.estimate)),
                "step error": Chart(step_error_figure, (sweep, fd.step, fd.dtype))},
        tables={"values": _values(fd), "sweep": sweep.table, "prediction": prediction(fd)},
        texts={"answer note": f"ulp(y): the gap between y and the next larger {fd.dtype} number; "
                              "q = ulp(y)/(2·dx), the least an estimate can change by.",
               "chart caption": f"y = {fd.y:.9g}, ulp(y) = {fd.ulp_y:.4g}, q = ulp(y)/(2·dx) = {fd.quantum:.6g}.",
               "prediction": NETWORK_QUESTION.format(step=fd.step),
               "quantisation": _quantisation(fd), **vanished, "best step": _best_step(sweep), **notes},
        result=experiment,
    )


def _values(fd: FiniteDifference) -> pd.DataFrame:
    """Autograd, the central difference, the exact value and the quantum: four rows, the value column first."""
    return pd.DataFrame({
        "value": [repr(fd.autograd), repr(fd.estimate), f"{fd.reference:.9g}", f"{fd.quantum:.6g}"],
        "what": [f"autograd ({fd.dtype})", f"scipy-style difference, dx = {fd.step:g}",
                 "exact (float64 autograd, same weights)", "q = ulp(y)/(2·dx)"],
        "off from exact": [f"{fd.autograd_error:+.2e}", f"{fd.estimate_error:+.2e}", "", ""],
    })


def _quantisation(fd: FiniteDifference) -> str:
    """Why the estimate is k·q, in the numbers of this network."""
    return (
        f"The output is $y = {tex(fd.y, '.9g')}$, and $y(x_i \\pm dx)$ are floats of {fd.dtype}: integer "
        f"multiples of $\\mathrm{{ulp}}(y) = {tex(fd.ulp_y, '.4g')}$. Their difference is "
        f"$k\\,\\mathrm{{ulp}}(y)$ with $k = {fd.k}$, so the estimate is "
        f"$k \\cdot q = {fd.k} \\times {tex(fd.quantum, '.6g')} = {tex(fd.estimate, '.9g')}$. "
        f"The nearest multiple of $q$ to the exact value would be $k = {fd.nearest_multiple_of_reference}$: "
        f"no step of this size can do better. The step actually taken was "
        f"$\\tfrac12(\\mathrm{{fl}}(x_i+dx)-\\mathrm{{fl}}(x_i-dx)) = {tex(fd.step_taken, '.4g')}$, "
        f"not {fd.step:g}."
    )


def _best_step(sweep: StepSweep) -> str:
    """The sweep's best step beside the theory's, for a second-year student: what balances, then the
    formula, then the rule of thumb."""
    best = sweep.best_row()
    # a ReLU network is piecewise linear: f‴ = 0 between kinks, and the formula's h* is no number
    theory = (rf"$h^\ast = (3u\,|f/f'''|)^{{1/3}}$: **{sweep.predicted_step:.2g}** for this network"
              if math.isfinite(sweep.predicted_step) else
              r"$h^\ast = (3u\,|f/f'''|)^{1/3}$; here $f''' = 0$ (a piecewise-linear network), so there is no "
              r"truncation to balance and the formula names no step: any step that crosses no kink is exact "
              r"up to rounding")
    return (
        f"Best step in this sweep: **h = {best['step']:.2g}**, error {best['ref_error']:.2g}. Theory: the step "
        r"is best where the rounding error (about $u\,|f|/h$, $u$ the unit round-off) equals the error of the "
        rf"formula itself (about $|f'''|\,h^2/6$, $f'''$ the third derivative), which happens at {theory}. "
        rf"Without knowing $f'''$, the usual rule of thumb pretends $|f/f'''| = 1$: $(3u)^{{1/3}}$ = "
        rf"{sweep.default_step:.2g}."
    )
