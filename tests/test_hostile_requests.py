"""Hostile requests: each ends in a result or one sentence naming its limit.

Expressions that parse (so tests/test_hostile.py accepts them) and then ask for
unbounded work: symbolic work whose LaTeX took minutes, a big-integer power
that held the interpreter lock for 20 s and 8 GB, a number whose digits took
minutes to write, a gradient check of a minute per element. On the server path
they run as the pages run them (their worker entries in a worker of
gradlab.server.pool, within each entry's limit); in the
CLI through ``python -m gradlab``. Each must end in a result or a LimitError/exit 2
whose sentence names the limit, never in a bug's generic failure; the wall-clock
limits here (tests/cost.py's stopped_within) only catch a limit that never fired.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import gradlab.limits
from cost import calibration_seconds, stopped_within, waited_for_the_machine

from gradlab.check.lab.settings import CheckSettings
from gradlab.cli.main import UNEXPECTED
from gradlab.step_sweep.engine import SweepSettings
from gradlab.errors import LimitError
from gradlab.labs import explorer
from gradlab.labs.gradcheck import page_view as gradcheck
from gradlab.limits import LIMITS
from gradlab.numerics.mp_format import format_mp
from gradlab.server.pool import GRACE_SECONDS, WorkerPool
from gradlab.server.worker_entries import all_entries

pytestmark = pytest.mark.server  # worker processes and the CLI in a child

REPO_ROOT = Path(__file__).resolve().parents[1]

SIGMOID_8 = "sigmoid(" * 8 + "x" + ")" * 8
SIGMOID_20 = "sigmoid(" * 20 + "x" + ")" * 20
TOWER_6 = "x**x**x**x**x**x"
TOWER_24 = "**".join(["x"] * 24)
TAN_TOWER = "**".join(["tan(x)"] * 8)
GRADCHECK_EXPRESSION = "+".join(["x**sin(x)"] * 20)

#: name -> (expression, x): the Explorer's requests (sweep and formulas)
SWEEPS = {
    "sigmoid-8-deep": (SIGMOID_8, 1.0),
    "sigmoid-20-deep": (SIGMOID_20, 1.0),
    "x**x**x at 1e9": ("x**x**x", 1e9),
    "tower-6 at 2": (TOWER_6, 2.0),
    "tower-24 at 2": (TOWER_24, 2.0),
    "tan-tower at 1": (TAN_TOWER, 1.0),
}
#: the limit a request may reach before it has to have ended (the sweep's whole limit)
SWEEP_LIMIT = LIMITS.request_seconds


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool(2).start()
    yield pool
    pool.close()


def _run(pool, fn, *args, seconds=None):
    entry = fn.worker_entry
    seconds = entry.seconds() if seconds is None else seconds
    start = time.monotonic()
    try:
        outcome = pool.run(fn, *args, seconds=seconds, what=entry.what, limit_name=entry.limit_name)
    except LimitError as err:
        outcome = err
    return outcome, time.monotonic() - start, seconds


def _names_a_limit(err: Exception, seconds: float | None = None) -> bool:
    """The limit's sentence, or (``seconds`` given) the wall-clock backstop's on a machine so
    busy that the worker computed less than its limit in 5x its time."""
    text = str(err)
    waited = seconds is not None and text.startswith("Computing ") and f" of its {seconds:g} s limit): " in text \
        and "was stopped after waiting" in text
    return waited or ("LIMITS." in text and "one request cannot slow the server" in text)


@pytest.mark.parametrize("case", list(SWEEPS))
def test_explorer_request_ends_in_a_result_or_a_sentence_in_time(pool, case):
    expression, x = SWEEPS[case]
    formulas, elapsed, limit = _run(pool, explorer.formulas, expression)
    assert elapsed < stopped_within(limit + GRACE_SECONDS)
    assert isinstance(formulas, tuple) or _names_a_limit(formulas, limit), formulas
    shown, elapsed, limit = _run(pool, explorer.view, SweepSettings(expression, x))
    assert elapsed < stopped_within(limit), f"{case}: {elapsed:.1f} s"
    if isinstance(shown, LimitError):
        assert _names_a_limit(shown, limit), shown
        return
    ref = shown.result.reference
    if ref.defined:  # the page writes its digits: limited whatever the magnitude
        start = time.thread_time()
        assert format_mp(ref.d1, 20)
        assert time.thread_time() - start < 250 * calibration_seconds()  # CPU time: about 1 s here
    else:
        assert ref.reason and ref.reason.endswith(".")


def test_x_to_the_x_to_the_x_at_1e9_ends_at_a_limit_not_after_20_s(pool):
    result, elapsed, seconds = _run(pool, explorer.view, SweepSettings("x**x**x", 1e9))
    assert isinstance(result, LimitError)
    assert ("LIMITS.worker_memory_mb" in str(result) or "LIMITS.evaluation_seconds" in str(result)
            or waited_for_the_machine(str(result), explorer.view.worker_entry.what, seconds)), result
    assert elapsed < stopped_within(LIMITS.evaluation_seconds + GRACE_SECONDS)


def test_a_check_of_a_minute_per_element_is_ended_at_the_limit(pool):
    settings = CheckSettings(model="expression", expression=GRADCHECK_EXPRESSION, shape=(1024, 1024),
                             dtype="float64", scheme="complex_step", mode="sampled", samples=1000)
    result, elapsed, limit = _run(pool, gradcheck.function_view, settings, seconds=3.0)  # the page's is 30 s
    assert isinstance(result, LimitError) and _names_a_limit(result, limit), result
    assert elapsed < stopped_within(limit)


#: The million-element complex-step Grad check: its first progress report came after 16-30 s of
#: set-up, so the pace limit
#: stopped it only then ("1 of 1,000 done in 26.4 s, would take about 26415 s").
MILLION_ELEMENT_CHECK = dict(model="expression", expression=GRADCHECK_EXPRESSION, shape=(1024, 1024), dtype="float64",
                   scheme="complex_step", mode="sampled", samples=1000, seed=7)
#: Seconds within which the forecast must stop it: one evaluation of fn (0.3-2 s here) and slack.
FORECAST_STOP = 8.0


def test_the_page_s_check_of_a_minute_per_element_is_stopped_by_its_forecast_within_seconds(pool):
    """With the page's own limits (30 s whole, the pace's LIMITS.full_check_seconds inside),
    the pace sentence ends it after one timed evaluation, long before the whole-call kill."""
    result, elapsed, limit = _run(pool, gradcheck.function_view, CheckSettings(**MILLION_ELEMENT_CHECK), 1)
    assert isinstance(result, LimitError) and _names_a_limit(result), result
    assert "would take at least about" in str(result) and "(LIMITS.full_check_seconds)" in str(result), result
    # the message says the forecast, not the whole call's kill, stopped it
    assert elapsed < stopped_within(FORECAST_STOP), f"{elapsed:.1f} s (the whole call's limit is {limit:g} s): {result}"


def test_every_worker_entry_is_limited_by_the_limits_it_names(monkeypatch):
    """The sentence of a worker killed at its whole-call limit names the fields whose sum that
    limit is (a check's 30 s were called LIMITS.full_check_seconds, which is 20), read when the
    call starts: a changed LIMITS (GRADLAB_LIMITS, a test) changes every entry's limit."""
    entries = all_entries()
    assert {"the sweep", "the check", "the summed loss", "the comparison"} <= {e.what for e in entries.values()}
    fields = [f.name for f in dataclasses.fields(LIMITS) if f.name.endswith("_seconds")]
    doubled = dataclasses.replace(LIMITS, **{name: 2 * getattr(LIMITS, name) for name in fields})
    for fn, entry in entries.items():
        assert entry.limit_fields and set(entry.limit_fields) <= set(fields), (fn, entry)
        named = sum(getattr(LIMITS, name) for name in entry.limit_fields)
        assert entry.seconds() == named, f"{entry.what}: killed at {entry.seconds()} s, named {entry.limit_name}"
        monkeypatch.setattr(gradlab.limits, "LIMITS", doubled)
        assert entry.seconds() == 2 * named, entry.what
        monkeypatch.setattr(gradlab.limits, "LIMITS", LIMITS)


def test_a_check_over_its_whole_limit_states_that_limit_and_a_check_s_advice(pool, monkeypatch):
    """As a page runs it (gradlab.ui.worker_calls: the entry's seconds and name, and no advice of its own).
    One element: its forecast (one complex evaluation, seconds) is under the pace limit, so
    the set-up runs on until the whole-call kill (the worker keeps the default LIMITS)."""
    monkeypatch.setattr(gradlab.limits, "LIMITS",
                        dataclasses.replace(LIMITS, full_check_seconds=1.0, request_seconds=1.5))
    settings = CheckSettings(model="expression", expression=GRADCHECK_EXPRESSION, shape=(1024, 1024),
                             dtype="float64", scheme="complex_step", mode="sampled", samples=1)
    entry = gradcheck.function_view.worker_entry
    with pytest.raises(LimitError) as info:
        pool.run(gradcheck.function_view, settings, 1, seconds=entry.seconds(), what=entry.what,
                 limit_name=entry.limit_name)
    what = entry.what
    message = str(info.value)
    if waited_for_the_machine(message, what, 2.5):
        return  # a busy machine starved the (niced) worker: the backstop's sentence says so
    assert "took longer than 2.5 s" in message, message
    assert "(its setting LIMITS.full_check_seconds + LIMITS.request_seconds)" in message, message
    assert message.endswith(gradcheck.CHECK_ADVICE), message  # not "Simplify the expression"


#: A model the Grad check's model builder takes (24 layers: 4 x LIMITS.network_depth), checked in full
#: mode: each 128x128 weight (16,512 elements, under LIMITS.full_check_elements) is 16,512 perturbed
#: forward passes of a 256x128 batch, seconds per module, minutes for the model.
LONG_STACK = ", ".join(["linear:128", "tanh"] * (2 * LIMITS.network_depth))


def test_a_layer_check_over_its_limit_is_ended_with_the_layer_check_s_advice(pool):
    from gradlab.layers.settings import LayerCheckSettings

    settings = LayerCheckSettings(LONG_STACK, (256, 128), "float64", mode="full")
    result, elapsed, limit = _run(pool, gradcheck.layer_view, settings, seconds=3.0)  # the page's is 30 s
    assert isinstance(result, LimitError) and _names_a_limit(result, limit), result
    if not waited_for_the_machine(str(result), gradcheck.layer_view.worker_entry.what, limit):
        assert str(result).endswith(gradcheck.LAYERS_ADVICE), result  # not "Simplify the expression"
    assert elapsed < stopped_within(limit + GRACE_SECONDS)


# ------------------------------------------------------------------ the CLI


def _cli(*argv: str, env: dict | None = None):
    """``python -m gradlab`` as a user runs it (one thread: the heavy call runs in a killable child)."""
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "gradlab", *argv], cwd=REPO_ROOT, env={**os.environ, **(env or {})},
                         capture_output=True, text=True, timeout=180)
    return run.returncode, run.stdout, run.stderr, time.monotonic() - start


