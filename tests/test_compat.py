"""Every private internal GradLab uses, checked against the installed Streamlit, Plotly and CPython.

One test (or two) per function of gradlab/compat.py and gradlab/ui/compat.py. When an
upgrade removes or changes an internal, the test that fails names it, so the fix starts
in the compatibility module, not in a page that broke in some other way.
"""

from __future__ import annotations

import base64
import inspect
import threading
import time
from types import SimpleNamespace
from unittest.mock import MagicMock

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests
from streamlit.testing.v1 import AppTest

from gradlab.compat import encode_typed_arrays, raise_in_thread, unvalidated_figure
from gradlab.ui import compat as ui_compat


def _broken(internal: str, what: str) -> str:
    return f"{internal} changed: {what}. Update gradlab's compatibility module (see its docstring)."


# ------------------------------------------------------------------ Plotly


def test_plotly_builds_a_figure_without_validation():
    bad = [{"type": "scatter", "y": [1, 2], "mode": "nonsense"}]
    with pytest.raises(ValueError):
        go.Figure(data=bad)  # the control: validation refuses it
    try:
        fig = unvalidated_figure(bad, {"title": {"text": "t"}})
    except (TypeError, ValueError) as err:
        pytest.fail(_broken("go.Figure(..., _validate=False)", f"it raised {err!r}"))
    assert fig.data[0].y == (1, 2), _broken("go.Figure(..., _validate=False)", "the traces were not kept")
    assert fig.layout.title.text == "t"


def test_plotly_encodes_numeric_arrays_as_base64_typed_arrays():
    try:
        from _plotly_utils.utils import convert_to_base64  # noqa: F401
    except ImportError:
        pytest.fail(_broken("_plotly_utils.utils.convert_to_base64", "it cannot be imported"))
    y = np.array([0.5, -2.0, 1e300])
    fig = {"data": [{"type": "scatter", "y": y}], "layout": {}}
    encode_typed_arrays(fig)
    encoded = fig["data"][0]["y"]
    assert isinstance(encoded, dict) and set(encoded) >= {"bdata", "dtype"}, \
        _broken("_plotly_utils.utils.convert_to_base64", f"a float64 array became {encoded!r}")
    decoded = np.frombuffer(base64.b64decode(encoded["bdata"]), dtype=encoded["dtype"])
    assert decoded.tolist() == y.tolist()
    # ... and it is what go.Figure.to_dict() sends for the same array.
    assert go.Figure(go.Scatter(y=y)).to_dict()["data"][0]["y"] == encoded


# ------------------------------------------------------------------ CPython


class _Stop(BaseException):
    pass


def test_cpython_raises_an_exception_in_another_thread():
    caught, started = [], threading.Event()

    def spin():
        started.set()
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                pass
        except _Stop:
            caught.append(True)

    worker = threading.Thread(target=spin, daemon=True)
    worker.start()
    started.wait()
    assert raise_in_thread(worker.ident, _Stop), \
        _broken("ctypes.pythonapi.PyThreadState_SetAsyncExc", "it did not find a running thread")
    worker.join(5)
    assert caught == [True], _broken("ctypes.pythonapi.PyThreadState_SetAsyncExc",
                                     "the exception did not reach the thread")


def test_cpython_reports_a_thread_that_does_not_exist():
    ended = threading.Thread(target=lambda: None)
    ended.start()
    ended.join()
    assert raise_in_thread(ended.ident, _Stop) is False


# ------------------------------------------------------------------ Streamlit: the pages/ mode


def test_streamlit_pages_manager_flag_exists_and_is_read_by_the_script_runner():
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import script_runner

    internal = "streamlit.runtime.pages_manager.PagesManager.uses_pages_directory"
    assert "uses_pages_directory" in vars(PagesManager), _broken(internal, "the class attribute is gone")
    assert PagesManager.uses_pages_directory in (None, True, False), _broken(internal, "it is not a bool")
    source = inspect.getsource(script_runner)
    assert "PagesManager.uses_pages_directory" in source and "_mpa_v1" in source, \
        _broken(internal, "the script runner no longer chooses the legacy pages/ mode by it")


def test_leaving_the_legacy_pages_mode_clears_the_flag_once(monkeypatch):
    from streamlit.runtime.pages_manager import PagesManager

    monkeypatch.setattr(PagesManager, "uses_pages_directory", True)
    assert ui_compat.leave_legacy_pages_mode() is True
    assert PagesManager.uses_pages_directory is False
    assert ui_compat.leave_legacy_pages_mode() is False  # already out: no rerun wanted


# ------------------------------------------------------------------ Streamlit: URL seeding


def _seeded_number_script():
    import streamlit as st

    from gradlab.ui.compat import forget_initial_query_param

    if st.session_state.get("forget", True):
        forget_initial_query_param("n")
    st.number_input("n", key="n", value=3, bind="query-params")


