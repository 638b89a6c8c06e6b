"""Every limit in gradlab/limits.py, enforced at its boundary: one under is fine, one over is
refused with a message naming the limit. On the engine and, through URLs, on the pages (AppTest).

Time limits are tested with the limit lowered (``monkeypatch`` of the module's ``LIMITS``), so
they run in a fraction of a second; the real values are what a deployment uses.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cost import stopped_within
import torch
from streamlit.testing.v1 import AppTest

from gradlab.numerics import expressions as expr_module
from gradlab.numerics import exact_derivatives as reference
from gradlab.labs.roundoff import engine as roundoff
from gradlab.labs.backward.engine import BackwardSession, VJPSettings, matrix_vjp, parse_vector
from gradlab.server.deadline import run_within
from gradlab.errors import GradLabError, LimitError
from gradlab.limits import ENV_VARIABLE, LIMITS, Limits, within_limit, limits_from
from gradlab.labs.network.engine import NetworkSettings
from gradlab.labs.roundoff.engine import RoundoffSettings, compare_at
from gradlab.step_sweep.engine import SweepSettings
from app_text import shown

REPO_ROOT = Path(__file__).resolve().parents[1]
APP = str(REPO_ROOT / "app.py")
PAGE_TIMEOUT_S = 90


def _vector(n: int) -> tuple[float, ...]:
    return tuple(float(k + 1) for k in range(n))


def _text(values) -> str:
    return ", ".join(f"{v:g}" for v in values)


def _nested(fn: str, depth: int) -> str:
    return f"{fn}(" * depth + "x" + ")" * depth


# ---------------------------------------------------------------- within_limit itself


def test_within_limit_passes_the_limit_and_names_what_is_over():
    assert within_limit("widgets", 10, 10) == 10
    with pytest.raises(LimitError, match=r"Too many widgets: 11 asked for.*at most 10"):
        within_limit("widgets", 11, 10)


def _limits_names(tree: ast.AST) -> set[str]:
    """The names this module gives gradlab.limits.LIMITS (``from gradlab.limits import LIMITS [as L]``)."""
    return {alias.asname or alias.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "gradlab.limits"
            for alias in node.names if alias.name == "LIMITS"}


def _limits_read(tree: ast.AST) -> set[str]:
    """The fields read from the LIMITS object itself: ``LIMITS.x`` under any imported name, or
    ``<module>.LIMITS.x``; an attribute of that name on anything else is not a read of the limit."""
    names = _limits_names(tree)
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and (
        isinstance(n.value, ast.Name) and n.value.id in names
        or isinstance(n.value, ast.Attribute) and n.value.attr == "LIMITS")}


def test_every_limit_in_the_table_is_enforced_somewhere():
    # A field of Limits no engine, page or server module reads from LIMITS would be a limit a
    # visitor is told about but never meets.
    read = set()
    for path in [*(REPO_ROOT / "gradlab").rglob("*.py"), *(REPO_ROOT / "pages").glob("*.py")]:
        if path != REPO_ROOT / "gradlab" / "limits.py":
            read |= _limits_read(ast.parse(path.read_text(encoding="utf-8")))
    unread = [f.name for f in dataclasses.fields(Limits) if f.name not in read]
    assert unread == [], f"limits nothing reads: {unread}"
    # the same attribute names read from another object do not count
    assert _limits_read(ast.parse("from gradlab.limits import LIMITS\nsettings.samples\nLIMITS.roundoff_seconds")) \
        == {"roundoff_seconds"}


# ---------------------------------------------------------------- engine: sizes

# (name, call with the limit, call with limit + 1, words the refusal must contain)
SIZE_LIMITS = [
    ("sweep_points",
     lambda: SweepSettings("x**2", 1.0, ("float64",), ("central",), points=LIMITS.sweep_points).validated(),
     lambda: SweepSettings("x**2", 1.0, ("float64",), ("central",), points=LIMITS.sweep_points + 1).validated(),
     "sweep points"),
    ("roundoff_samples",
     lambda: RoundoffSettings(samples=LIMITS.roundoff_samples).validated(),
     lambda: RoundoffSettings(samples=LIMITS.roundoff_samples + 1).validated(),
     "samples"),
    ("network_width",
     lambda: NetworkSettings(hidden=(LIMITS.network_width,)).validated(),
     lambda: NetworkSettings(hidden=(LIMITS.network_width + 1,)).validated(),
     "units in one layer"),
    ("network_width (inputs)",
     lambda: NetworkSettings(input_size=LIMITS.network_width).validated(),
     lambda: NetworkSettings(input_size=LIMITS.network_width + 1).validated(),
     "units in one layer"),
    ("network_depth",
     lambda: NetworkSettings(hidden=(2,) * LIMITS.network_depth).validated(),
     lambda: NetworkSettings(hidden=(2,) * (LIMITS.network_depth + 1)).validated(),
     "hidden layers"),
    ("backward_vector_entries (text)",
     lambda: parse_vector(_text(_vector(LIMITS.backward_vector_entries)), "v"),
     lambda: parse_vector(_text(_vector(LIMITS.backward_vector_entries + 1)), "v"),
     "entries in the v"),
    ("backward_vector_entries (settings)",
     lambda: VJPSettings(*(_vector(LIMITS.backward_vector_entries),) * 4).validated(),
     lambda: VJPSettings(*(_vector(LIMITS.backward_vector_entries + 1),) * 4).validated(),
     "entries in a, b, c and v"),
    ("backward_vector_entries (matrix)",
     lambda: matrix_vjp((_vector(LIMITS.backward_vector_entries),), _vector(LIMITS.backward_vector_entries), (1.0,)),
     lambda: matrix_vjp((_vector(LIMITS.backward_vector_entries + 1),),
                        _vector(LIMITS.backward_vector_entries + 1), (1.0,)),
     "columns of W"),
    ("backward_steps (text)",
     lambda: BackwardSession.from_text(",".join(["z"] * LIMITS.backward_steps)),
     lambda: BackwardSession.from_text(",".join(["z"] * (LIMITS.backward_steps + 1))),
     "backward steps"),
    ("backward_steps (one more)",
     lambda: BackwardSession.from_text(",".join(["z"] * (LIMITS.backward_steps - 1))).zero_grad(),
     lambda: BackwardSession.from_text(",".join(["z"] * LIMITS.backward_steps)).zero_grad(),
     "backward steps"),
    ("expression_chars",
     lambda: expr_module.parse("x" + " " * (LIMITS.expression_chars - 3) + "+1"),
     lambda: expr_module.parse("x" + " " * (LIMITS.expression_chars - 2) + "+1"),
     f"at most {LIMITS.expression_chars}"),
    ("expression_depth",
     lambda: expr_module.parse(_nested("sin", LIMITS.expression_depth - 1)),
     lambda: expr_module.parse(_nested("sin", LIMITS.expression_depth)),
     f"{LIMITS.expression_depth} levels"),
    ("exponent_magnitude",
     lambda: expr_module.parse(f"x**{LIMITS.exponent_magnitude:g}"),
     lambda: expr_module.parse(f"x**{LIMITS.exponent_magnitude + 1:g}"),
     "exponent"),
    ("eps_smallest",
     lambda: SweepSettings("x", 1.0, ("float64",), ("central",), eps_min=LIMITS.eps_smallest).validated(),
     lambda: SweepSettings("x", 1.0, ("float64",), ("central",), eps_min=LIMITS.eps_smallest / 10).validated(),
     "eps range"),
]


@pytest.mark.parametrize("name,at_limit,over,words", SIZE_LIMITS, ids=[b[0] for b in SIZE_LIMITS])
def test_size_limit_at_the_boundary(name, at_limit, over, words):
    at_limit()
    with pytest.raises(GradLabError) as info:
        over()
    assert words in str(info.value), str(info.value)


def test_roundoff_exact_reference_at_the_sample_limit_is_computed():
    """Every point gets an exact (Arb) reference: no smaller limit than roundoff_samples."""
    xs = torch.linspace(1e-3, 1.0, LIMITS.roundoff_samples, dtype=torch.float64).tolist()
    result = compare_at("log(1+x)", "log1p(x)", xs, "float64")
    assert result.summary.compared == len(xs)
    with pytest.raises(LimitError, match="Too many samples"):
        compare_at("log(1+x)", "log1p(x)", xs + [0.5], "float64")


# ---------------------------------------------------------------- engine: time


def _lowered(monkeypatch, module, **limits) -> None:
    monkeypatch.setattr(module, "LIMITS", dataclasses.replace(LIMITS, **limits))


def test_run_within_stops_a_runaway_loop_and_names_the_limit():
    def spin():
        while True:
            pass

    start = time.perf_counter()
    # the CPU limit's sentence, or on a loaded machine the wall-clock backstop's (a core was
    # not given to the loop for 5x the limit): both stop it and name the limit
    with pytest.raises(LimitError, match=r"0.2 s.*LIMITS.evaluation_seconds|waiting 1 s for the machine.*0.2 s limit"):
        run_within(0.2, "a runaway loop", spin)
    assert time.perf_counter() - start < stopped_within(0.2)  # the LimitError above says it fired
    assert run_within(5.0, "a sum", sum, range(10)) == 45  # no stray interruption afterwards
    time.sleep(0.05)


def test_a_block_that_waits_instead_of_computing_is_told_it_waited():
    """The wall-clock backstop (WALL_CLOCK_FACTOR x the limit) ends a block that sleeps; its
    sentence says it waited for the machine, not that computing took too long."""
    with pytest.raises(LimitError) as caught:
        # short sleeps: the expiry arrives between them (one long C-level sleep cannot be cut short)
        run_within(0.05, "a nap", lambda: [time.sleep(0.01) for _ in range(3000)])
    text = str(caught.value)
    assert text.startswith("Computing a nap was stopped after waiting 0.25 s for the machine"), text
    assert "took longer" not in text


def test_an_expiry_swallowed_once_is_raised_again():
    """An expiry delivered where Python swallows exceptions (hypothesis's gc callback printed
    'Exception ignored in ... _Expired' and the block ran to its end) is raised again."""
    def swallow_the_first_then_spin():
        n = 0
        try:
            while True:  # a body: CPython 3.11 raises a bare `while True: pass`'s expiry outside the try
                n += 1
        except BaseException:  # noqa: BLE001 - what a gc callback or a __del__ does to it
            pass
        spent = time.process_time()
        while time.process_time() - spent < 30:
            n += 1
        return "ran to its end"

    with pytest.raises(LimitError, match="a stubborn loop"):
        run_within(0.1, "a stubborn loop", swallow_the_first_then_spin)
    assert run_within(5.0, "a sum", sum, range(10)) == 45  # nothing pending afterwards


AFTER_EXPIRY_UNDER_A_TRACER = """
import sys, time
from gradlab.server.deadline import run_within
def spin():
    while True:
        pass
