"""An IPython shell that passes for a Jupyter kernel, with one of Plotly's notebook renderers: what a
result's ``_ipython_display_`` sees in a notebook, its outputs captured."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import plotly.io as pio
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import CapturedIO, capture_output


@contextmanager
def notebook_kernel(renderer: str = "plotly_mimetype+notebook") -> Iterator[CapturedIO]:
    """Inside: a kernel's display formatters and Plotly's ``renderer``; yields the captured outputs."""
    start_ipython()
    shell = get_ipython()
    formatter = shell.display_formatter
    saved = formatter.active_types, pio.renderers.default
    formatter.active_types = formatter.format_types  # IPython's test shell keeps text/plain only
    shell.kernel = object()
    pio.renderers.default = renderer
    try:
        with capture_output() as shown:
            yield shown
    finally:
        formatter.active_types, pio.renderers.default = saved
        del shell.kernel
