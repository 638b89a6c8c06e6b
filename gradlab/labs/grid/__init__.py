"""The Grid lab: one forward difference on a dtype's grid, and why (x+h) - x is not h.

Its modules: :mod:`~gradlab.labs.grid.representable` (the representable numbers around x,
x+h, f(x) and f(x+h), the step taken, the bits kept) and :mod:`~gradlab.labs.grid.story`
(what the page and ``python -m gradlab grid`` print of it, its answer sentence included).
Its figures are :mod:`gradlab.figures.grid`.
"""