for _ in range(3):
    try:
        run_within(0.05, "a spin", spin)
    except Exception as err:
        assert type(err).__name__ == "LimitError"
sys.settrace(lambda *a: None)  # a debugger, coverage, or hypothesis's explain phase
print(sum(len(str(i)) for i in range(1000)))
"""


def test_an_expired_limit_leaves_the_interpreter_as_it_was():
    """Regression: withdrawing an expiry (SetAsyncExc with NULL) left CPython 3.11's eval
    breaker set for good; the next traced function call then looped forever."""
    done = subprocess.run([sys.executable, "-c", AFTER_EXPIRY_UNDER_A_TRACER], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2890"


def test_roundoff_seconds_limit(monkeypatch):
    _lowered(monkeypatch, roundoff, roundoff_seconds=0.2)
    settings = RoundoffSettings("log(1+x)", "log1p(x)", "float64", "log-uniform", 1e-300, 1e30,
                                samples=LIMITS.roundoff_samples)
    start = time.perf_counter()
    with pytest.raises(LimitError, match=r"LIMITS.roundoff_seconds|waiting 1 s for the machine.*0.2 s limit"):
        roundoff.compare(settings)  # the CPU limit's sentence, or a loaded machine's backstop
    assert time.perf_counter() - start < stopped_within(0.2)  # the LimitError above says it fired


def test_evaluation_seconds_limits_higher_derivatives_but_keeps_the_reference(monkeypatch):
    """tan nested 12 deep: f^(5) takes minutes in sympy; the reference must not."""
    _lowered(monkeypatch, reference, evaluation_seconds=0.3)
    text = _nested("tan", 12)
    reference._higher_forms.cache_clear()
    reference._exact_cached.cache_clear()
    start = time.perf_counter()
    ref = reference.exact_derivatives(text, 0.1)
    elapsed = time.perf_counter() - start
    assert ref.defined and ref.d1 is not None
    assert ref.d5 is None  # beyond the limit: its theory line is simply not drawn
    assert elapsed < stopped_within(3 * 0.3)


def test_evaluation_seconds_limit_on_the_first_derivative_is_a_message(monkeypatch):
    _lowered(monkeypatch, reference, evaluation_seconds=1e-4)
    reference._exact_cached.cache_clear()
    with pytest.raises(LimitError, match="LIMITS.evaluation_seconds"):
        # An expression no other test parses: nothing of it is cached, so its work lasts far
        # longer than the interpreter's 5 ms switch interval, which the watchdog needs to fire.
        reference.exact_derivatives(_nested("sinh", 20).replace("(x)", "(x/7)"), 0.123456789)


# ---------------------------------------------------------------- caches and threads


#: Streamlit's caching decorators and the pages' once-per-process wrappers of them
#: (gradlab.ui.cache_keys), each of which passes its options on to Streamlit's.
CACHE_DECORATORS = ("cache_data", "cache_resource", "page_cache_data", "page_cache_resource")


def _decorator_name(node: ast.expr) -> str | None:
    """``@name``, ``@module.name``, ``@name(...)`` or ``@module.name(...)``: the name."""
    target = node.func if isinstance(node, ast.Call) else node
    return target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None


def _cache_decorators(path: Path):
    """Each caching decorator on a function in ``path``, as (line, name, the decorator node)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                if _decorator_name(decorator) in CACHE_DECORATORS:
                    yield decorator.lineno, _decorator_name(decorator), decorator


