"""The heavy engine calls of the pages not yet in a lab package, as top-level worker entries.

Each is the engine call a page makes, unchanged, plus the limit a page adds around it, marked
with :func:`gradlab.server.worker_entries.worker_entry` (a lab package marks its own entries the
same way): :data:`BOUNDS` says how long each may take as a whole
(:func:`gradlab.server.pool.run_bounded` kills the worker past it), and the sentence then names
the fields whose sum that is; ``limit_advice`` ends its over-the-limit sentences. They are plain
functions of plain values: the CLI and notebooks call the engine directly.

>>> BOUNDS[check][2], check.limit_advice == CHECK_ADVICE
('LIMITS.full_check_seconds + LIMITS.request_seconds', True)

A ``forecast`` says roughly how long a call will take from its arguments alone;
:func:`gradlab.ui.worker_calls.heavy` starts a call forecast over the pool's ``LONG_CALL_SECONDS``
in its long lane, so it never holds a worker kept for short calls (:mod:`gradlab.server.lanes`).

>>> from gradlab.check import CheckSettings
>>> check.forecast_seconds(CheckSettings(shape=(256, 256), mode="full")) > 1
True
"""

from __future__ import annotations

import math

from gradlab.limits import LIMITS, bounded
from gradlab.server.deadline import paced_progress
from gradlab.server.worker_entries import ENTRIES, worker_entry

__all__ = ["check", "check_eps_sweep", "layers", "BOUNDS",
           "CHECK_ADVICE", "LAYERS_ADVICE", "CLI_CHECK_ADVICE"]

CHECK_ADVICE = ("Pick mode 'sampled' or 'directional', fewer samples, or a smaller shape; on your own "
                "machine gradlab.gradcheck has no time bound.")
LAYERS_ADVICE = ("Pick fewer or narrower layers, a smaller input shape, or mode 'sampled'; on your own "
                 "machine gradlab.check_layers has no time bound.")
CLI_CHECK_ADVICE = ("Pick --mode sampled or directional, fewer --samples, or a smaller --shape; on your "
                    "own machine raise the bound (GRADLAB_LIMITS=full_check_seconds=600) or call "
                    "gradlab.gradcheck, which has none.")


#: One element of one perturbed evaluation in a check (one core: 3e-8 s for the affine model).
_CHECK_ELEMENT_SECONDS = 1e-8


def _check_rows(settings, numel: int) -> int:
    """Perturbed evaluations of fn a check's mode asks for (each of ``numel`` elements)."""
    import torch

    from gradlab.check import perturbation_count

    return perturbation_count(settings.mode, numel, settings.samples, getattr(torch, settings.dtype))[0]


def _check_forecast(settings, *_) -> float:
    numel = math.prod(settings.shape)
    return _check_rows(settings, numel) * numel * _CHECK_ELEMENT_SECONDS


@worker_entry("the check", "full_check_seconds", "request_seconds", advice=CHECK_ADVICE,
              forecast=_check_forecast)
def check(settings, workers: int | None = 1, progress=None, advice: str = CHECK_ADVICE):
    """A gradient check (:func:`gradlab.check.lab.settings.run_check`), stopped once its pace projects
    past ``LIMITS.full_check_seconds`` (every mode: a sampled check of 1,000 elements of a 1M-element
    complex-step expression would take minutes)."""
    from gradlab.check import run_check

    paced = paced_progress(LIMITS.full_check_seconds, f"this {settings.mode} check", progress,
                           bound_name="LIMITS.full_check_seconds", advice=advice)
    with bounded():  # the server's size bounds (gradlab.limits.size_bound)
        return run_check(settings, progress=paced, workers=workers)


@worker_entry("the layer-by-layer check", "full_check_seconds", "request_seconds", advice=LAYERS_ADVICE)
def layers(settings, progress=None):
    """The Grad check page's model, layer by layer (:func:`gradlab.layers.settings.run_layer_check`),
    stopped once its pace over the modules projects past ``LIMITS.full_check_seconds``."""
    from gradlab.layers.settings import run_layer_check

    paced = paced_progress(LIMITS.full_check_seconds, "this layer-by-layer check", progress,
                           bound_name="LIMITS.full_check_seconds", advice=LAYERS_ADVICE)
    with bounded():
        return run_layer_check(settings, progress=paced)


@worker_entry("the eps sweep", "request_seconds",
              advice="Pick a smaller shape, or a simpler model or expression.")
def check_eps_sweep(settings):
    """The Grad check page's eps sweep for sum, mean and none (:func:`gradlab.check.lab.reduction_sweep.check_sweep`)."""
    from gradlab.check import check_sweep

    with bounded():
        return check_sweep(settings)


#: Per function: (what the message calls it, the whole call's limit in seconds, the names of the
#: fields whose sum that limit is), for the functions of this module.
BOUNDS = {fn: (entry.what, entry.seconds, entry.limit_name) for fn, entry in ENTRIES.items()
          if fn.__module__ == __name__}
