"""Every private Streamlit internal GradLab relies on, one small named piece each.

Nothing else in ``gradlab/`` or ``pages/`` reaches past Streamlit's public API:
the UI helpers import these functions instead. Each docstring says which
internal it uses, why no public API does the job (checked against Streamlit
1.67's documentation), and what breaks if an upgrade changes it;
``tests/test_compat.py`` checks each against the installed Streamlit and fails
with a message naming the internal. Plotly and CPython internals, which the
engine uses without Streamlit, are in :mod:`gradlab.compat`.
"""

from __future__ import annotations

import logging
from typing import Any

from plotly.basedatatypes import BaseFigure

__all__ = ["PreparedFigure", "leave_legacy_pages_mode", "forget_initial_query_param",
           "mark_session_nonresumable"]

_LOG = logging.getLogger("gradlab.ui")


def leave_legacy_pages_mode() -> bool:
    """Switch the server out of the ``pages/``-directory mode; True if it was in it (then rerun).

    Internal: the class attribute ``PagesManager.uses_pages_directory``
    (``streamlit.runtime.pages_manager``), which Streamlit sets to True at the
    first session when the entry point has a ``pages/`` folder beside it, and
    which the script runner reads to run a page script directly instead of
    ``app.py``. Why: the documented way out is that "as soon as any session
    executes st.navigation, the app ignores the pages/ directory" (st.navigation's
    API reference), but on a shared deep link (``/explorer?...``) as the first
    visit after a start, ``app.py`` (where st.navigation is) never runs: the page
    runs with no page config and a sidebar listing "app". The documented fix,
    renaming the folder, is ruled out: the product's layout requires ``pages/``.
    If it goes: the first deep link after a restart shows the page in the legacy
    layout (the attribute missing or renamed makes this a no-op, logged);
    tests/test_compat.py and tests/browser/test_deep_links.py fail.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:
        _LOG.warning("Streamlit moved PagesManager; a first deep link may run in the legacy pages/ mode")
        return False
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        return True
    return False


def forget_initial_query_param(key: str) -> None:
    """Stop Streamlit from seeding the widget ``key`` from the URL the page was opened with.

    Internal: ``QueryParams._initial_query_params``, reached through the script
    run context's session state. Streamlit 1.67 seeds a URL widget from the
    query parameters captured when the page loaded, not from ``st.query_params``,
    so deleting ``st.query_params[key]`` (public, done by the caller) does not
    stop the seeding. Why: an integer ``st.number_input`` seeded from ``?key=inf``
    raises OverflowError inside widget registration; there is no public way to
    reject a URL value before the widget reads it. If it goes: a URL such as
    ``/network?inputs=inf`` crashes that page again (a warning is logged);
    tests/test_compat.py and tests/test_fuzz.py fail naming the attribute.
    """
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    try:
        params = ctx.session_state._state.query_params  # noqa: SLF001 - see the docstring
        params._initial_query_params.pop(key, None)  # noqa: SLF001
    except AttributeError:
        _LOG.warning("Streamlit's query-parameter internals changed; ?%s may not be dropped", key)


def mark_session_nonresumable() -> bool:
    """Have Streamlit shut this session down when its tab disconnects; False outside a server.

    Internal: ``Runtime.instance().mark_session_nonresumable(session_id)``, with
    the session id from ``get_script_run_ctx()`` (``streamlit.runtime``). Why:
    Streamlit keeps a disconnected session for a reconnect and, when it evicts
    it, never shuts it down, so the media files and download callables it
    registered stay for the life of the process; a non-resumable session is shut
    down (all of it released) when its tab goes. No config option or public
    command does this (``server.disconnectedSessionTTL`` only delays the leak).
    If it goes: memory of closed tabs is not given back (the load test
    shows RSS growing); tests/test_compat.py fails naming the method.
    """
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not Runtime.exists():
        return False
    Runtime.instance().mark_session_nonresumable(ctx.session_id)
    return True


def connected_sessions() -> int | None:
    """How many sessions have a browser tab connected now; None outside a running server.

    Internal: ``Runtime.instance()._session_mgr.num_active_sessions()`` (Streamlit
    1.67 has no public count). Why: once nobody is connected, the housekeeper
    releases the caches (:func:`gradlab.ui.runtime.housekeeping`). If it goes: the
    caches stay after a class leaves (the load test's memory target shows it);
    tests/test_compat.py fails naming the method.
    """
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    manager = getattr(Runtime.instance(), "_session_mgr", None)  # absent under AppTest's mock runtime
    count = getattr(manager, "num_active_sessions", None)
    return count() if callable(count) else None


def session_id() -> str | None:
    """The id of the Streamlit session running this thread, or None outside a script run.

    Public: ``get_script_run_ctx()`` is exported by ``streamlit.runtime.scriptrunner``.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else ctx.session_id


def run_will_be_interrupted() -> bool:
    """Whether the script run on this thread has a stop, or a rerun that preempts it, pending.

    Internal: ``ScriptRunContext.script_requests`` (a ``ScriptRequests``), its
    ``_state`` and ``_rerun_data``, and ``_fragment_run_should_not_preempt_script``
    (``streamlit.runtime.scriptrunner_utils.script_requests``): the same test
    Streamlit applies at its next interrupt point. Why: a session waiting on a
    worker process reaches no interrupt point, so a visitor's new rerun would
    wait for the old heavy work; the pool ends that work as soon as this is
    true. If it goes: this answers False, heavy work runs to its limit before
    the rerun starts (slower, still limited); tests/test_compat.py fails naming it.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    from streamlit.runtime.scriptrunner_utils.script_requests import (
        ScriptRequestType,
        _fragment_run_should_not_preempt_script,
    )

    ctx = get_script_run_ctx(suppress_warning=True)
    requests = getattr(ctx, "script_requests", None)
    if requests is None:
        return False
    state = requests._state
    if state == ScriptRequestType.STOP:
        return True
    data = requests._rerun_data
    return state == ScriptRequestType.RERUN and not _fragment_run_should_not_preempt_script(
        data.fragment_id_queue, data.is_fragment_scoped_rerun)


class PreparedFigure(BaseFigure):
    """A figure reduced to the dict st.plotly_chart sends, computed once.

    Internal: a subclass of Plotly's ``BaseFigure`` that skips its ``__init__``,
    relying on how Streamlit 1.67's ``st.plotly_chart`` consumes a figure: for a
    ``BaseFigure`` it takes ``to_dict()`` without validating it again, then
    ``plotly.io.to_json(..., validate=False)`` encodes that dict as it is. Why: a
    plain dict is accepted too, but validated into a new ``go.Figure`` on every
    call (plotly.tools.return_figure_from_figure_or_data), and ``to_dict`` of a
    real figure deep-copies every trace and the template, twice per call: for a
    figure drawn on every rerun that costs as much as building it (Round-off
    scatter: 14 ms a rerun). This object answers ``to_dict`` with the dict made
    once; it is read-only and holds nothing else. If it goes (Streamlit checks
    the type differently, or validates figures): charts are validated again,
    slower but correct, or refused; tests/test_compat.py and
    tests/test_ui_state.py fail.

    >>> prepared = PreparedFigure({"data": [{"type": "scatter"}], "layout": {}})
    >>> prepared.to_dict()["data"][0]["type"], prepared.to_dict() is prepared.to_dict()
    ('scatter', True)
    """

    def __init__(self, spec: dict[str, Any]):  # noqa: D107 - no BaseFigure.__init__: no figure is built
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict[str, Any]:
        return self._spec

    def to_plotly_json(self) -> dict[str, Any]:
        return self._spec

    def __repr__(self) -> str:
        return f"PreparedFigure({len(self._spec.get('data', []))} traces)"
