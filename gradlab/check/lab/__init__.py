"""The Grad check page's and CLI's check: its settings, its built-in models, its reduction sweep.

- ``settings``: ``CheckSettings``, ``parse_shape`` and ``run_check``.
- ``builtin_models``: the built-in models and losses, and the loss function of x they make.
- ``reduction_sweep``: error against step under the three reductions side by side.
"""