@pytest.mark.parametrize("forget,expected", [(True, 3), (False, 7)])
def test_streamlit_seeds_a_url_widget_from_the_initial_query_params(forget, expected):
    from streamlit.runtime.state.query_params import QueryParams

    internal = "streamlit.runtime.state.query_params.QueryParams._initial_query_params"
    assert "_initial_query_params" in QueryParams.__dataclass_fields__, _broken(internal, "the field is gone")
    at = AppTest.from_function(_seeded_number_script)
    at.session_state["forget"] = forget
    at.query_params["n"] = "7"
    at.run()
    assert not at.exception
    # Without the call the URL's 7 is used (the control); with it, the widget's default 3.
    assert at.number_input(key="n").value == expected, _broken(internal, "forgetting ?n= did not stop the seeding")


# ------------------------------------------------------------------ Streamlit: sessions


def test_streamlit_runtime_can_mark_a_session_nonresumable():
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    internal = "streamlit.runtime.Runtime.mark_session_nonresumable"
    for name in ("exists", "instance", "mark_session_nonresumable"):
        assert callable(getattr(Runtime, name, None)), _broken(internal, f"Runtime.{name} is gone")
    assert "suppress_warning" in inspect.signature(get_script_run_ctx).parameters
    assert ui_compat.mark_session_nonresumable() is False  # no server in a unit test


def test_streamlit_shuts_down_a_nonresumable_session_when_it_disconnects():
    """The contract the release relies on: shut down (media files freed), not stored for reconnect."""
    from streamlit.runtime.memory_session_storage import MemorySessionStorage
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    storage = MemorySessionStorage()
    manager = WebsocketSessionManager(storage, MagicMock(), MagicMock(), None)
    session = MagicMock(id="tab-1")
    session.is_resumable.return_value = True
    manager._active_session_info_by_id["tab-1"] = MagicMock(session=session, script_run_count=1)
    manager.mark_session_nonresumable("tab-1")
    manager.disconnect_session("tab-1")
    assert session.shutdown.call_count == 1, \
        _broken("WebsocketSessionManager.mark_session_nonresumable", "a disconnected session was not shut down")
    assert storage.list() == []


def test_streamlit_counts_the_connected_sessions():
    """The count the housekeeper reads: a disconnected (shut down) session no longer counts."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.memory_session_storage import MemorySessionStorage
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    assert ui_compat.connected_sessions() is None  # no server in a unit test
    from unittest.mock import Mock, patch

    with patch.object(Runtime, "exists", return_value=True), \
            patch.object(Runtime, "instance", return_value=Mock(spec=[])):  # AppTest's stand-in
        assert ui_compat.connected_sessions() is None  # unknown, so the caches are kept
    internal = "Runtime._session_mgr.num_active_sessions"
    assert "_session_mgr" in inspect.getsource(Runtime.__init__), _broken(internal, "Runtime._session_mgr is gone")
    manager = WebsocketSessionManager(MemorySessionStorage(), MagicMock(), MagicMock(), None)
    session = MagicMock(id="tab-1")
    manager._active_session_info_by_id["tab-1"] = MagicMock(session=session, script_run_count=1)
    assert manager.num_active_sessions() == 1, _broken(internal, "a connected session is not counted")
    manager.mark_session_nonresumable("tab-1")
    manager.disconnect_session("tab-1")
    assert manager.num_active_sessions() == 0, _broken(internal, "a closed tab still counts")


# ------------------------------------------------------------------ Streamlit + Plotly: prepared figures


def test_plotly_passes_a_base_figure_dict_through_without_validating_it():
    import plotly.tools

    spec = {"data": [{"type": "scatter", "y": [1, 2], "bogus": 1, "mode": "nonsense"}], "layout": {}}
    out = plotly.tools.return_figure_from_figure_or_data(ui_compat.PreparedFigure(spec), validate_figure=True)
    assert out is spec, _broken("plotly.tools.return_figure_from_figure_or_data",
                                "a BaseFigure's to_dict() is no longer taken as it is")


def _prepared_chart_script():
    import streamlit as st

    from gradlab.ui.compat import PreparedFigure

    st.plotly_chart(PreparedFigure({"data": [{"type": "bar", "y": [1, 2], "bogus": 1}],
                                    "layout": {}}))


def test_streamlit_sends_a_prepared_figure_as_it_is():
    import json

    at = AppTest.from_function(_prepared_chart_script).run()
    assert not at.exception, _broken("st.plotly_chart of a BaseFigure", f"it raised {at.exception}")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["bogus"] == 1, \
        _broken("st.plotly_chart of a BaseFigure", "the figure's dict was validated or rebuilt")


def test_streamlit_encodes_a_chart_with_orjson(monkeypatch):
    """requirements.txt installs orjson so Plotly's "auto" JSON engine takes it: 10-16x faster than
    the json engine (which encodes, decodes and encodes again) on the Explorer's chart with its step
    frames, the largest share of a new view's server time."""
    import orjson

    calls = []
    real = orjson.dumps
    monkeypatch.setattr(orjson, "dumps", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = AppTest.from_function(_prepared_chart_script).run()
    assert not at.exception and calls, _broken("plotly.io.to_json's 'auto' engine",
                                               "st.plotly_chart no longer encodes with orjson")


def test_the_orjson_engine_encodes_what_the_json_engine_does():
    import json

    import plotly.io as pio

    y = np.array([1.5, np.nan, np.inf, -np.inf, 1e-300, 2.0 ** -149], dtype=np.float64)
    fig = go.Figure([go.Scatter(x=np.arange(6, dtype=np.float32) / 3, y=y, name="ε"),
                     go.Scatter(x=[1, 2], y=[float("nan"), 3.0], text=["<b>a</b>", None])])
    fig.update_layout(title="h* ≈ u^(1/3)", xaxis_type="log")
    fast, plain = (json.loads(pio.to_json(fig, validate=False, engine=e)) for e in ("orjson", "json"))
    assert fast == plain


# ------------------------------------------------------------------ Streamlit: pending reruns (gradlab.ui.worker_calls)


@pytest.mark.parametrize(("request_", "expected"), [
    (None, False),
    (lambda r: r.request_rerun(RerunData()), True),
    (lambda r: r.request_rerun(RerunData(fragment_id="f")), False),  # Streamlit lets the run finish
    (lambda r: r.request_rerun(RerunData(fragment_id="f", is_fragment_scoped_rerun=True)), True),
    (lambda r: r.request_stop(), True),
], ids=["none", "full rerun", "fragment rerun", "scoped fragment rerun", "stop"])
def test_streamlit_script_requests_say_when_a_run_will_be_interrupted(monkeypatch, request_, expected):
    import streamlit.runtime.scriptrunner as scriptrunner

    requests = ScriptRequests()
    if request_ is not None:
        request_(requests)
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx",
                        lambda suppress_warning=False: SimpleNamespace(script_requests=requests, session_id="s"))
    internal = "ScriptRequests._state/_rerun_data, _fragment_run_should_not_preempt_script"
    assert ui_compat.run_will_be_interrupted() is expected, _broken(internal, "a pending request was misread")
    assert ui_compat.session_id() == "s"


