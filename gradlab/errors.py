"""The one exception family GradLab raises for misuse.

Every message is a full sentence that says what was wrong and, where it can,
how to fix it, so the pages and the CLI can show it as it is.

>>> try:
...     raise GradLabError("The step must be positive; got -1.")
... except ValueError as err:
...     print(err)
The step must be positive; got -1.
"""

from __future__ import annotations


class GradLabError(ValueError):
    """Misuse of GradLab: bad input, an unknown name, a limit exceeded."""


class LimitError(GradLabError):
    """A request is over one of the resource limits in :mod:`gradlab.limits`."""
