"""The views warmed at start-up are the views a page computes (gradlab/ui/warm_views.py).

Each lab's ``preset_views(values)`` must list exactly the ``lab_view`` calls its page makes
when its widgets hold ``values``: every preset's page, opened on the preset's URL, and every
page opened with none, is run under AppTest with lab_view's cache recording what it is asked
for. A server with the warm-up on then opens a preset with no spinner, and without it with one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import re
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from streamlit.testing.v1 import AppTest

from gradlab.teaching.presets import PRESETS, preset, url_query
from gradlab.ui import views, warm_views
from gradlab.ui.navigation import page_by_url

REPO_ROOT = Path(__file__).resolve().parents[1]
APP = REPO_ROOT / "app.py"
TIMEOUT_S = 60
PAGES = tuple(warm_views._preset_views())


@pytest.fixture
def asked(monkeypatch):
    """``(entry, key) -> settings`` of every view lab_view's cache is asked for (every call, hit or
    miss), with no section cached before (a section replayed from st.cache_data would not run what
    it drew from); the views stay cached, shared by the tests of this process."""
    import streamlit as st

    st.cache_data.clear()
    calls: dict = {}
    real = views._view

    def recording(key, entry, _view_of, _settings):
        calls[(entry, key)] = _settings
        return real(key=key, entry=entry, _view_of=_view_of, _settings=_settings)

    monkeypatch.setattr(views, "_view", recording)
    return calls


def _run(page: str, query: dict, asked: dict) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    at.run()
    asked.clear()  # the home page's view
    at.query_params.update(query)
    at.switch_page(page_by_url(page).path).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _listed(page: str, values) -> set:
    return {views.view_key(of, settings) for of, settings in warm_views._preset_views()[page](values)}


@pytest.mark.parametrize("p", PRESETS, ids=lambda p: f"{p.page}-{p.key}")
def test_a_preset_s_page_asks_for_exactly_the_views_its_preset_views_list(p, asked):
    _run(p.page, url_query(p), asked)
    assert set(asked) == _listed(p.page, p.values)


@pytest.mark.parametrize("page", PAGES)
def test_a_page_with_no_query_asks_for_the_views_of_settings_from_nothing(page, asked):
    at = _run(page, {}, asked)
    assert set(asked) == _listed(page, {})
    # what its widgets hold with no query makes the settings settings_from({}) does: the page's
    # widget defaults and the lab's agree (also where a view is not keyed by all of them: Grid's h)
    settings_from = importlib.import_module(warm_views._preset_views()[page].__module__).settings_from
    shown = {key: value for key, value in at.session_state.items() if not key.startswith("_")}
    assert settings_from(shown) == settings_from({})


def test_every_preset_s_views_are_warmed_each_once():
    warmed = [views.view_key(of, settings) for _, of, settings in warm_views.warm_calls()]
    assert len(warmed) == len(set(warmed))
    for p in PRESETS:
        assert _listed(p.page, p.values) <= set(warmed), p.key
    for page in PAGES:
        assert _listed(page, {}) <= set(warmed), page


def _refused(settings):
    raise ValueError("no such view")


def test_a_failed_view_is_logged_and_the_others_are_still_warmed(monkeypatch, caplog):
    from gradlab.labs.summed import SummedLossSettings, view

    good = SummedLossSettings(shape=(2, 3))
    monkeypatch.setattr(warm_views, "warm_calls", lambda: iter([("broken", _refused, 1), ("summed", view, good)]))
    monkeypatch.setattr(views, "warm_view", lambda of, s: of(s) is not None)
    with caplog.at_level(logging.WARNING, logger=warm_views.__name__):
        assert warm_views.warm_all() == 1
    assert "warming broken failed" in caplog.text


def test_the_caches_released_forget_which_views_were_computed():
    """The server's release of every cache (gradlab.ui.runtime) empties lab_view's record of the views
    it computed too: a view computed again then shows its spinner, as on its first computation."""
    import streamlit as st

    from gradlab.labs.summed import SummedLossSettings, view

    settings = SummedLossSettings(shape=(2, 3))
    views.warm_view(view, settings)
    assert views.view_key(view, settings) in views._computed()
    st.cache_resource.clear()
    assert views.view_key(view, settings) not in views._computed()
    assert views.warm_view(view, settings)  # computed again, not found


def test_the_switch_reads_the_environment():
    assert warm_views.warming_enabled({}) and warm_views.warming_enabled({"GRADLAB_WARM_PRESETS": "1"})
    for off in ("0", "false", "No", " off "):
        assert not warm_views.warming_enabled({"GRADLAB_WARM_PRESETS": off})
        assert warm_views.start_warming({"GRADLAB_WARM_PRESETS": off}) is None


# ---------------------------------------------------------------- a real server

#: The question's float32 check: the check and its main chart's eps sweep, cold on a fresh server
#: (the pool's workers start with its first call) far longer than the spinner's half-second delay.
LINK = preset("gradcheck", "float32_check_fails")
PATIENCE = 600.0  # seconds to wait for the warm-up's line before the test fails (not a budget)


def _open(base_url: str):
    from harness.session import StreamlitSession

    async def go():
        async with StreamlitSession(base_url, run_timeout=120, keep_messages=True) as tab:
            return await tab.open(LINK.page, urlencode(url_query(LINK), doseq=True))

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, go()).result()


def _spinners(run) -> list[str]:
    """The spinners a run drew: lab_view's shows only for a view not cached (after half a second, as a
    transient element, which RunResult.elements does not count)."""
    return [e.spinner.text for m in run.forward_msgs if m.WhichOneof("type") == "delta"
            for e in m.delta.new_transient.elements if e.WhichOneof("type") == "spinner"]


def _warmed_line(log: Path) -> str | None:
    found = re.search(r"warmed (\d+) preset views in [\d.]+ s", log.read_text(errors="replace"))
    return found and found.group(0)


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.parametrize("warm", [True, False], ids=["warmed", "cold"])
def test_a_preset_opened_after_the_warm_up_draws_no_spinner(warm, tmp_path):
    from harness.server import Server, free_port, log_says

    log = tmp_path / "server.log"
    env = {"GRADLAB_WARM_PRESETS": "1" if warm else "0"}
    with Server(free_port(), app="serve.py", extra_env=env, log=log) as server:
        if warm:
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
                pool.submit(asyncio.run, log_says(log, "warmed ", PATIENCE)).result()
            assert _warmed_line(log) and "failed" not in log.read_text(errors="replace")
        run = _open(server.base_url)
    assert run.ok and run.exceptions == [], run.protocol_error or run.status
    assert run.elements["plotly_chart"] > 0
    assert (_spinners(run) == []) == warm, (_spinners(run), _warmed_line(log))


def test_a_run_waiting_for_a_view_another_run_computes_gives_its_turn_back(monkeypatch):
    """Two tabs of one address open the same new view: the first computes it (giving its turn back
    while its worker runs, as heavy does), the second waits on the cache's lock for that key. The
    second must not hold its turn meanwhile: the first needs one to finish, and with the second's
    held both would wait until one gave up after TURN_WAIT_SECONDS."""
    import contextlib
    import threading

    import streamlit as st

    from gradlab.labs.summed import SummedLossSettings, view
    from gradlab.server.visitors import Visitor
    from gradlab.ui.visitor_turns import Turns, turn_given_back, visitor_turn

    st.cache_resource.clear()
    turns, worker_done = Turns(address_runs=1), threading.Event()
    first, second = Visitor("127.0.0.2", "first"), Visitor("127.0.0.2", "second")

    def in_a_worker(fn, settings):
        with turn_given_back():  # as gradlab.ui.worker_calls.heavy waits on the pool
            assert worker_done.wait(60)
            return fn(settings)

    monkeypatch.setattr(views, "heavy", in_a_worker)
    entered, given_back = set(), views.turn_given_back

    @contextlib.contextmanager
    def noted():
        with given_back():
            entered.add(threading.current_thread().name)
            yield

    monkeypatch.setattr(views, "turn_given_back", noted)
    settings = SummedLossSettings(shape=(2, 5))

    def tab(visitor):
        with visitor_turn(visitor, turns):
            views.lab_view(view, settings)

    def until(condition):
        deadline = time.monotonic() + 60
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.01)
        return condition()

    computing = threading.Thread(target=tab, args=(first,), name="computing")
    computing.start()
    assert until(lambda: "computing" in entered and first not in turns._visitors)  # in its worker
    waiting = threading.Thread(target=tab, args=(second,), name="waiting")
    waiting.start()
    assert until(lambda: "waiting" in entered)  # it waits for the key ...
    assert second not in turns._visitors and waiting.is_alive()  # ... without its turn
    worker_done.set()
    computing.join(60)
    waiting.join(60)
    assert not computing.is_alive() and not waiting.is_alive() and not turns._visitors