CLI_IMPORTS = 10.0  # seconds a loaded machine may take to import torch and sympy before any limit starts


@pytest.mark.parametrize(("expression", "x"), [("x**x**x", "1e9"), (TOWER_6, "2"), (TOWER_24, "2"),
                                               (TAN_TOWER, "1")], ids=["x**x**x", "tower-6", "tower-24", "tan-tower"])
def test_cli_sweep_ends_in_a_result_or_one_sentence_in_time(expression, x):
    status, out, err, elapsed = _cli("sweep", expression, "--at", x, "--dtype", "float64",
                                     "--scheme", "central", "--points", "5")
    assert elapsed < stopped_within(SWEEP_LIMIT + CLI_IMPORTS)
    assert UNEXPECTED not in err and "Traceback" not in err, err
    if status == 2:
        assert err.startswith("error: ") and err.count("\n") == 1 and "LIMITS." in err, err
    else:
        assert status == 0 and "exact f'(x) = " in out, err
    if expression == TOWER_6:  # its f' is about 2**(2**65536): written as a power of ten, at once
        assert "exact f'(x) = 10^(6.03122606263029537156454849966e+19727)" in out


def test_cli_check_of_a_minute_per_element_ends_at_the_limit():
    status, _, err, elapsed = _cli("check", "--model", "expression", "--expression", GRADCHECK_EXPRESSION,
                                   "--shape", "1024x1024", "--dtype", "float64", "--scheme", "complex_step",
                                   "--samples", "1000",
                                   env={"GRADLAB_LIMITS": "full_check_seconds=1, request_seconds=2"})
    assert status == 2, err
    assert err.startswith("error: ") and "LIMITS.full_check_seconds" in err, err
    assert elapsed < stopped_within(3 + CLI_IMPORTS)  # 3 s of limits, plus the CLI's imports


def test_cli_check_of_a_million_elements_is_stopped_by_its_forecast_with_the_default_limits():
    status, _, err, elapsed = _cli("check", "--model", "expression", "--expression", GRADCHECK_EXPRESSION,
                                   "--shape", "1024x1024", "--dtype", "float64", "--scheme", "complex_step",
                                   "--samples", "1000", "--seed", "7")
    assert status == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "would take at least about" in err and "(LIMITS.full_check_seconds)" in err, err
    assert elapsed < stopped_within(FORECAST_STOP + CLI_IMPORTS), f"{elapsed:.1f} s: {err}"


def test_a_value_too_large_even_for_mpmath_is_called_that_not_unreal():
    from gradlab.numerics.exact_derivatives import exact_derivatives

    reference = exact_derivatives(TOWER_24, 2.0)  # mpmath: OverflowError, too many digits in integer
    assert not reference.defined and "too large" in reference.reason, reference.reason
