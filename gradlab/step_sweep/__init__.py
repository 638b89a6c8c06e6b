"""The error-vs-step sweep: every finite-difference estimate of f'(x) over a range of steps.

Its modules, in the order a sweep runs:

- :mod:`~gradlab.step_sweep.step_range`: the steps that make the error's V fill the chart, per
  dtype and scheme;
- :mod:`~gradlab.step_sweep.engine`: ``SweepSettings`` -> :func:`run_sweep` -> ``SweepResult``;
- :mod:`~gradlab.step_sweep.notes`: the notes a result carries, each with its level;
- :mod:`~gradlab.step_sweep.step_frames`: the estimates at each stop of a chart's step slider;
- :mod:`~gradlab.step_sweep.regimes`: where round-off and where truncation dominates each curve;
- :mod:`~gradlab.step_sweep.swept`: what a result holds, as a protocol its readers name;
- :mod:`~gradlab.step_sweep.display`: how a result shows itself (its figure, its notebook HTML);
- :mod:`~gradlab.step_sweep.api`: :func:`~gradlab.step_sweep.api.sweep`, the sweep from Python,
  which ``gradlab.sweep`` is.

The Explorer page's lab (:mod:`gradlab.labs.explorer`) calls it and owns what the page makes of
a result: its answer sentence, its figures (which the display draws a notebook's with), tables
and quiz.

>>> import gradlab
>>> r = gradlab.sweep("x**2", at=3.0, dtypes="float64", schemes="central", points=5)
>>> float(r.autograd.loc[0, "value"]), type(r).__module__
(6.0, 'gradlab.step_sweep.engine')
"""

from __future__ import annotations

__all__ = ["sweep", "run_sweep", "SweepSettings", "SweepResult"]

_HOME = {"sweep": "gradlab.step_sweep.api", "run_sweep": "gradlab.step_sweep.engine",
         "SweepSettings": "gradlab.step_sweep.engine", "SweepResult": "gradlab.step_sweep.engine"}


def __getattr__(name: str):
    # Lazy, so `import gradlab.step_sweep.step_range` (a page's controls) does not load torch.
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
