"""What the Backward page prints of the lab's numbers: vectors as typed, the answer's table, each
step's .grad values, and the code of the question's ``torch.empty`` example with its printout.

>>> vector_text((0.1, 1.0, 0.0001)), typed_vector((0.1, 1 / 3))
('0.1, 1, 0.0001', '0.1, 0.3333333333333333')
>>> grads_line({"a": (0.6, 6.0), "b": None})
'`a.grad` = [0.6, 6] · `b.grad` = None'
"""

from __future__ import annotations

import pandas as pd

from gradlab.labs.backward.empty_example import EmptyDemo, EmptyExample

__all__ = ["vector_text", "typed_vector", "grads_table", "grads_line", "rebuilt_code", "empty_demo_code"]


def vector_text(values) -> str:
    """Numbers as a person types them, each to six digits: '0.1, 1, 0.0001'."""
    return ", ".join(f"{v:g}" for v in values)


def typed_vector(values) -> str:
    """Numbers as a person would type them, exactly (repr where six digits would round them)."""
    return ", ".join(f"{v:g}" if float(f"{v:g}") == v else repr(v) for v in values)


def grads_table(table: pd.DataFrame) -> pd.DataFrame:
    """The values behind the main chart, as text, .grad first (the answer's column stays on a phone's
    screen): one row per entry of a, b and c.

    >>> from gradlab.labs.backward.engine import VJPSettings, vector_jacobian
    >>> grads_table(vector_jacobian(VJPSettings()).table).iloc[4].tolist()
    ['b[1]', '16', '1', '16', '4']
    """
    return pd.DataFrame({
        "entry": [f"{k}[{i}]" for k, i in zip(table["input"], table["i"])],
        ".grad": [f"{g:.6g}" for g in table["grad"]],
        "vᵢ": [f"{v:g}" for v in table["v"]],
        "∂yᵢ/∂inputᵢ": [f"{j:.6g}" for j in table["jacobian"]],
        "input": [f"{x:g}" for x in table["value"]],
    })


def grads_line(grads) -> str:
    """The .grad values after one step, as Markdown: "`a.grad` = [0.3, 3, 0.0003] · ..."."""
    return " · ".join(f"`{k}.grad` = {('None' if g is None else '[' + vector_text(g) + ']')}"
                      for k, g in grads.items())


def rebuilt_code(example: EmptyExample) -> str:
    """The question's example as GradLab runs it, each print with what it printed."""
    return ("# The same in GradLab (PyTorch 2): b = c = 0, a = 1; y broadcast to the gradient's 3 entries\n"
            "y.expand(3).backward(gradients)\n"
            + "\n".join(f"print({k}.grad) # {example.printed[k]}" for k in ("a", "b", "c")))


def empty_demo_code(demo: EmptyDemo) -> tuple[str, ...]:
    """What torch.empty returned on each call, and torch.zeros, as lines of code with their values.

    >>> empty_demo_code(EmptyDemo(((1.0, 0.0),), (0.0, 0.0)))
    ('torch.empty(3)  # call 1: [1, 0]   (arbitrary)', 'torch.zeros(3)  # [0, 0]')
    """
    return (*(f"torch.empty(3)  # call {n}: [{vector_text(values)}]   (arbitrary)"
              for n, values in enumerate(demo.empty_calls, start=1)),
            f"torch.zeros(3)  # [{vector_text(demo.zeros)}]")
