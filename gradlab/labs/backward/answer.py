"""The Backward page's answer: what does the gradient argument of backward() do? One plain sentence.

Built from the engine's structured results (fields, never prose), in words a second-year student
knows, as an :class:`~gradlab.view.Answer`: :func:`backward_answer` for one ``y.backward(v)``,
:func:`steps_answer` once section 2's steps ran (what they leave in ``.grad``).
"""

from __future__ import annotations

import numpy as np

from gradlab.view import Answer

__all__ = ["backward_answer", "steps_answer", "grad_multiple", "ANSWER_ENTRIES"]

#: Entries of a vector written out in the sentence; longer ones end in "…".
ANSWER_ENTRIES = 4


def _vector(values) -> str:
    shown = ", ".join(f"{v:.4g}" for v in values[:ANSWER_ENTRIES])
    return f"[{shown}{', …' if len(values) > ANSWER_ENTRIES else ''}]"


def backward_answer(result) -> Answer:
    """The Backward page's answer, from a :class:`~gradlab.labs.backward.engine.VJPResult`.

    >>> from gradlab.labs.backward.engine import VJPSettings, vector_jacobian
    >>> print(backward_answer(vector_jacobian(VJPSettings())).text)  # doctest: +NORMALIZE_WHITESPACE
    y.backward(v) weights each output's derivative by v: .grad = vᵢ × ∂yᵢ/∂inputᵢ, so
    a.grad = [0.3, 3, 0.0003], b.grad = [1.2, 16, 0.002], c.grad = [0.01667, 0.1429, 1.25e-05].
    """
    grads = ", ".join(f"{name}.grad = {_vector(values)}" for name, values in result.grads.items())
    text = f"y.backward(v) weights each output's derivative by v: .grad = vᵢ × ∂yᵢ/∂inputᵢ, so {grads}."
    return Answer("success" if result.backward_equals_weighted_sum else "warning", text)


def steps_answer(result, records) -> Answer:
    """The Backward page's answer once steps were run (section 2's ``records``, StepRecords): what
    they leave in a.grad, as a multiple of one backward's, and the first step PyTorch refused.

    >>> from gradlab.labs.backward.engine import BackwardSession, VJPSettings, vector_jacobian
    >>> records = BackwardSession.from_text("br,b,b").replay()
    >>> print(steps_answer(vector_jacobian(VJPSettings()), records).text)  # doctest: +NORMALIZE_WHITESPACE
    After the 3 steps of section 2, a.grad = [0.6, 6, 0.0006], 2 × one backward's: each adds its vᵀJ.
    Step 3 is refused: the backward before it freed the graph (no retain_graph=True).
    """
    one = np.asarray(result.grads["a"], dtype=float)
    last = records[-1].grads.get("a")
    if last is None:
        held = "a.grad is None (zeroed, or no backward ran)"
    else:
        held = f"a.grad = {_vector(last)}"
        k = grad_multiple(np.asarray(last, dtype=float), one)
        if k is not None and k != 1:
            held += f", {k:g} × one backward's: each adds its vᵀJ"
        elif k == 1:
            held += ", one backward's vᵀJ"
    text = f"After the {len(records)} step{'s' if len(records) != 1 else ''} of section 2, {held}."
    refused = next(((n, r) for n, r in enumerate(records, start=1) if not r.ok), None)
    if refused is not None:
        n, r = refused
        why = ("the backward before it freed the graph (no retain_graph=True)"
               if r.freed_graph else "PyTorch's message is in section 2")
        text += f" Step {n} is refused: {why}."
    return Answer("warning" if refused is not None else "success", text)


def grad_multiple(values: np.ndarray, one: np.ndarray) -> float | None:
    """The whole number k with values = k·one (to rounding), else None: how many backwards' vᵀJ a
    .grad holds.

    >>> grad_multiple(np.array([0.6, 6.0]), np.array([0.3, 3.0])), grad_multiple(np.array([1.0]), np.array([0.3]))
    (2.0, None)
    """
    if not one.size or not np.all(np.isfinite(values)) or not np.any(one):
        return None
    k = round(float(values[np.argmax(np.abs(one))] / one[np.argmax(np.abs(one))]))
    return float(k) if np.allclose(values, k * one, rtol=1e-5, atol=0) else None
