"""The Explorer's error-vs-step sweep: every finite-difference estimate over a range of steps.

Its modules, in the order a sweep runs:

- :mod:`~gradlab.sweep.step_range`: the steps that make the error's V fill the chart, per
  dtype and scheme;
- :mod:`~gradlab.sweep.first_view`: the Explorer's first view as the engine takes it (the
  home page draws it too);
- :mod:`~gradlab.sweep.engine`: ``SweepSettings`` -> :func:`run_sweep` -> ``SweepResult``;
- :mod:`~gradlab.sweep.regimes`: where round-off and where truncation dominates each curve;
- :mod:`~gradlab.sweep.swept`: what a result holds, as a protocol its readers name;
- :mod:`~gradlab.sweep.display`: how a result shows itself (its figure, its notebook HTML);
- :mod:`~gradlab.sweep.api`: :func:`sweep`, the sweep from Python.

Its figures are pure functions in :mod:`gradlab.figures.sweep` (which never imports this
package at run time) and its answer sentence is :func:`gradlab.answers.sweep.sweep_answer`.

The package is also the library function ``gradlab.sweep(expression, at=...)``: calling
the package calls :func:`gradlab.sweep.api.sweep` (a package and a function cannot share
the name ``gradlab.sweep`` otherwise, since importing a submodule binds the package there).

>>> import gradlab
>>> r = gradlab.sweep("x**2", at=3.0, dtypes="float64", schemes="central", points=5)
>>> float(r.autograd.loc[0, "value"]), type(r).__module__
(6.0, 'gradlab.sweep.engine')
"""

from __future__ import annotations

import sys
import types

__all__ = ["sweep", "run_sweep", "SweepSettings", "SweepResult"]

_HOME = {"sweep": "api", "run_sweep": "engine", "SweepSettings": "engine", "SweepResult": "engine"}


def __getattr__(name: str):
    # Lazy, so `import gradlab.sweep.step_range` (a page's controls) does not load torch.
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _CallablePackage(types.ModuleType):
    """``gradlab.sweep(...)`` is :func:`gradlab.sweep.api.sweep`."""

    def __call__(self, *args, **kwargs):
        from gradlab.sweep.api import sweep

        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
