"""A package's front door whose names load when first read: ``__getattr__`` and ``__dir__`` from a
map of names to the modules that hold them.

A lab's package exports what its page needs, but importing one of its engine modules (the CLI does)
runs the package's ``__init__`` first: names looked up lazily keep that import from pulling in the
page's figures and Plotly. The map must be called ``_HOME`` in the package, where
``tests/test_import_graph.py`` follows it to the modules it names.

>>> import types
>>> package = types.ModuleType("demo")
>>> package.__getattr__, package.__dir__ = lazy_names("demo", {"sqrt": "math"}, vars(package))
>>> "sqrt" in vars(package), [n for n in package.__dir__() if not n.startswith("_")]
(False, ['sqrt'])
>>> package.sqrt(4.0), "sqrt" in vars(package)
(2.0, True)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping

__all__ = ["lazy_names"]


def lazy_names(package: str, homes: Mapping[str, str],
               names: MutableMapping[str, object]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose module namespace is ``names``: a name of
    ``homes`` is imported from its module when first read and kept in ``names`` (later reads skip
    the look-up); any other is an AttributeError."""

    def __getattr__(name: str) -> object:
        if name in homes:
            value = names[name] = getattr(importlib.import_module(homes[name]), name)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(names) | set(homes))

    return __getattr__, __dir__