def _limited(decorator: ast.expr) -> bool:
    """Called with ``max_entries=`` a value other than None (a bare ``@st.cache_data``, no
    max_entries or ``max_entries=None`` keep every entry)."""
    return isinstance(decorator, ast.Call) and any(
        k.arg == "max_entries" and not (isinstance(k.value, ast.Constant) and k.value.value is None)
        for k in decorator.keywords)


def test_every_streamlit_cache_is_limited():
    files = [*sorted((REPO_ROOT / "pages").glob("*.py")), *sorted((REPO_ROOT / "gradlab").rglob("*.py")),
             REPO_ROOT / "app.py"]
    found = {path: list(_cache_decorators(path)) for path in files}
    unbounded = [f"{path.relative_to(REPO_ROOT)}:{line} @{name}" for path, decorators in found.items()
                 for line, name, decorator in decorators if not _limited(decorator)]
    assert unbounded == [], f"caches without max_entries: {unbounded}"
    # Every decorator line in the source is one the walk above saw (a decorator it could not
    # read would be a cache this test never checks): the pages' and gradlab/ui's (a lab's view, its charts).
    pattern = re.compile(rf"^\s*@\s*[\w.]*\b({'|'.join(CACHE_DECORATORS)})\b", re.M)
    for path, decorators in found.items():
        text = path.read_text(encoding="utf-8")
        assert len(decorators) == len(pattern.findall(text)), path
    kinds = [name for decorators in found.values() for _, name, _ in decorators]
    assert kinds.count("cache_data") + kinds.count("cache_resource") >= 5
    # and the test sees what it must refuse
    assert not _limited(ast.parse("@page_cache_data(ttl=60)\ndef f(): pass").body[0].decorator_list[0])
    assert not _limited(ast.parse("@st.cache_data\ndef f(): pass").body[0].decorator_list[0])
    assert not _limited(ast.parse("@cache_keys.page_cache_resource(max_entries=None)\ndef f(): pass")
                        .body[0].decorator_list[0])


