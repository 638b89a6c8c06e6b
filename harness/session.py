"""A headless Streamlit client: drives a server over its own websocket protocol.

It behaves like one browser tab, minus the rendering, so a load test measures the
server and not a browser. Written against Streamlit 1.67 (starlette server); the
messages are the protobufs that ship inside the ``streamlit`` package.

The protocol, as the frontend speaks it:

* Connect to ``ws://host:port/_stcore/stream`` with the subprotocol ``streamlit``
  (the server also reads an XSRF token and a session id to resume from the 2nd
  and 3rd subprotocol entries; a fresh tab sends neither). Frames are binary:
  ``BackMsg`` from client to server, ``ForwardMsg`` from server to client.
* The first message a tab sends is ``BackMsg.rerun_script`` (a ``ClientState``)
  with ``query_string`` (the URL's, without ``?``), ``page_name`` set to the URL
  path (``"explorer"``; ``""`` for the default page), ``page_script_hash`` empty,
  no widget states, and ``context_info`` (timezone, locale, url, colour scheme).
* The server answers with ``new_session`` (the run has started; it carries the
  page's ``page_script_hash`` and config such as ``max_cached_message_age``),
  ``session_status_changed``, ``navigation``, ``page_info_changed`` (the query
  string the URL should now show), ``delta`` messages (elements and blocks), and
  finally ``script_finished``. A run that calls ``st.rerun()`` ends with
  ``FINISHED_EARLY_FOR_RERUN`` and is followed by another ``new_session``: the
  run a user waits for ends with ``FINISHED_SUCCESSFULLY``,
  ``FINISHED_FRAGMENT_RUN_SUCCESSFULLY`` or ``FINISHED_WITH_COMPILE_ERROR``.
* Each later interaction is another ``rerun_script`` with the page's
  ``page_script_hash`` (``page_name`` empty), the query string the server last
  reported, and the state of *every* widget on the page (``WidgetStates``), the
  changed one included; a widget inside an ``st.fragment`` also sets
  ``fragment_id`` so only the fragment reruns.
* Behind a load balancer with sticky sessions (``deploy/haproxy.cfg``) a tab
  belongs to a browser: give the tabs of one browser one ``cookies`` dict. A
  browser first loads the page's HTML (:meth:`StreamlitSession.load_page`),
  which is where HAProxy sets its affinity cookie, then opens the websocket
  with the cookie; ``replica`` is the ``X-GradLab-Replica`` header the load
  balancer put on the handshake's answer (empty without one).
* Cacheable messages are kept and named back by hash (:mod:`harness.message_cache`).
  Nothing has to be acknowledged; ``app_heartbeat`` is only sent when an embedding host
  asks for it, and websocket pings are answered by the ``websockets`` library.

Only the standard library, ``websockets`` and the Streamlit protobufs are used. What a run
produced is :mod:`harness.runs`, the widgets' values :mod:`harness.widgets`, the page load and
its cookies :mod:`harness.page_load`.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import websockets
from websockets.asyncio.client import connect

from harness.message_cache import MessageCache
from harness.page_load import REPLICA_HEADER, cookie_header, get_page, remember_cookies
from harness.runs import TERMINAL, ProtocolError, RunResult
from harness.widgets import WIDGET_TYPES, Widget, changed_state, initial_state, url_values, with_param
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

STREAM_PATH = "/_stcore/stream"
SUBPROTOCOL = "streamlit"


def _context_info(msg: BackMsg, url: str) -> None:
    ci = msg.rerun_script.context_info
    ci.timezone = "Europe/London"
    ci.timezone_offset = 0
    ci.locale = "en-GB"
    ci.url = url
    ci.is_embedded = False
    ci.color_scheme = "light"



class StreamlitSession:
    """One browser tab's conversation with a Streamlit server.

    >>> async with StreamlitSession("http://127.0.0.1:8501") as tab:   # doctest: +SKIP
    ...     first = await tab.open("explorer", "dtypes=float32")
    ...     second = await tab.change_widget(random.Random(0))
    """

    def __init__(self, base_url: str, *, use_message_cache: bool = True,
                 run_timeout: float = 60.0, keep_messages: bool = False,
                 cookies: dict[str, str] | None = None, source: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.cookies = cookies  # the browser's, shared by its tabs (None: no cookies kept)
        self.source = source  # the local address this tab connects from (127.0.0.2: another client)
        self.replica = ""
        self.ws_url = self.base_url.replace("http", "ws", 1) + STREAM_PATH
        self.run_timeout = run_timeout
        self.keep_messages = keep_messages
        self._ws: Any = None
        self._inbox: asyncio.Queue = asyncio.Queue()
        self._reader: asyncio.Task | None = None
        # state the frontend keeps
        self.session_id = ""
        self.page_name = ""
        self.page_script_hash = ""
        self.query_string = ""
        self.widgets: dict[str, Widget] = {}
        self.widget_states: dict[str, WidgetState] = {}
        self._seen_this_run: set[str] = set()
        self.cache = MessageCache(use_message_cache)

    # -- connection
    async def __aenter__(self) -> StreamlitSession:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self, timeout: float = 10.0) -> None:
        cookie = cookie_header(self.cookies)
        try:
            self._ws = await connect(
                self.ws_url, subprotocols=[SUBPROTOCOL], max_size=None,
                open_timeout=timeout, compression=None, proxy=None,
                origin=self.base_url, additional_headers={"Cookie": cookie} if cookie else None,
                **({"local_addr": (self.source, 0)} if self.source else {}),
            )
        except (OSError, websockets.WebSocketException, asyncio.TimeoutError) as exc:
            raise ProtocolError(f"cannot connect to {self.ws_url}: {exc!r}") from exc
        headers = self._ws.response.headers
        remember_cookies(self.cookies, headers.get_all("Set-Cookie"))
        self.replica = headers.get(REPLICA_HEADER, "")
        self._reader = asyncio.create_task(self._read_loop())

    async def load_page(self, page_name: str = "", query_string: str = "", timeout: float = 10.0) -> str:
        """GET the page's HTML as a browser does before it opens the websocket; the replica that answered.

        Keeps the cookies the answer sets (the load balancer's affinity cookie).
        """
        url = f"{self.base_url}/{page_name}" + (f"?{query_string}" if query_string else "")
        try:
            set_cookies, replica = await asyncio.to_thread(get_page, url, self.cookies, self.source, timeout)
        except OSError as exc:
            raise ProtocolError(f"cannot load {url}: {exc!r}") from exc
        remember_cookies(self.cookies, set_cookies)
        return replica

    async def clear_caches(self) -> None:
        """Ask the server to clear st.cache_data and st.cache_resource, as the app menu's
        "Clear cache" does (the server clears them for every session)."""
        back = BackMsg()
        back.clear_cache = True
        await self._ws.send(back.SerializeToString())

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        self._ws = self._reader = None

    async def _read_loop(self) -> None:
        try:
            async for frame in self._ws:
                if isinstance(frame, str):
                    await self._inbox.put(ProtocolError("text frame from server"))
                    return
                msg = ForwardMsg()
                try:
                    msg.ParseFromString(frame)
                except Exception as exc:  # noqa: BLE001
                    await self._inbox.put(ProtocolError(f"undecodable ForwardMsg: {exc!r}"))
                    return
                await self._inbox.put(msg)
            await self._inbox.put(ProtocolError("server closed the websocket"))
        except websockets.ConnectionClosed as exc:
            await self._inbox.put(ProtocolError(f"websocket closed: {exc!r}"))

    # -- one message
    def _apply(self, msg: ForwardMsg, result: RunResult | None) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            ns = msg.new_session
            if ns.initialize.session_id:
                self.session_id = ns.initialize.session_id
            if ns.page_script_hash:
                self.page_script_hash = ns.page_script_hash
            if ns.config.max_cached_message_age:
                self.cache.max_age = ns.config.max_cached_message_age
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.page_script_hash = msg.navigation.page_script_hash
        elif kind == "page_not_found" and result is not None:
            result.page_not_found = True
        elif kind == "session_event" and result is not None:
            ev = msg.session_event
            if ev.WhichOneof("type") == "script_compilation_exception":
                result.exceptions.append(ev.script_compilation_exception)
        elif kind == "delta":
            if result is not None:
                result.deltas += 1
            delta = msg.delta
            if delta.WhichOneof("type") != "new_element":
                return
            el = delta.new_element
            etype = el.WhichOneof("type")
            if result is not None:
                result.elements[etype] += 1
                if etype == "exception":
                    result.exceptions.append(el.exception)
                elif etype == "alert" and el.alert.format == Alert.ERROR:
                    result.error_alerts.append(el.alert.body)
            if etype in WIDGET_TYPES:
                proto = getattr(el, etype)
                wkind = etype
                if etype == "slider" and (proto.type == Slider.SELECT_SLIDER or proto.options):
                    wkind = "select_slider"
                w = Widget(proto.id, wkind, proto, delta.fragment_id)
                self.widgets[w.id] = w
                self._seen_this_run.add(w.id)
                state = initial_state(w)
                if w.id not in self.widget_states and state is not None:
                    self.widget_states[w.id] = state
                elif getattr(proto, "set_value", False):
                    # the server set a value (URL seed, session_state): the frontend takes it
                    if state is not None:
                        self.widget_states[w.id] = state

    def _finish_run(self, fragment: bool) -> None:
        if not fragment:
            # widgets not drawn by a full run are gone (the frontend drops their state)
            for wid in [w for w in self.widgets if w not in self._seen_this_run]:
                self.widgets.pop(wid, None)
                self.widget_states.pop(wid, None)
            self.cache.age()

    def _drain(self) -> None:
        while not self._inbox.empty():
            item = self._inbox.get_nowait()
            if isinstance(item, ProtocolError):
                raise item
            self._apply(self.cache.resolve(item), None)

    # -- requests
    async def rerun(
        self,
        *,
        page_name: str | None = None,
        query_string: str | None = None,
        widget_states: list[WidgetState] | None = None,
        fragment_id: str = "",
        first: bool = False,
    ) -> RunResult:
        """Send one ``rerun_script`` and wait for the run the user waits for to end."""
        t0 = time.perf_counter()
        result = RunResult(status="pending", seconds=0.0, replica=self.replica)
        try:
            self._drain()
            back = BackMsg()
            cs = back.rerun_script
            if query_string is not None:
                self.query_string = query_string
            cs.query_string = self.query_string
            if first:
                self.page_name = page_name or ""
                cs.page_name = self.page_name
            else:
                cs.page_script_hash = self.page_script_hash
                if page_name is not None:
                    cs.page_name = page_name
            states = widget_states if widget_states is not None else list(self.widget_states.values())
            cs.widget_states.CopyFrom(WidgetStates(widgets=states))
            if fragment_id:
                cs.fragment_id = fragment_id
            cs.cached_message_hashes.extend(self.cache.hashes())
            url = f"{self.base_url}/{self.page_name}" + (f"?{self.query_string}" if self.query_string else "")
            _context_info(back, url)
            if not fragment_id:
                self._seen_this_run = set()
            await self._ws.send(back.SerializeToString())
            started = False
            deadline = t0 + self.run_timeout
            while True:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    raise asyncio.TimeoutError
                msg = await self._receive(result, remaining)
                kind = msg.WhichOneof("type")
                if kind == "new_session":
                    started = True
                self._apply(msg, result)
                if kind == "script_finished" and started:
                    status = TERMINAL.get(msg.script_finished)
                    if status is not None:
                        result.status = status
                        self._finish_run(fragment=msg.script_finished
                                         == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
                        if status == "compile-error":
                            # the compile exception follows script_finished
                            await self._read_compile_exception(result)
                        break
        except asyncio.TimeoutError:
            result.status = "timeout"
            result.protocol_error = f"no script_finished within {self.run_timeout:.0f} s"
        except ProtocolError as exc:
            result.status = "protocol-error"
            result.protocol_error = str(exc)
        except websockets.ConnectionClosed as exc:
            result.status = "protocol-error"
            result.protocol_error = f"websocket closed: {exc!r}"
        result.seconds = time.perf_counter() - t0
        return result

    async def _receive(self, result: RunResult, seconds: float) -> ForwardMsg:
        """The next message within ``seconds``, resolved from the cache and counted in ``result``;
        a ProtocolError the reader queued is raised."""
        item = await asyncio.wait_for(self._inbox.get(), seconds)
        if isinstance(item, ProtocolError):
            raise item
        msg = self.cache.resolve(item)
        result.messages += 1
        if self.keep_messages:
            result.forward_msgs.append(msg)
        return msg

    async def _read_compile_exception(self, result: RunResult, timeout: float = 2.0) -> None:
        deadline = time.perf_counter() + timeout
        while (remaining := deadline - time.perf_counter()) > 0:
            try:
                msg = await self._receive(result, remaining)
            except asyncio.TimeoutError:
                return
            self._apply(msg, result)
            if msg.WhichOneof("type") == "session_event":
                return

    @property
    def runs_finished(self) -> int:
        """Full runs of this session that finished. Until one has, ``page_script_hash`` may be the
        main script's (a navigation app's ``new_session`` names app.py; its page's hash comes in
        the run's ``navigation`` message)."""
        return self.cache.runs

    async def open(self, page_name: str = "", query_string: str = "") -> RunResult:
        """What a tab does when it loads ``/<page_name>?<query_string>``."""
        return await self.rerun(page_name=page_name, query_string=query_string, first=True)

    def changeable_widgets(self, text_choices: dict[str, list[str]] | None = None) -> list[Widget]:
        out = []
        for w in self.widgets.values():
            if getattr(w.proto, "disabled", False):
                continue
            if w.kind in ("text_input", "text_area") and not (text_choices or {}).get(w.key):
                continue
            out.append(w)
        return out

    async def change_widget(
        self,
        rng: random.Random,
        text_choices: dict[str, list[str]] | None = None,
        widget: Widget | None = None,
    ) -> RunResult | None:
        """Change one widget to another valid value and rerun, as a click would (None: nothing to change)."""
        candidates = [widget] if widget else self.changeable_widgets(text_choices)
        rng.shuffle(candidates)
        for w in candidates:
            new = changed_state(w, self.widget_states.get(w.id), rng, text_choices)
            if new is not None:
                return await self.set_widget(w, new)
        return None

    def find_widget(self, *, url_key: str = "", user_key: str = "") -> Widget | None:
        """The widget bound to URL parameter ``url_key``, or made with ``key=user_key`` (None: not drawn)."""
        for w in self.widgets.values():
            if (url_key and w.key == url_key) or (user_key and w.id.endswith(f"-{user_key}")):
                return w
        return None

    async def set_widget(self, w: Widget, new: WidgetState) -> RunResult:
        """Rerun with ``w`` holding ``new``, as the frontend sends a user's change (a click: once)."""
        self.widget_states[w.id] = new
        if w.key:
            # the frontend writes a URL widget's value into the URL itself,
            # and drops the parameter when the value is the widget's default
            default = initial_state(w, default_only=True)
            values = None if default == new else url_values(new)
            self.query_string = with_param(self.query_string, w.key, values)
        try:
            result = await self.rerun(fragment_id=w.fragment_id)
            result.request = f"{w.key or w.kind}={','.join(url_values(new))[:40]} ?{self.query_string}"
            return result
        finally:
            if new.WhichOneof("value") == "trigger_value":
                # a click is sent once; the frontend then forgets the trigger
                self.widget_states.pop(w.id, None)

