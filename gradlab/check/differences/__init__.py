"""Finite differences and their error bounds: what a difference estimates, and how far off it can be.

- ``stencil``: finite-difference estimates of a batch of perturbations, and their round-off scales.
- ``noise``: fn's rounding noise along a perturbation, measured from a difference table.
- ``error_bounds``: a difference's error bound, round-off plus Richardson-estimated truncation.
- ``step_search``: values re-estimated at other steps: the per-value step search, the share at h/2.
- ``kinks``: where the one-sided differences disagree beyond their bounds.
- ``extrapolation``: Richardson extrapolation on a ladder of steps (the detector's differences).
- ``halving``: a failing block direction narrowed to its wrong elements by halving.
"""