def test_configure_runtime_limits_torch_threads_and_is_idempotent():
    from gradlab.ui.runtime import TORCH_THREADS, configure_runtime

    before = torch.get_num_threads()
    try:
        configure_runtime()
        configure_runtime()  # a second call (every rerun) is harmless
        assert torch.get_num_threads() == TORCH_THREADS
        assert torch.get_num_interop_threads() >= 1
    finally:
        torch.set_num_threads(before)
    assert "configure_runtime()" in (REPO_ROOT / "app.py").read_text(encoding="utf-8")


# ---------------------------------------------------------------- pages: a URL asking for too much


def _open(page: str, query: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=PAGE_TIMEOUT_S)
    at.run()
    at.query_params.update(query)
    return at.switch_page(page).run()


def _messages(at: AppTest) -> str:
    return " ".join(shown(e.value) for e in at.error) + " ".join(shown(w.value) for w in at.warning)


PAGE_LIMITS = [
    ("explorer depth", "pages/explorer.py",
     {"fn": "custom (type it)", "expr": "-" * LIMITS.expression_depth + "x"},
     f"{LIMITS.expression_depth} levels"),
    ("network width", "pages/network.py", {"hidden": str(LIMITS.network_width + 1)}, "units in one layer"),
    ("network depth", "pages/network.py", {"hidden": ",".join(["2"] * (LIMITS.network_depth + 1))},
     "hidden layers"),
    ("backward entries", "pages/backward.py",
     {k: _text(_vector(LIMITS.backward_vector_entries + 1)) for k in ("a", "b", "c", "v")},
     "entries in the a"),
    ("backward steps", "pages/backward.py", {"steps": ",".join(["z"] * (LIMITS.backward_steps + 1))},
     "backward steps"),
]


