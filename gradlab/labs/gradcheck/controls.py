"""What the Grad check page's controls offer, and the one settings object their values make.

The page's switch (:data:`CHECKS`: a function, or a model layer by layer; its values are what the
URL carries, ``?check=...``, and the presets write), the function view's values ->
:func:`function_settings` (a :class:`~gradlab.check.CheckSettings`, which the engine validates),
and the layer view's -> :func:`layer_settings` (a validated
:class:`~gradlab.layers.settings.LayerCheckSettings`). The stack's "Add a layer" buttons write
:func:`layer_snippet` at its end (:func:`appended_layer`); every name and help of the stack comes
from :data:`gradlab.layers.vocabulary.LAYERS`.

>>> function_settings({"model": "affine", "shape": "4x5", "loss": "mse", "reduction": "sum",
...                    "dtype": "float32", "scheme": "forward", "eps": "1e-03", "mode": "sampled",
...                    "samples": 5, "seed": 0, "numeric64": False}).eps
0.001
>>> layer_settings("linear:4, tanh", "3x5", dtype="float64").input_shape
(3, 5)
>>> appended_layer("linear:4,", "attention"), appended_layer("", "tanh")
('linear:4, attention:2', 'tanh')
"""

from __future__ import annotations

from collections.abc import Mapping

from gradlab.check import CheckSettings, parse_shape
from gradlab.layers.settings import LayerCheckSettings
from gradlab.layers.vocabulary import LAYERS
from gradlab.limits import LIMITS

__all__ = ["FUNCTION", "MODEL", "CHECKS", "DEFAULT_STEP", "MODE_HELP", "DEFAULT_STACK", "DEFAULT_INPUT",
           "LAYER_VOCABULARY", "function_settings", "layer_settings", "layer_snippet", "appended_layer"]

#: The page's switch: what is checked (its values are what the URL carries: ``?check=...``).
FUNCTION, MODEL = "a function", "a model, layer by layer"
CHECKS = (FUNCTION, MODEL)

#: The step control's first option: the scheme's best step for the dtype.
DEFAULT_STEP = "default"

MODE_HELP = ("blocks: random directions over blocks of 8 elements that cover every element; sampled: "
             f"k random elements; full: every element (up to {LIMITS.full_check_elements:,}); "
             "directional: k random directions.")
DEFAULT_STACK = "linear:16, tanh, layernorm, swish, linear:8, linear:1"
DEFAULT_INPUT = "4x8"

#: A layer's size as the "Add a layer" buttons first write it (heads for attention: 2 divide most widths).
_FIRST_SIZE = {"attention": 2}
#: Every layer of the vocabulary and what it is, in one line (the stack's help).
LAYER_VOCABULARY = "; ".join(f"{name}: {layer.help}" for name, layer in LAYERS.items())


def function_settings(values: Mapping[str, object]) -> CheckSettings:
    """The function view's one frozen settings object from its controls' values (by widget key);
    the engine validates it (a GradLabError says what to fix)."""
    v = values
    return CheckSettings(
        model=v["model"], shape=parse_shape(v["shape"]), loss=v["loss"], reduction=v["reduction"],
        dtype=v["dtype"], scheme=v["scheme"],
        eps=None if v["eps"] == DEFAULT_STEP else float(v["eps"]),
        mode=v["mode"], samples=int(v["samples"]), seed=int(v["seed"]),
        numeric_float64=bool(v["numeric64"]), expression=v.get("expression", "sin(x)"),
        grad_outputs=v.get("grad_outputs", "ones"),
    )


def layer_settings(stack: str, shape: str, *, dtype: str = "float32", mode: str = "blocks", seed: int = 0,
                   calls: str = "first", loss: str = "none", reduction: str = "sum") -> LayerCheckSettings:
    """The layer view's one frozen settings object, validated: the stack, the input's shape as typed
    ("4x8") and the rest of its controls (a GradLabError says what to fix)."""
    return LayerCheckSettings(stack, parse_shape(shape), dtype, mode, int(seed), calls, loss, reduction).validated()


def layer_snippet(name: str) -> str:
    """How the "Add a layer" button of ``name`` writes it into the stack.

    >>> layer_snippet("linear"), layer_snippet("attention"), layer_snippet("tanh")
    ('linear:8', 'attention:2', 'tanh')
    """
    return f"{name}:{_FIRST_SIZE.get(name, 8)}" if LAYERS[name].needs_number else name


def appended_layer(stack: str, name: str) -> str:
    """``stack`` with the layer ``name`` at its end, as its "Add a layer" button writes it."""
    current = str(stack).strip().rstrip(",")
    return f"{current}, {layer_snippet(name)}" if current else layer_snippet(name)
