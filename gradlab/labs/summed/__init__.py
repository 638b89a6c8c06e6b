"""The Summed-loss lab: a float32 loss summed five ways against its exact sum, and what a check of it prints.

Its modules: :mod:`~gradlab.labs.summed.loss` (the loss's terms, each summation method's
result and error in ulps of the exact sum) and :mod:`~gradlab.labs.summed.differences` (the
finite differences a grad check of it prints: multiples of ulp(L)/h). The page's answer
sentence is :mod:`gradlab.answers.summed`; its figures :mod:`gradlab.figures.summed`.
"""
