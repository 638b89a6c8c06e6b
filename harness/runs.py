"""What one script run produced, as a Streamlit client sees it, and the protocol's failures.

>>> RunResult(status="ok", seconds=0.2).ok, RunResult(status="timeout", seconds=60.0).ok
(True, False)
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

#: ``script_finished`` statuses that end what the user waits for.
TERMINAL = {
    ForwardMsg.FINISHED_SUCCESSFULLY: "ok",
    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY: "ok-fragment",
    ForwardMsg.FINISHED_WITH_COMPILE_ERROR: "compile-error",
}


class ProtocolError(RuntimeError):
    """The server did not speak the protocol as expected (closed, bad frame, unknown ref, timeout)."""


@dataclass
class RunResult:
    """What one rerun request produced, from the client's side."""

    status: str  # ok | ok-fragment | compile-error | timeout | closed | ...
    seconds: float
    messages: int = 0
    deltas: int = 0
    elements: Counter = field(default_factory=Counter)
    exceptions: list = field(default_factory=list)  # Exception protos
    error_alerts: list = field(default_factory=list)  # bodies of st.error
    page_not_found: bool = False
    protocol_error: str = ""
    forward_msgs: list = field(default_factory=list)  # only with keep_messages=True
    request: str = ""  # what was asked: the widget changed and the query string sent
    replica: str = ""  # the replica behind the load balancer that ran it ('' without one)

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "ok-fragment") and not self.protocol_error


def exception_text(exc: Any) -> str:
    """Everything an Exception element would show: type, message and stack trace.

    >>> from streamlit.proto.Exception_pb2 import Exception as ExceptionProto
    >>> exception_text(ExceptionProto(type="ValueError", message="bad x", stack_trace=["line 1"]))
    'ValueError\\nbad x\\nline 1'
    """
    return "\n".join([exc.type, exc.message, *exc.stack_trace])


def plain_text(alert: object) -> str:
    """An st.error's text on one line, without the Markdown escapes that keep it literal.

    >>> plain_text("x\\\\*\\\\*2 is\\ntoo long")
    'x**2 is too long'
    """
    return re.sub(r"\\(.)", r"\1", str(alert)).replace("\n", " ")