@pytest.mark.parametrize("name,page,query,words", PAGE_LIMITS, ids=[p[0] for p in PAGE_LIMITS])
def test_page_url_over_a_limit_shows_the_limit(name, page, query, words):
    at = _open(page, query)
    assert not at.exception, [e.message for e in at.exception]
    assert words in _messages(at), _messages(at)


def _heavy_in_this_process(monkeypatch) -> None:
    """Pages run heavy work in worker processes, which keep their own LIMITS: to see a page's
    message for a limit lowered here, its heavy call runs here (the pool's own limits are
    tested in tests/test_pool.py)."""
    def in_process(fn, *args, progress=None, seconds=None, what=None, limit_name=None, advice=None,
                   session=None, cancelled=None, long=False, visitor=None, **kwargs):
        return fn(*args, **kwargs, **({"progress": progress} if progress is not None else {}))

    monkeypatch.setattr("gradlab.ui.worker_calls.run_limited", in_process)


def test_roundoff_page_over_the_time_limit_shows_it(monkeypatch):
    _lowered(monkeypatch, roundoff, roundoff_seconds=0.2)
    _heavy_in_this_process(monkeypatch)
    at = _open("pages/roundoff.py", {"a": "log(1+x)", "b": "log1p(x)", "dtype": "float64",
                                     "dist": "log-uniform", "low": "1e-300", "high": "1e+30",
                                     "n": str(LIMITS.roundoff_samples)})
    assert not at.exception
    assert "LIMITS.roundoff_seconds" in _messages(at)


def _curves(at: AppTest) -> dict[str, set[str]]:
    """The schemes of the one chart's sweep curves and of its theory lines."""
    (chart,) = at.get("plotly_chart")
    metas = [trace.get("meta") or {} for trace in json.loads(chart.proto.spec)["data"]]
    return {kind: {m["scheme"] for m in metas if m.get("kind") == kind} for kind in ("sweep", "theory")}


def test_explorer_with_a_huge_fifth_derivative_answers_without_it():
    """tan nested 14 deep: f^(5) takes sympy minutes. LIMITS.evaluation_seconds ends that work
    and the page answers without the theory line that needs f^(5) (the 5-point difference's);
    had that limit not ended it, the worker's LIMITS.request_seconds would, and the page would
    show that limit's error instead of a chart. tan(tan(x)), whose f^(5) is quick, gets the line."""
    # Through the worker pool, at the worker's own limit (the in-thread limit lowered here could
    # land its asynchronous exception inside pytest's own hooks)
    reference._higher_forms.cache_clear()
    reference._exact_cached.cache_clear()
    drawn = {}
    for depth in (2, 14):
        at = _open("pages/explorer.py", {"fn": "custom (type it)", "expr": _nested("tan", depth),
                                         "dtypes": "float64", "schemes": ["Central", "5-point"]})
        assert not at.exception and not at.error, _messages(at)
        drawn[depth] = _curves(at)
        assert drawn[depth]["sweep"] == {"central", "five_point"}, drawn
    assert "five_point" in drawn[2]["theory"] and "five_point" not in drawn[14]["theory"], drawn


# ---------------------------------------------------------------- tensor gradient checks


def _square_sum(t: torch.Tensor) -> torch.Tensor:
    return (t * t).sum()


def _x(n: int) -> torch.Tensor:
    return torch.linspace(-1.0, 1.0, n, dtype=torch.float64)


