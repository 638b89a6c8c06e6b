"""Further properties beside the first-order check: other derivatives, another test, the error-vs-eps values.

- ``forward_mode``: forward-mode AD (Jacobian-vector products) against finite differences.
- ``second_order``: the gradient's own gradient against finite differences of the gradient.
- ``taylor``: the Taylor-remainder test, a verdict that needs no step and no tolerance.
- ``estimates``: autograd and finite-difference values at chosen elements and steps.
"""
