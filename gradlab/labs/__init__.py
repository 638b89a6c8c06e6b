"""The labs' engines, one package each: :mod:`~gradlab.labs.roundoff` (two formulas against the
exact value), :mod:`~gradlab.labs.network` (a network's input gradient), :mod:`~gradlab.labs.backward`
(what ``backward(v)`` computes), :mod:`~gradlab.labs.grid` (one difference on a dtype's grid) and
:mod:`~gradlab.labs.summed` (a loss summed five ways). The Explorer's sweep is :mod:`gradlab.sweep`,
the Grad check's engine :mod:`gradlab.check`."""
