"""A page's cached functions are made once per server process, not on every rerun.

A page script runs again on every rerun, and a ``@st.cache_data`` in it reads the function's source
again each time (``inspect.getsource``: 2-5 % of a warm rerun of Round-off or Backward, py-spy).
The pages' functions are decorated by ``gradlab.ui.cache_keys.page_cache_data`` and
``page_cache_resource``: this counts the sources Streamlit reads for a page's functions on a rerun.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from streamlit.runtime.caching import cache_utils
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("roundoff", "network", "summed", "backward", "explorer", "grid")


@pytest.mark.parametrize("page", PAGES)
def test_a_rerun_reads_no_source_of_the_page_s_cached_functions(page, monkeypatch):
    read = []
    real = inspect.getsource

    def counted(obj):
        read.append(getattr(getattr(obj, "__code__", None), "co_filename", ""))
        return real(obj)

    monkeypatch.setattr(cache_utils.inspect, "getsource", counted)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    first = [f for f in read if f.endswith(f"{page}.py")]
    read.clear()
    at.run()  # a rerun that changes nothing
    assert not at.exception
    again = [f for f in read if f.endswith(f"{page}.py")]
    assert again == [], f"{page}: {len(again)} cached functions made again on a rerun ({len(first)} on the first run)"


@pytest.mark.parametrize("page", PAGES)
def test_charts_drawn_from_the_cache_are_on_every_rerun_and_in_every_session(page):
    """Some charts are drawn once per settings and replayed (st.cache_data records the elements):
    a rerun, and a second session reaching the same settings, show every chart the first run did."""
    shown = []
    for _ in range(2):  # two sessions
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        at.switch_page(f"pages/{page}.py").run()
        for _ in range(2):  # the first run, then a rerun that changes nothing
            assert not at.exception
            shown.append([chart.proto.spec for chart in at.get("plotly_chart")])
            at.run()
    expected = {"roundoff": 3, "network": 2, "summed": 2, "backward": 3, "explorer": 1, "grid": 2}[page]  # the charts the page draws
    assert len(shown[0]) == expected and all(s == shown[0] for s in shown)


@pytest.mark.parametrize("page", (*PAGES, "gradcheck"))
def test_a_presented_page_s_main_chart_is_not_the_one_cached_for_the_plain_page(page):
    """The main chart is drawn larger in presentation mode: replayed from the cache, the plain page's
    chart must not stand in for it (nor the other way round)."""
    specs = {}
    for present in ("", "1", ""):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        if present:
            at.query_params["present"] = present
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception
        main = at.get("plotly_chart")[0].proto
        specs.setdefault(present, set()).add((main.spec, main.config))
    assert len(specs[""]) == 1 and len(specs["1"]) == 1 and specs[""] != specs["1"]
