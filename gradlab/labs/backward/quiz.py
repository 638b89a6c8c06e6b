"""The Backward page's "predict, then look": after ``y.backward(v, retain_graph=True)`` and then
``y.backward(v)``, what is a.grad?

Its choices and its reveal are read off the lab's own numbers: one backward's a.grad over v (the
Jacobian's diagonal, 3), the multiple of it two backwards leave (the steps replayed on fresh
tensors: 2), and whether a third backward is refused because the second freed the graph.

>>> from gradlab.labs.backward.engine import VJPSettings, vector_jacobian
>>> table = prediction(vector_jacobian(VJPSettings()))
>>> list(table.index), list(table["right"])
(['3v', '6v', 'an error'], [False, True, False])
>>> print(table.loc["6v", "reveal"])  # doctest: +NORMALIZE_WHITESPACE
Right: 6v. .grad adds every backward's result to what is there; the first call kept the graph, so the
second may run. A third would fail. Try it in section 2.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gradlab.labs.backward.answer import grad_multiple
from gradlab.labs.backward.engine import BackwardSession, VJPResult

__all__ = ["BACKWARD_QUESTION", "ASKED_STEPS", "prediction"]

BACKWARD_QUESTION = ("**Predict, then look:** after `y.backward(v, retain_graph=True)` and then `y.backward(v)`, "
                     "what is a.grad?")
#: The steps the question asks about, then one more backward (does a third fail?): section 2's codes.
ASKED_STEPS = ("br", "b", "b")
#: The choice that names a refused call.
ERROR = "an error"


def prediction(result: VJPResult) -> pd.DataFrame:
    """The question's choices for ``result``'s tensors and v, one row each (the choice is the index):
    one backward's a.grad, what the two asked about leave, and an error; whether each is ``right``
    and the ``reveal`` shown once it is picked."""
    records = BackwardSession(result.settings, ASKED_STEPS).replay()
    derivative = float(result.jacobians["a"][0, 0])  # ∂yᵢ/∂aᵢ: the same on the whole diagonal
    one = np.asarray(result.grads["a"], dtype=float)
    two = records[1]
    if two.ok:
        # how many backwards' vᵀJ a.grad holds (v = 0 leaves none to count: the backwards that ran)
        k = grad_multiple(np.asarray(two.grads["a"], dtype=float), one) or sum(r.ok for r in records[:2])
        answer = f"{k * derivative:g}v"
    else:
        answer = ERROR
    asked = len(ASKED_STEPS) - 1  # the backwards the question runs
    choices = [f"{derivative:g}v", f"{asked * derivative:g}v", ERROR]  # one backward's, each one's added, none
    third = " A third would fail." if records[2].freed_graph else ""
    why = (f"{answer}. .grad adds every backward's result to what is there; the first call kept the graph, so "
           f"the second may run.{third} Try it in section 2.")
    return pd.DataFrame({"right": [c == answer for c in choices],
                         "reveal": [("Right: " if c == answer else "Not quite: ") + why for c in choices]},
                        index=choices)
