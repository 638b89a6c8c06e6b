"""The Python lines that reproduce the layer view's check, as the page shows them.

They build the same vocabulary model from the same seed (:mod:`gradlab.layers.vocabulary`),
the same input, the loss as a last layer where there is one
(:func:`gradlab.layers.settings.with_loss`), and call the library's
:func:`gradlab.check_layers`: no part of the web lab.

>>> from gradlab.layers.settings import LayerCheckSettings
>>> print(python_call(LayerCheckSettings("linear:4, wrong_swish, linear:1", (3, 2), "float64")))
import torch, gradlab
from gradlab.layers.vocabulary import build_model
model = build_model('linear:4, wrong_swish, linear:1', (3, 2), 'float64', seed=0)
x = torch.randn(3, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64).to(torch.float64)
result = gradlab.check_layers(model, x, mode='blocks', seed=0, calls='first', reduction='sum')
print(result.answer)
result.table
"""

from __future__ import annotations

from gradlab.layers.settings import LayerCheckSettings
from gradlab.numerics.dtypes import facts

__all__ = ["python_call"]


def python_call(settings: LayerCheckSettings) -> str:
    """The Python lines that reproduce the check of ``settings`` (see the module docstring)."""
    s = settings
    shape = ", ".join(str(n) for n in s.input_shape)
    lines = ["import torch, gradlab",
             "from gradlab.layers.vocabulary import build_model",
             f"model = build_model({s.stack!r}, ({shape}{',' if len(s.input_shape) == 1 else ''}), "
             f"{s.dtype!r}, seed={s.seed})",
             f"x = torch.randn({shape}, generator=torch.Generator().manual_seed({s.seed + 1}), "
             f"dtype=torch.float64).to({facts(s.dtype).torch_dtype})"]
    if s.loss != "none":
        lines += ["from gradlab.layers.settings import LayerCheckSettings, with_loss",
                  f"model = with_loss(model, {s!r}, x)  # the loss as the last layer"]
    lines += [f"result = gradlab.check_layers(model, x, mode={s.mode!r}, seed={s.seed}, calls={s.calls!r}, "
              f"reduction={s.reduction!r})",
              "print(result.answer)",
              "result.table"]
    return "\n".join(lines)
