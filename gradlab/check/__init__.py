"""The tensor gradient check: autograd against finite differences on a user's function and inputs.

Public entry points: :mod:`~gradlab.check.api` (``gradcheck``, and ``element_estimates``,
``reduction_estimates``, ``sample_indices``, ``full_check_work`` from the modules that hold
them) and :mod:`~gradlab.check.lab.settings` (``CheckSettings``, ``run_check``: the page's and
the CLI's call, on the built-in models and losses of :mod:`~gradlab.check.lab.builtin_models`).
``api`` is a thin wrapper: the first-order check is
:mod:`~gradlab.check.running.engine` (``check_gradient``), which the public API, forward mode
(:mod:`~gradlab.check.further.forward_mode`) and second order (:mod:`~gradlab.check.further.second_order`)
all run, and no module of the package imports ``api``; :mod:`~gradlab.check.further.estimates`
holds the error-vs-eps sweep's values. Inside, one concept per module, in the order a
check runs:
validation (options, the one place values are checked) -> caller_state (the modules and
tensors fn holds, put back bit for bit after the check) -> arguments (which of fn's
arguments are checked, as real tensors, on copies) and outputs (fn's outputs as one
named real vector) -> problem (inputs, autograd side,
the numeric problem) -> batching (fn over many perturbed copies) -> stencil (finite
differences of a batch) -> evaluation (chunks, worker threads) -> detector (a large float64
or float32 default check: two dense directions, Richardson-extrapolated by extrapolation.py,
against their measured error bound, a suspicion halved to elements; else the blocks of blocks.py) -> measure (every value
estimated and judged, then the element a failing direction points at named) -> verdicts
(each value's state: error_bounds gives round-off plus Richardson truncation, step_search
the per-value step search and the truncation share at h/2, kinks the one-sided slopes,
states the four states' rows and a verdict's words) -> report (value table, summary, with
diagnosis, worded by states; nonfinite: fn NaN or inf at x, said plainly; hand_written: what a
hand-written check prints beside a sampled check's values, the question's arithmetic) -> results
(what is returned; element: one checked value, a leaf both states and results read); taylor (the Taylor-remainder test) re-examines a result;
reduction_sweep draws the error-vs-eps sweep next to a check.
"""
