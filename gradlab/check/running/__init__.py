"""Running a first-order check: the engine, the numeric problem, and fn over many perturbed copies.

- ``engine``: the first-order check (``check_gradient``), its modes' perturbations.
- ``check_run``: what a run carries: the caller's options, then what its measurement shares.
- ``cost_forecast``: a check's cost forecast from one timed evaluation of fn, before its set-up.
- ``problem``: the autograd side from one forward pass, and the numeric problem.
- ``float64_witness``: fn in float64 beside a lower-precision check, and autograd's own rounding.
- ``batching``: fn evaluated at many perturbed copies of its inputs in one call.
- ``blocks``: the default mode's random-sign directions over blocks that cover every element.
- ``evaluation``: finite differences for many perturbations, a chunk at a time, on worker threads.
- ``detector``: a large default check's first look, along two dense directions.
- ``measure``: every value estimated and judged (``Measured``), then the element a failing direction points at.
- ``terminal_progress``: the local API's one-line progress on a terminal.
"""