CHECK_LIMITS = [
    ("tensor_elements", dict(x=LIMITS.tensor_elements, mode="sampled", samples=1),
     dict(x=LIMITS.tensor_elements + 1, mode="sampled", samples=1), "input elements"),
    ("sampled_elements", dict(x=2 * LIMITS.sampled_elements, mode="sampled", samples=LIMITS.sampled_elements),
     dict(x=2 * LIMITS.sampled_elements, mode="sampled", samples=LIMITS.sampled_elements + 1),
     "sampled elements"),
    ("directional_checks", dict(x=16, mode="directional", samples=LIMITS.directional_checks),
     dict(x=16, mode="directional", samples=LIMITS.directional_checks + 1), "directional checks"),
]


@pytest.mark.parametrize("name,ok,over,words", CHECK_LIMITS, ids=[b[0] for b in CHECK_LIMITS])
def test_gradcheck_limit_at_the_boundary(name, ok, over, words):
    from gradlab.check.api import gradcheck

    def run(x, **kw):
        return gradcheck(_square_sum, _x(x), taylor=False, **kw)

    from gradlab.limits import server_limits

    with server_limits():  # the pages' and the CLI's limits (gradlab.limits.size_limit)
        assert run(**ok).summary.checked >= 1
        with pytest.raises(LimitError, match=words):
            run(**over)


def test_full_check_limit_at_the_boundary():
    from gradlab.check import gradcheck
    from gradlab.check.inputs.validation import require_full_check_in_limit
    from gradlab.numerics.schemes import get_scheme

    central = get_scheme("central")
    require_full_check_in_limit(LIMITS.full_check_elements, 1, central)  # the limit itself
    with pytest.raises(LimitError, match="full_check_elements"):
        require_full_check_in_limit(LIMITS.full_check_elements + 1, 1, central)
    with pytest.raises(LimitError, match="full_check_elements"):
        gradcheck(_square_sum, _x(LIMITS.full_check_elements + 1), mode="full", taylor=False)


GRADCHECK_PAGE_LIMITS = [
    ("tensor elements", {"shape": f"{LIMITS.tensor_elements // 1024 + 1}x1024"}, "tensor elements"),
    ("full check", {"mode": "full", "shape": f"{LIMITS.full_check_elements // 256 + 1}x256"},
     f"{LIMITS.full_check_elements:,}"),
]


@pytest.mark.parametrize("name,query,words", GRADCHECK_PAGE_LIMITS, ids=[g[0] for g in GRADCHECK_PAGE_LIMITS])
def test_gradcheck_page_url_over_a_limit_shows_the_limit(name, query, words):
    at = _open("pages/gradcheck.py", query)
    assert not at.exception, [e.message for e in at.exception]
    assert words in _messages(at), _messages(at)


def test_gradcheck_full_mode_within_the_limit_runs_in_the_fragment():
    at = _open("pages/gradcheck.py", {"mode": "full", "shape": "20x10", "dtype": "float64"})
    assert not at.exception, [e.message for e in at.exception]
    assert not [e for e in at.error if "element" in shown(e.value) and "limit" in shown(e.value)]


class _Clock:
    def __init__(self, *times):
        self.times = iter(times)

    def __call__(self):
        return next(self.times)


def test_paced_progress_stops_work_whose_pace_projects_past_the_limit():
    from gradlab.server.deadline import PACE_AFTER_SECONDS, paced_progress

    seen = []
    report = paced_progress(10.0, "this check", lambda d, t: seen.append(d), limit_name="LIMITS.x",
                            advice="Go smaller.", clock=_Clock(0.0, PACE_AFTER_SECONDS / 2, 1.0, 8.0))
    report(1, 100)  # too early to trust the pace (would project 25 s): no verdict yet
    report(50, 100)  # 1 s for half: 2 s projected, within 10 s
    with pytest.raises(LimitError, match=r"about 13 s \(60 of 100 done in 8\.0 s\).*LIMITS\.x.*Go smaller"):
        report(60, 100)  # then it slowed down: 8 s for 60 %, 13.3 s projected
    assert seen == [1, 50]  # the inner progress is called until the work is stopped


def test_paced_progress_never_stops_finished_work():
    from gradlab.server.deadline import paced_progress

    report = paced_progress(1.0, "this check", limit_name="B", advice="", clock=_Clock(0.0, 60.0))
    report(100, 100)  # slow, but done: nothing left to save


