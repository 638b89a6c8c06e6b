"""The Backward lab: what ``y.backward(gradient=v)`` computes.

Its modules: :mod:`~gradlab.labs.backward.engine` (vector-Jacobian products of the question's
example, accumulation of ``.grad``, ``retain_graph``, a session of backward calls),
:mod:`~gradlab.labs.backward.matrix_vjp` (a Jacobian that is not diagonal, ``z = W x``) and
:mod:`~gradlab.labs.backward.empty_example` (the question's ``torch.empty`` printout). The
page's answer sentence is :func:`gradlab.answers.labs.backward_answer`; its figures
:mod:`gradlab.figures.backward`.
"""
