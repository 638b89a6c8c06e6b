"""Every private Plotly or CPython internal the engine relies on, one small function each.

Nothing else in ``gradlab/`` reaches past a library's public API: a module that
needs one of these imports the function from here. Each docstring says which
internal it uses, why no public API does the job, and what breaks if an upgrade
changes it; ``tests/test_compat.py`` checks every one against the installed
libraries and fails with a message naming the internal. The Streamlit internals
(which only the UI may import) are in :mod:`gradlab.ui.compat`.

>>> fig = unvalidated_figure([{"type": "scatter", "y": [1, 2]}], {})
>>> fig.data[0].y
(1, 2)
"""

from __future__ import annotations

import ctypes
import io
import logging
import os
from multiprocessing import context as mp_context
from multiprocessing import forkserver, popen_forkserver, reduction, spawn
from multiprocessing import util as mp_util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["unvalidated_figure", "encode_typed_arrays", "raise_in_thread", "forkserver_process_class",
           "torch_functions_unmodified", "module_tensors_swapped"]

_LOG = logging.getLogger("gradlab.compat")

# Plotly is imported inside the functions: the time limit (gradlab.server.deadline) uses
# this module too, and the CLI's sweep should not pay for importing Plotly.


def unvalidated_figure(data: list[dict], layout: dict) -> "go.Figure":
    """``go.Figure(data=..., layout=...)`` built without validating a single property.

    Internal: the ``_validate=False`` keyword of ``plotly.basedatatypes.BaseFigure``
    (undocumented; Plotly 7). Why: validation costs 20-100 ms per small figure,
    a quarter of the server's time on the teaching pages under a class's load;
    Plotly has no public switch (``skip_invalid`` still validates). If it goes:
    the constructor raises TypeError on the unknown keyword, every figure fails
    to build and tests/test_compat.py names the keyword.
    """
    import plotly.graph_objects as go

    return go.Figure(data=data, layout=layout, _validate=False)


def encode_typed_arrays(figure: dict) -> None:
    """Rewrite the numeric arrays of a figure dict, in place, as Plotly's base64 typed arrays.

    Internal: ``_plotly_utils.utils.convert_to_base64``, the step
    ``go.Figure.to_dict()`` ends with (Plotly 7), done here with its own three
    helpers (``is_skipped_key``, ``is_homogeneous_array``, ``to_typed_array_spec``)
    in its order, skipping the plain numbers and strings it would test one by one.
    Why: a FigureSpec's dict is sent without building a ``go.Figure`` (see
    :mod:`gradlab.figures.spec`), and must match what ``to_dict()`` gives; there
    is no public function for the encoding alone. If they go: the arrays are left
    as they are, which Plotly's JSON encoder still writes correctly (as longer
    lists of numbers), a warning is logged, and tests/test_compat.py fails naming
    the function, or that the walk does not give convert_to_base64's result.

    >>> import numpy as np
    >>> fig = {"data": [{"type": "scatter", "y": np.arange(3.0)}]}
    >>> encode_typed_arrays(fig)
    >>> sorted(fig["data"][0]["y"])
    ['bdata', 'dtype']
    """
    try:
        from _plotly_utils.utils import convert_to_base64, is_homogeneous_array, is_skipped_key, to_typed_array_spec
    except ImportError:
        _LOG.warning("Plotly moved _plotly_utils.utils.convert_to_base64; figures are sent as plain lists")
        return
    del convert_to_base64  # what _encode does, in its order, with the same three helpers
    import numpy as np

    skipped: dict[str, bool] = {}  # is_skipped_key per key, asked once per figure

    def _encode(obj) -> None:
        # convert_to_base64 asks is_homogeneous_array of every number in every list (two module
        # look-ups each): 7 ms on the Explorer's chart of 12 curves and 51 slider frames. A plain
        # number or string is never an array, so only containers and other objects are asked.
        if isinstance(obj, dict):
            for key, value in obj.items():
                if value is None or type(value) in _PLAIN:
                    continue
                skip = skipped.get(key)
                if skip is None:
                    skip = skipped[key] = is_skipped_key(key)
                if skip:
                    continue
                if isinstance(value, (dict, list, tuple)):
                    _encode(value)
                elif type(value) is np.ndarray and value.size and value.dtype.char in _FLOAT_CODES and value.dtype.isnative:
                    obj[key] = _float_spec(value)
                elif is_homogeneous_array(value):
                    obj[key] = to_typed_array_spec(value)
        else:
            for value in obj:
                if isinstance(value, (dict, list, tuple)):
                    _encode(value)

    _encode(figure)


#: Values convert_to_base64 leaves as they are (no array interface, nothing inside).
_PLAIN = frozenset({float, int, str, bool})
#: Plotly.js's names of the float dtypes (``_plotly_utils.utils.plotlyjsShortTypes``), native byte order,
#: by their numpy character code (``dtype.name`` is written by Python code: 5 us an array).
_FLOAT_CODES = {"d": "f8", "f": "f4"}


