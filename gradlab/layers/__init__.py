"""Find the layer: a model's modules checked one by one, so a wrong backward is named where it is.

Its modules, in the order a layer check runs:

- :mod:`~gradlab.layers.record`: one forward pass with hooks records each module's calls and
  the arguments it received (leaves, modules with parameters of their own or returning a custom
  autograd.Function's output, and modules with children whose own code does arithmetic
  between them, read from the autograd nodes each call creates);
- :mod:`~gradlab.layers.check`: :func:`check_layers`, a gradient check of each recorded call
  over the module's parameters and over its inputs, innermost first;
- :mod:`~gradlab.layers.result`: the rows, the verdict, the one-sentence answer naming the
  innermost failing module, the table;
- :mod:`~gradlab.layers.vocabulary`: models built from named layers (the CLI's and the page's
  stacks), with a deliberately wrong custom activation for teaching.

Its figure is :func:`gradlab.figures.layers.layers_figure`; its pytest helper is
:func:`gradlab.testing.assertions.assert_layers`.
"""

from __future__ import annotations

__all__ = ["check_layers", "LayersResult"]


def __getattr__(name: str):
    # Lazy: the package's vocabulary is imported by the CLI's argument parser before torch work.
    if name == "check_layers":
        from gradlab.layers.check import check_layers

        return check_layers
    if name == "LayersResult":
        from gradlab.layers.result import LayersResult

        return LayersResult
    raise AttributeError(f"module 'gradlab.layers' has no attribute {name!r}")
