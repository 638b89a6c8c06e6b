"""Numerics: the dtype table, finite-difference schemes, the expression language, exact values and ulps."""
