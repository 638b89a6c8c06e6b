"""The labs, one package each, its page's whole feature: :mod:`~gradlab.labs.explorer` (the error
of finite differences against the step, calling the library's sweep :mod:`gradlab.step_sweep`),
:mod:`~gradlab.labs.roundoff` (two formulas against the exact value), :mod:`~gradlab.labs.network`
(a network's input gradient), :mod:`~gradlab.labs.backward` (what ``backward(v)`` computes),
:mod:`~gradlab.labs.grid` (one difference on a dtype's grid), :mod:`~gradlab.labs.summed` (a
loss summed five ways) and :mod:`~gradlab.labs.gradcheck` (a gradient check explained, of a function
or of a model layer by layer; its engine is the library's :mod:`gradlab.check` and
:mod:`gradlab.layers`)."""
