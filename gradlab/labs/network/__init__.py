"""The Network lab: a network's input gradient, autograd against a quantised central difference.

Its modules: :mod:`~gradlab.labs.network.model` (the settings, the network and autograd's
gradient), :mod:`~gradlab.labs.network.arithmetic` (its forward pass with the same bits on every
CPU: fixed-order float64 sums rounded once) and :mod:`~gradlab.labs.network.engine` (the finite
difference, its quantum ulp(y)/(2·dx), and the error against the step). The page's answer
sentence is :func:`gradlab.answers.labs.network_answer`; its figures :mod:`gradlab.figures.network`.
"""
