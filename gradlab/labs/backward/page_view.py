"""What the Backward page shows, one view per section, each a worker entry of its own settings.

- :func:`view` (section 1 and the first screen): ``y = 3a + 2b² + log(c)`` and ``y.backward(v)``
  on a :class:`~gradlab.labs.backward.engine.VJPSettings`: the answer, the main chart, the answer's
  table, the Jacobian blocks, the prediction, and section 4's printout of the question's
  ``torch.empty`` example (the same for every settings).
- :func:`steps_view` (section 2): the steps of a
  :class:`~gradlab.labs.backward.engine.BackwardSession` replayed on fresh tensors, .grad after
  each, and the answer once steps ran.
- :func:`matrix_view` (section 3): ``z = W x`` for a ready-made W
  (:class:`~gradlab.labs.backward.matrix_vjp.ExampleVJPSettings`), J and the rows v weights.

>>> v = view(VJPSettings())
>>> v.answer.level, sorted(v.charts)
('success', ['grad', 'jacobian a', 'jacobian b', 'jacobian c'])
>>> steps_view(BackwardSession.from_text("br,b")).tables["steps"]["grads"].iloc[1]
'`a.grad` = [0.6, 6, 0.0006] · `b.grad` = [2.4, 32, 0.004] · `c.grad` = [0.0333333, 0.285714, 2.5e-05]'
>>> matrix_view(ExampleVJPSettings()).answer.text.startswith("x.grad = [3, 4.5, 6]")
True
"""

from __future__ import annotations

import pandas as pd

from gradlab.labs.backward.answer import backward_answer, steps_answer
from gradlab.labs.backward.empty_example import EMPTY_NOTE, QUESTION_CODE, empty_example
from gradlab.labs.backward.engine import SEED_FUNCTION, BackwardSession, VJPSettings, vector_jacobian
from gradlab.labs.backward.figures import jacobian_heatmap, vjp_rows_figure, weighted_rows_figure
from gradlab.labs.backward.matrix_vjp import ExampleVJPSettings, example_vjp
from gradlab.labs.backward.printout import grads_line, grads_table, rebuilt_code, typed_vector, vector_text
from gradlab.labs.backward.quiz import BACKWARD_QUESTION, prediction
from gradlab.server.worker_entries import worker_entry
from gradlab.view import Answer, Chart, View

__all__ = ["view", "steps_view", "matrix_view"]


@worker_entry("the vector-Jacobian product", "request_seconds")
def view(settings: VJPSettings) -> View:
    """Section 1's view of ``settings`` (see the module docstring); its ``result`` is the
    :class:`~gradlab.labs.backward.engine.VJPResult`."""
    r = vector_jacobian(settings)
    texts = {"code": f"{SEED_FUNCTION}\ny.backward(v)   # v = torch.tensor([{typed_vector(r.settings.v)}])",
             "prediction": BACKWARD_QUESTION,
             "question code": QUESTION_CODE, "rebuilt code": rebuilt_code(empty_example()), "empty note": EMPTY_NOTE}
    if r.backward_equals_weighted_sum:
        texts["same"] = ("`y.backward(v)` and `(v * y).sum().backward()` give the same .grad, bit for bit: "
                         "v weights each output, as if y were part of a larger scalar loss with ∂loss/∂y = v.")
    return View(
        answer=backward_answer(r),
        charts={"grad": Chart(vjp_rows_figure, (r.table,)),
                **{f"jacobian {name}": Chart(jacobian_heatmap, (r.jacobians[name], f"∂y/∂{name}", "y", name))
                   for name in ("a", "b", "c")}},
        tables={"grads": grads_table(r.table), "prediction": prediction(r)},
        texts=texts,
        result=r,
    )


@worker_entry("the backward steps", "request_seconds")
def steps_view(session: BackwardSession) -> View:
    """Section 2's view of ``session``: one row per step (its PyTorch line, the .grad values after it
    as Markdown, or PyTorch's refusal), and the first screen's answer once steps ran; its ``result``
    is the steps' :class:`~gradlab.labs.backward.engine.StepRecord`\\ s."""
    records = session.replay()
    one = vector_jacobian(session.settings)
    steps = pd.DataFrame({"code": [r.code for r in records],
                          "grads": [grads_line(r.grads) if r.ok else "" for r in records],
                          "refusal": ["" if r.ok else r.message for r in records]})
    return View(answer=steps_answer(one, records) if records else backward_answer(one), tables={"steps": steps},
                result=records)


@worker_entry("the matrix example", "request_seconds")
def matrix_view(settings: ExampleVJPSettings) -> View:
    """Section 3's view of ``settings``: J = W as a heatmap, its rows weighted by v, and the sentence
    x.grad = Σᵢ vᵢ · (row i of J) with both sides' numbers; its ``result`` the
    :class:`~gradlab.labs.backward.matrix_vjp.MatrixVJP`."""
    r = example_vjp(settings)
    return View(
        answer=Answer("success", f"x.grad = [{vector_text(r.grad)}] = Σᵢ vᵢ · (row i of J) = [{vector_text(r.vjp)}]. "
                                 "A one-hot v picks out one row: the gradient of one output."),
        charts={"jacobian": Chart(jacobian_heatmap, (r.jacobian, "J = ∂z/∂x = W", "z", "x")),
                "weighted rows": Chart(weighted_rows_figure, (r.table, r.grad))},
        result=r,
    )