def test_no_script_run_means_no_interruption_and_no_session():
    assert ui_compat.run_will_be_interrupted() is False
    assert ui_compat.session_id() is None


# ------------------------------------------------------------------ CPython: forkserver children without __main__


def test_forkserver_children_do_not_rerun_the_parents_main(monkeypatch, tmp_path):
    """Under Streamlit, __main__ is the page script (here: a file that is gone): a worker must start anyway."""
    import multiprocessing
    import sys
    import types

    from gradlab.compat import forkserver_process_class

    page = types.ModuleType("__main__")
    page.__file__ = str(tmp_path / "deleted_page_script.py")
    monkeypatch.setitem(sys.modules, "__main__", page)
    multiprocessing.get_context("forkserver")  # the class uses the forkserver of this process
    process = forkserver_process_class()(target=int, daemon=True)
    process.start()
    process.join(60)
    internal = "multiprocessing.popen_forkserver.Popen._launch / spawn.get_preparation_data"
    assert process.exitcode == 0, _broken(internal, f"the child exited with {process.exitcode}")


# ------------------------------------------------------------------ torch: stepping outside a function mode


def test_torch_runs_functions_unmodified_inside_an_active_mode():
    import torch
    from torch.overrides import TorchFunctionMode

    from gradlab.compat import torch_functions_unmodified

    class Doubling(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 2 if func is torch.add else out

    with Doubling():
        moded = float(torch.add(torch.tensor(1.0), 1.0))
        with torch_functions_unmodified():
            plain = float(torch.add(torch.tensor(1.0), 1.0))
    internal = "torch._C.DisableTorchFunction"
    assert moded == 4.0, "the test's mode did not apply"
    assert plain == 2.0, _broken(internal, f"the mode still applied: {plain}")


# ------------------------------------------------------------------ torch: one parameter swap for many calls


def test_torch_swaps_a_modules_parameters_for_a_block_and_restores_them():
    import torch

    from gradlab.compat import module_tensors_swapped

    internal = "torch.nn.utils.stateless._reparametrize_module"
    lin = torch.nn.Linear(2, 1)
    lin.extra = lin.weight  # a tied weight: functional_call swaps every name of a tied tensor
    original = lin.weight.detach().clone()
    weight, bias = torch.tensor([[3.0, -1.0]]), torch.tensor([0.5])
    swap = module_tensors_swapped(lin, {"weight": weight, "bias": bias})
    assert swap is not None, _broken(internal, "it cannot be imported")
    with torch.no_grad(), swap:
        first = float(lin(torch.tensor([1.0, 1.0])))
        weight.copy_(torch.tensor([[2.0, 1.0]]))  # what the rows loop does: write the next point in
        second = float(lin(torch.tensor([1.0, 1.0])))
        tied = lin.extra
    assert (first, second) == (2.5, 3.5), _broken(internal, f"the swapped tensors were not used: {first}, {second}")
    assert tied is weight, _broken(internal, "a tied name kept the module's own tensor")
    assert isinstance(lin.weight, torch.nn.Parameter) and torch.equal(lin.weight, original), \
        _broken(internal, "the module's parameters were not restored")


def test_encode_typed_arrays_does_what_plotly_convert_to_base64_does():
    """The fast walk gives plotly's own result on every kind of value a figure holds: arrays at
    any depth, pandas columns, lists of numbers and of dicts, tuples, skipped keys, scalars."""
    import pandas as pd
    from _plotly_utils.utils import convert_to_base64

    def figure():
        return {"data": [{"type": "scatter", "x": np.arange(4.0), "y": [1.0, None, 2.0], "customdata": np.ones((3, 2)),
                          "marker": {"size": np.array([1, 2, 300], dtype=np.int64), "color": ["#fff", "#000"]},
                          "text": ("a", "b"), "meta": {"kind": "sweep", "n": np.float64(3.0)},
                          "selectedpoints": np.arange(6.0, dtype=np.float32)[::2], "ids": np.array([], float)}],
                "layout": {"xaxis": {"range": np.array([0.0, 1.0])}, "shapes": [{"x0": 1, "line": {"width": 2}}],
                           "geojson": {"c": np.zeros(2)}, "sliders": [{"steps": [{"args": [["a"], {"frame": {}}]}]}]},
                "frames": [{"name": "1", "data": [{"x": pd.Series([1.0, 2.0]), "y": pd.Index([3, 4])}]}]}

    theirs, ours = figure(), figure()
    convert_to_base64(theirs)
    encode_typed_arrays(ours)
    assert repr(ours) == repr(theirs)
    assert ours["data"][0]["x"]["bdata"] and ours["frames"][0]["data"][0]["x"]["bdata"]  # it did encode


# ------------------------------------------------------------------ uvicorn, as serve.py changes it

#: What serve.py does while uvicorn imports it (gradlab/server/headers.py, gradlab/server/edge.py).
_SERVE_LIKE = """
from gradlab.server.edge import keep_tcp_peer
from gradlab.server.headers import drop_server_header, uvicorn_config_loading

config = uvicorn_config_loading()
found = config is not None and drop_server_header(config) and keep_tcp_peer(config)


async def app(scope, receive, send):
    pass
"""


def test_uvicorn_loads_the_app_where_serve_py_turns_off_its_banner_and_forwarded_for(tmp_path, monkeypatch):
    """uvicorn imports the app inside Config.load(), after the banner joins its default headers and
    before it wraps the app to believe X-Forwarded-For: serve.py changes both from there."""
    import sys

    import uvicorn
    from streamlit.web import bootstrap
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    (tmp_path / "gradlab_probe_plain.py").write_text("async def app(scope, receive, send):\n    pass\n")
    (tmp_path / "gradlab_probe_serve.py").write_text(_SERVE_LIKE)
    monkeypatch.syspath_prepend(str(tmp_path))
    plain = uvicorn.Config("gradlab_probe_plain:app", lifespan="off", log_config=None)
    plain.load()
    # the control: what a plain app gets, and what serve.py turns off
    assert (b"server", b"uvicorn") in plain.encoded_headers and isinstance(plain.loaded_app, ProxyHeadersMiddleware)
    served = uvicorn.Config("gradlab_probe_serve:app", lifespan="off", log_config=None)
    served.load()
    internal = "uvicorn.Config.load"
    assert sys.modules["gradlab_probe_serve"].found, _broken(internal, "the app's module is not imported inside it")
    assert b"server" not in dict(served.encoded_headers), \
        _broken("uvicorn.Config.encoded_headers", "the banner is not (only) there, or is set after the import")
    assert not isinstance(served.loaded_app, ProxyHeadersMiddleware), \
        _broken("uvicorn.Config.proxy_headers", "it is read before the app's import")
    # and Streamlit hands uvicorn an import string (an app object would be imported before load())
    assert "UvicornRunner(app_import_string)" in inspect.getsource(bootstrap.run_asgi_app), \
        _broken("streamlit.web.bootstrap.run_asgi_app", "st.App scripts are no longer served by import string")
