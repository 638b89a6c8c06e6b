"""What a check is given, read and refused before any difference is taken: its options, fn's
arguments and outputs, the caller's state, and the elements a finite difference cannot move.

- ``validation``: the options of a check and the one place their values are validated.
- ``caller_state``: the modules and tensors fn holds, put back bit for bit after the check.
- ``arguments``: which of fn's arguments are checked, as real tensors, on copies.
- ``tensor_kinds``: sparse, meta and 8-bit tensors, refused in one sentence.
- ``outputs``: fn's outputs as one named real vector; parts without a gradient left out.
- ``output_weights``: the loss's weights v (``grad_outputs``): ``L = Σ_j v_j·y_j``.
- ``preconditions``: fn run twice (randomness, in-place changes) and a step the dtype can take.
- ``flat_inputs``: the checked inputs as one flat vector, its rows split back into fn's arguments.
- ``onehot_buffer``: the copies one-hot perturbations are written into, in place.
- ``skipped``: input elements holding ±inf or NaN: not perturbed, counted and named.
"""