# ---------------------------------------------------------------- deployment overrides

OVERRIDES = [
    ("roundoff_samples=20000", {"roundoff_samples": 20_000}),
    (" full_check_elements = 4_096 , full_check_seconds=2.5 ", {"full_check_elements": 4096, "full_check_seconds": 2.5}),
    ("", {}),
    ("cache_seconds=60,", {"cache_seconds": 60}),
]


@pytest.mark.parametrize("text,expected", OVERRIDES, ids=[o[0] or "empty" for o in OVERRIDES])
def test_limits_from_environment_text(text, expected):
    limits = limits_from(text)
    assert limits == dataclasses.replace(Limits(), **expected)


BAD_OVERRIDES = [
    ("roundof_samples=5", "no limit named 'roundof_samples'"),
    ("roundoff_samples=many", "is not an integer"),
    ("roundoff_samples=1.5", "is not an integer"),
    ("full_check_seconds=fast", "is not a number"),
    ("network_width=0", "must be a positive number"),
    ("full_check_seconds=-1", "must be a positive number"),
    ("full_check_seconds=inf", "must be a positive number"),
    ("full_check_seconds=nan", "must be a positive number"),
    ("network_width", "is not an integer"),
]


@pytest.mark.parametrize("text,words", BAD_OVERRIDES, ids=[b[0] for b in BAD_OVERRIDES])
def test_a_bad_override_stops_the_server_with_a_sentence(text, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        limits_from(text)


PAGE_UNDER_OVERRIDE = """
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("pages/network.py", default_timeout=60)
at.query_params["hidden"] = "9"
at.run()
print(" ".join(e.value for e in at.error).replace("\\\\", ""))
"""


def test_the_environment_variable_reaches_the_pages():
    env = {**os.environ, ENV_VARIABLE: "network_width=8"}
    done = subprocess.run([sys.executable, "-c", PAGE_UNDER_OVERRIDE], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "at most 8" in done.stdout, done.stdout


ALL_PAGES_UNDER_A_PROFILE = """
from streamlit.testing.v1 import AppTest
from gradlab.teaching.presets import PRESETS, url_query
from gradlab.ui.navigation import PAGES, page_by_url

def problems(path, query=None):
    at = AppTest.from_file("app.py", default_timeout=120).run()
    at.query_params.update(query or {})
    at.switch_page(path).run()
    return [f"{path} {query or ''}: {e.message}" for e in at.exception]

bad = [p for spec in PAGES for p in problems(spec.path)]
bad += [p for preset in PRESETS for p in problems(page_by_url(preset.page).path, url_query(preset))]
print("\\n".join(bad) or "clean")
"""


def test_every_page_opens_cleanly_under_the_classroom_profile():
    env = {**os.environ, ENV_VARIABLE: "classroom"}
    done = subprocess.run([sys.executable, "-c", ALL_PAGES_UNDER_A_PROFILE], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "clean", done.stdout


def test_the_classroom_profile_lowers_the_heavy_limits():
    classroom = limits_from("classroom")
    for name in ("tensor_elements", "sampled_elements", "directional_checks", "full_check_elements",
                 "full_check_seconds", "roundoff_samples"):
        assert getattr(classroom, name) < getattr(Limits(), name), name


# ---------------------------------------------------------------- cores and memory of a server


def _cgroups(tmp_path, own: str, files: dict[str, str]) -> tuple[str, str]:
    """A fake cgroup mount under ``tmp_path`` and a fake /proc/self/cgroup saying ``own``."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text + "\n")
    (tmp_path / "self-cgroup").write_text(own + "\n")
    return str(tmp_path), str(tmp_path / "self-cgroup")


CGROUP_CASES = [  # (own cgroups, files, the cores allowed; None: the affinity's)
    ("0::/", {"cpu.max": "50000 100000"}, 1),  # v2, docker run --cpus 0.5: rounded up
    ("0::/", {"cpu.max": "max 100000"}, None),  # v2, no quota
    ("0::/a/b", {"a/b/cpu.max": "max 100000", "a/cpu.max": "100000 100000"}, 1),  # a parent's quota
    ("0::/", {}, None),  # no cpu controller files at all
    ("4:cpu,cpuacct:/docker/abc", {"cpu/cpu.cfs_quota_us": "100000", "cpu/cpu.cfs_period_us": "100000"}, 1),  # v1
    ("4:cpu,cpuacct:/", {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}, None),  # v1, none
    ("4:memory:/x\n0::/", {"cpu/cpu.cfs_quota_us": "100000", "cpu/cpu.cfs_period_us": "100000"}, None),  # not cpu's
]


@pytest.mark.parametrize("own,files,expected", CGROUP_CASES, ids=[str(i) for i in range(len(CGROUP_CASES))])
def test_usable_cpus_reads_the_affinity_and_a_container_s_cpu_quota(tmp_path, own, files, expected):
    from gradlab.limits import usable_cpus

    affinity = len(os.sched_getaffinity(0))
    assert usable_cpus(*_cgroups(tmp_path, own, files)) == (affinity if expected is None else min(expected, affinity))


def test_usable_cpus_caps_the_affinity_by_a_quota_of_several_cores(tmp_path):
    from gradlab.limits import usable_cpus

    affinity = len(os.sched_getaffinity(0))
    root, own = _cgroups(tmp_path, "0::/", {"cpu.max": f"{100000 * affinity + 1} 100000"})
    assert usable_cpus(root, own) == affinity  # a quota over the allowed cores adds none
    if affinity > 1:
        root, own = _cgroups(tmp_path, "0::/", {"cpu.max": f"{100000 * (affinity - 1)} 100000"})
        assert usable_cpus(root, own) == affinity - 1


def test_compose_gives_a_replica_the_memory_gradlab_s_own_limits_allow():
    """deploy/compose.yaml: the container's limit is above what GradLab's limits let a replica
    reach (the server and its fork server, and up to twice LIMITS.pool_workers workers of
    LIMITS.worker_memory_mb each), so GradLab ends a request at its limit, with its sentence,
    before the container's OOM killer ends a process. (It was 1g, under one worker's 1536 MB.)"""
    import math

    server_and_fork_server_mb = 1024  # the server's peak at the default limits (690 MB) + the fork server (~220 MB)
    text = (REPO_ROOT / "deploy" / "compose.yaml").read_text(encoding="utf-8")
    service = text.split("\n  haproxy:")[0]
    overrides = re.search(r"GRADLAB_LIMITS: *\"?([^\"\n]*)", service).group(1)
    limits = limits_from(overrides)
    cpus = math.ceil(float(re.search(r"cpus: *\"?([\d.]+)", service).group(1)))
    workers = limits.pool_workers if "pool_workers" in overrides else cpus  # usable_cpus() in the container
    amount, unit = re.search(r"memory: *\"?(\d+)([mMgG])", service).groups()
    memory_mb = int(amount) * (1024 if unit.lower() == "g" else 1)
    needed = server_and_fork_server_mb + 2 * workers * limits.worker_memory_mb
    assert memory_mb >= needed, f"compose gives {memory_mb} MB, GradLab's limits allow {needed} MB"


def test_the_deployment_guide_states_the_pool_s_grace_size_and_lanes():
    from gradlab.server.lanes import KNOWN_LONG_KEYS
    from gradlab.server.pool import GRACE_SECONDS, LONG_CALL_SECONDS, POLL_SECONDS, SHORT_TURN_SECONDS, WorkerPool
    from gradlab.server.worker import LONG_CALL_NICENESS, WORKER_NICENESS

    guide = " ".join((REPO_ROOT / "docs" / "DEPLOYMENT.md").read_text(encoding="utf-8").split())
    assert f"plus {GRACE_SECONDS:g} s of grace" in guide  # was "0.5 s", the code's is 2 s
    # two lanes of pool_workers each: a short one left after LONG_CALL_SECONDS, a long one at niceness 19
    assert WorkerPool(3)._lanes.slots == 3
    assert "two lanes of `pool_workers` workers each" in guide and "up to twice `pool_workers`" in guide
    assert f"computed for {LONG_CALL_SECONDS:g} s (`LONG_CALL_SECONDS`" in guide
    assert f"computed {SHORT_TURN_SECONDS:g} s (`SHORT_TURN_SECONDS`)" in guide
    assert f"at niceness {LONG_CALL_NICENESS} (behind the short lane's {WORKER_NICENESS}" in guide
    assert f"the last {KNOWN_LONG_KEYS} remembered" in guide
    assert f"within {POLL_SECONDS * 1000:g} ms (`POLL_SECONDS`)" in guide