def _float_spec(values) -> dict:
    """A float array of native byte order as ``to_typed_array_spec`` writes it, without the read-only
    copy it makes first and its look at whether the array is a data frame (narwhals): most of a
    chart's arrays are these, and that look costs 0.07 ms each."""
    import base64

    import numpy as np

    spec = {"dtype": _FLOAT_CODES[values.dtype.char],
            "bdata": base64.b64encode(np.ascontiguousarray(values)).decode("ascii")}
    if values.ndim > 1:
        spec["shape"] = str(values.shape)[1:-1]
    return spec


def raise_in_thread(thread_id: int, exc_type: type[BaseException]) -> bool:
    """Raise ``exc_type`` in the thread ``thread_id`` at its next bytecode; True if the thread exists.

    Internal: CPython's C function ``PyThreadState_SetAsyncExc`` through
    ``ctypes.pythonapi`` (in the C API, not in Python's). Why: a watchdog must
    stop sympy or mpmath work that never looks at a clock, in the thread of the
    session that asked for it; Python offers no way to interrupt another thread.
    Never call it with ``exc_type=None`` (withdrawing an exception), see
    :class:`gradlab.server.deadline._Watchdog`. If it goes (another Python
    implementation, a changed signature): time limits do not stop runaway
    work, and tests/test_compat.py and tests/test_limits.py fail naming it.
    """
    changed = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc_type))
    return changed == 1



class _ForkServerPopen(popen_forkserver.Popen):
    """``popen_forkserver.Popen`` whose child is not told to re-import the parent's ``__main__``."""

    def _launch(self, process_obj):
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_path", None)
        prep_data.pop("init_main_from_name", None)
        buf = io.BytesIO()
        mp_context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            mp_context.set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        _parent_w = os.dup(w)  # the child's sentinel of its parent, as in CPython
        self.finalizer = mp_util.Finalize(self, mp_util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class ForkServerProcess(mp_context.ForkServerProcess):
    """A forkserver Process whose child does not re-run ``__main__`` (see :func:`forkserver_process_class`)."""

    @staticmethod
    def _Popen(process_obj):
        return _ForkServerPopen(process_obj)


def forkserver_process_class() -> type:
    """A ``multiprocessing`` forkserver Process class whose children do not re-run ``__main__``.

    Internal: ``multiprocessing.popen_forkserver.Popen._launch`` (CPython 3.11),
    reproduced with the parent's main module left out of the preparation data
    (``init_main_from_path``/``init_main_from_name``, from
    ``multiprocessing.spawn.get_preparation_data``). Why: a child started by
    forkserver or spawn re-imports the parent's ``__main__`` by path, and under
    Streamlit ``__main__`` is the page script being run (Streamlit installs it
    there), so every worker would run the app, or crash when the script was a
    temporary file (AppTest); there is no public switch. The workers need
    nothing from ``__main__``: they run top-level functions of ``gradlab``.
    If it goes: workers fail to start; tests/test_compat.py fails naming it.
    """
    return ForkServerProcess


def torch_functions_unmodified():
    """A context in which torch functions run as torch defines them, ignoring any active
    ``TorchFunctionMode`` (the 8-bit emulation's rounding mode, :mod:`gradlab.numerics.emulation`).

    Internal: ``torch._C.DisableTorchFunction``. A mode sees every torch call made while it
    is active, including the few the emulation itself needs to round a value correctly (a
    cast, ``nextafter``, bit operations on a view); torch has no public way to step outside
    a mode for a block of code. If an upgrade removes it, the emulation's own steps would be
    rounded to the 8-bit format too: ``tests/test_compat.py`` and the emulation tests fail.

    >>> import torch
    >>> with torch_functions_unmodified():
    ...     float(torch.tensor(1.5) * 2)
    3.0
    """
    import torch

    return torch._C.DisableTorchFunction()


def module_tensors_swapped(module, tensors: dict, tie_weights: bool = True):
    """A context manager in which ``module``'s parameters named in ``tensors`` are those tensors
    (tied weights alike, as :func:`torch.func.functional_call` ties them, unless ``tie_weights``
    is False: the caller knows the module has none), restored after; None when torch lacks
    the internal.

    Internal: ``torch.nn.utils.stateless._reparametrize_module`` (torch 2.13), the swap that
    ``functional_call`` enters and leaves around every call. Why: a gradient check evaluates a
    module at dozens of perturbed parameter sets; ``functional_call`` swaps the tensors in and
    out for each (20-35 us a call, as much as a small module's forward), while one swap for the
    whole loop, each set copied into the swapped-in tensors, costs one copy per parameter. No
    public API swaps once for many calls. If it goes: None, and every call goes through
    ``functional_call`` again (slower, same values); tests/test_compat.py names the internal.

    >>> import torch
    >>> lin = torch.nn.Linear(1, 1)
    >>> with module_tensors_swapped(lin, {"weight": torch.full((1, 1), 2.0), "bias": torch.zeros(1)}):
    ...     float(lin(torch.ones(1)))
    2.0
    """
    try:
        from torch.nn.utils.stateless import _reparametrize_module
    except ImportError:
        _LOG.warning("torch moved torch.nn.utils.stateless._reparametrize_module; modules are called "
                     "through functional_call for every perturbed point")
        return None
    return _reparametrize_module(module, tensors, tie_weights=tie_weights)
