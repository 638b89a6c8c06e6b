"""The tensor gradient check: autograd against finite differences on a user's function and inputs.

This package is the check's front door: code outside ``gradlab/check/`` imports the names of
``__all__`` from ``gradlab.check`` and nothing under it (``tests/test_check_structure.py``
holds it so). The names load on first use, each from the module that holds it, so importing
one of them does not import the engine behind the others:

- the check: ``gradcheck``, what it returns (``CheckResult``) and raises (``GradcheckError``),
  its options (``MODES``, ``REDUCTIONS``, ``GRAD_OUTPUTS``; ``choose`` and
  ``require_valid_options`` refuse a bad one in its own sentence), a value's states (``STATES``,
  ``STATE_NAMES``, ``EXIT_CODES``, ``overall``: the verdict of several states), the hand-written
  column's words (``COLUMN_WORDS``, ``NUMERIC_DIFFERS``) and the Taylor test (``TaylorResult``,
  ``fit_taylor``);
- what a caller running checks of its own needs: ``single_threaded_ops``, ``sample_indices``,
  ``random_weights``, ``perturbation_count``, ``element_estimates``, ``reduction_estimates``;
- the page's and the CLI's check: ``CheckSettings``, ``run_check``, ``parse_shape``, the built-in
  ``MODELS`` and ``LOSSES`` (``build_model_loss``), and the error-vs-eps sweep beside a check
  (``sweep_settings_for``, ``check_sweep``, ``eps_grid``, ``reduction_sweep``).

Inside, one sub-package per idea (each ``__init__`` lists its modules), in the order a check runs:

1. ``inputs/``: what the check is given: its options validated once, the caller's state kept,
   fn's arguments and outputs read as real tensors, the output weights, fn run twice and the
   step refused when it makes no sense, elements holding ±inf or NaN skipped;
2. ``running/``: :func:`~gradlab.check.running.engine.check_gradient` sets the check up (its
   cost forecast, the autograd side, the numeric problem, fn in float64 as a witness below
   float64), draws the perturbations (the default mode's blocks, or a large check's two dense
   directions first: the detector), evaluates fn over batches of perturbed copies in chunks on
   worker threads, and measures every value (``measure``);
3. ``differences/``: the finite differences of a batch (``stencil``) and their error bounds:
   measured noise, round-off plus Richardson truncation, the per-value step search, kinks,
   extrapolation, a failing block halved down to its wrong elements;
4. ``verdicts/``: each value's state (``judging``), the four states and their words, the table
   and summary (``report``), the diagnosis, and what is returned (``results``), also in a notebook;
5. ``further/``: forward mode, second order and the Taylor test re-run or re-examine the
   first-order check; ``estimates`` gives values at chosen elements and steps;
6. ``lab/``: the Grad check page's and CLI's settings, built-in models and reduction sweep.

``api`` holds ``gradcheck``, a thin wrapper over the engine that adds forward mode and second
order when asked; no module of the package imports it.
"""

from __future__ import annotations

from gradlab.front_door import lazy_names

#: Each public name -> the module that holds it.
_HOME = {
    "gradcheck": "gradlab.check.api",
    "CheckResult": "gradlab.check.verdicts.results",
    "GradcheckError": "gradlab.check.verdicts.results",
    "MODES": "gradlab.check.inputs.validation",
    "REDUCTIONS": "gradlab.check.inputs.validation",
    "GRAD_OUTPUTS": "gradlab.check.inputs.validation",
    "choose": "gradlab.check.inputs.validation",
    "require_valid_options": "gradlab.check.inputs.validation",
    "STATES": "gradlab.check.verdicts.states",
    "STATE_NAMES": "gradlab.check.verdicts.states",
    "EXIT_CODES": "gradlab.check.verdicts.states",
    "overall": "gradlab.check.verdicts.states",
    "COLUMN_WORDS": "gradlab.check.verdicts.hand_written",
    "NUMERIC_DIFFERS": "gradlab.check.verdicts.hand_written",
    "TaylorResult": "gradlab.check.further.taylor",
    "fit_taylor": "gradlab.check.further.taylor",
    "single_threaded_ops": "gradlab.check.running.batching",
    "sample_indices": "gradlab.check.running.engine",
    "random_weights": "gradlab.check.inputs.output_weights",
    "perturbation_count": "gradlab.check.running.cost_forecast",
    "element_estimates": "gradlab.check.further.estimates",
    "reduction_estimates": "gradlab.check.further.estimates",
    "CheckSettings": "gradlab.check.lab.settings",
    "run_check": "gradlab.check.lab.settings",
    "parse_shape": "gradlab.check.lab.settings",
    "MODELS": "gradlab.check.lab.builtin_models",
    "LOSSES": "gradlab.check.lab.builtin_models",
    "build_model_loss": "gradlab.check.lab.builtin_models",
    "sweep_settings_for": "gradlab.check.lab.reduction_sweep",
    "check_sweep": "gradlab.check.lab.reduction_sweep",
    "eps_grid": "gradlab.check.lab.reduction_sweep",
    "reduction_sweep": "gradlab.check.lab.reduction_sweep",
}

__all__ = sorted(_HOME)


__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
