"""The Round-off lab: two formulas, equal in mathematics, compared in floating point against the exact value.

Its modules: :mod:`~gradlab.labs.roundoff.settings` (what to compare, on which inputs),
:mod:`~gradlab.labs.roundoff.formulas` (the formulas, parsed), :mod:`~gradlab.labs.roundoff.reference`
(the exact values and errors in ulps), :mod:`~gradlab.labs.roundoff.comparisons` (the named
comparisons the presets use) and :mod:`~gradlab.labs.roundoff.engine` (``compare``: a comparison
run, its table and summary). The page's answer sentence is :mod:`gradlab.answers.roundoff`; its
figures :mod:`gradlab.figures.roundoff`.
"""
