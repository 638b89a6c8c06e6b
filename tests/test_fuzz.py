"""Fuzzing: random and extreme input into the expression language, the CLI and every page.

The only outcomes allowed are a result or a clear message: never a traceback on a
page (AppTest ``at.exception``), never GradLab's generic "something went wrong"
(an unexpected exception caught by a page), never a traceback or more than one
``error:`` line from ``python -m gradlab``.

What ``tests/test_expr.py`` already covers (random text, random *valid* trees
checked against an independent evaluation) is not repeated: here the trees
include everything Python can parse, valid expressions are pushed through the
whole engine (tensor evaluation in every dtype, autograd, the sweep), and the
text mixes in hostile Unicode.

Example counts come from ``tests/hypothesis_profiles.py``: 25 per page and per
property by default (the file runs in about a minute), 50x more with
``HYPOTHESIS_PROFILE=long``.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from gradlab.cli import main as cli
from gradlab.errors import GradLabError
from gradlab.numerics.expressions import Expression, ExpressionError, parse
from gradlab.limits import LIMITS
from gradlab.step_sweep.engine import SweepSettings, run_sweep
from gradlab.ui.messages import GENERIC_ERROR
from cost import calibration_seconds_once, stopped_within
from hypothesis_profiles import engine_settings

REPO_ROOT = Path(__file__).resolve().parents[1]
APP = str(REPO_ROOT / "app.py")
PAGE_TIMEOUT_S = 120
EXAMPLES = 25  # per page and per property in the default profile
#: A parse's CPU time in calibrations (tests/cost.py): about 0.4 s here; a refusal is
#: usually well under a millisecond, a blow-up is unbounded.
PARSE_CALIBRATIONS = 100
# A sweep computes references at up to 5 points, each limited by LIMITS.evaluation_seconds
# twice (first derivative, higher ones) plus the higher forms once: only a limit that
# never fired passes the generous stopped_within of that.
SWEEP_SECONDS = stopped_within(12 * LIMITS.evaluation_seconds)


def fuzz_settings(examples: int = EXAMPLES) -> settings:
    """The active profile with ``examples`` per test (x50 under HYPOTHESIS_PROFILE=long)."""
    return settings(engine_settings(max_examples=examples),
                    suppress_health_check=list(HealthCheck), deadline=None)


# ---------------------------------------------------------------- extreme values

EXTREME_FLOATS = [math.nan, math.inf, -math.inf, 0.0, -0.0, -1.0, 1e308, -1e308, 5e-324, -5e-324,
                  1e-300, 1e300, 2.0**31, 2.0**63, 2.0**64, 1.5, -1e-6]
HOSTILE_CHARS = ["\u202e", "\u200f", "\u200b", "\x00", "😀", "і", "х", "π", "²", "ｓ", "\ufeff",
                 "\n", "\t", "\\", "'", '"', "{", "}", "%", "__", "\u0301", "٣"]
EXTREME_TEXTS = ["", " ", "x" * 10_000, "\u202ex+1", "\u200fsin(x)", "😀" * 100, "\x00", "x\x00",
                 "sіn(x)", "nan", "inf", "-inf", "1e308", "-1e308", "5e-324", "1e999", "-0",
                 "((((", "1,2,3", "1, nan, 3", "[1e308, -1e308]", "9" * 400, "0x10", "1_000",
                 "__import__('os').system('touch /tmp/gradlab-pwned')", "${HOME}", "%s%s%n"]

#: For integer number inputs: a real client sends them as int64, so no NaN or inf here
#: (the URL, which can carry 'inf', is fuzzed with text separately).
extreme_ints = st.sampled_from([0, -1, 1, 2, 3, 2**31 - 1, 2**31, 2**63 - 1, -(2**63), 10**9])
extreme_floats = st.one_of(st.sampled_from(EXTREME_FLOATS), st.floats(allow_nan=True, allow_infinity=True))
hostile_text = st.one_of(
    st.sampled_from(EXTREME_TEXTS),
    st.lists(st.one_of(st.sampled_from(HOSTILE_CHARS), st.sampled_from("x0123456789.e+-*/(), ")),
             max_size=60).map("".join),
    st.text(max_size=80),
    st.tuples(st.sampled_from(["x", "(", "sin(", "1", "😀", ",", "-"]), st.integers(1, 5000))
    .map(lambda t: t[0] * t[1]),
)


# ---------------------------------------------------------------- expression trees: all of Python

NAMES = ["x", "pi", "e", "y", "os", "__builtins__", "__import__", "eval", "sin", "sqrt", "abs", "foo",
         "lambda", "None", "True"]
FUNCTION_NAMES = ["sin", "exp", "log", "sqrt", "tan", "relu", "erf", "cbrt", "eval", "open",
                  "__import__", "getattr", "foo", "grad"]
NUMBER_TEXTS = st.one_of(
    st.sampled_from(["0", "1", "2", "0.5", "1e100", "1e101", "1e-400", "1e308", "9" * 120, "0x1F",
                     "1_0", "1j", "3.", ".5", "0e0"]),
    st.integers(-10**6, 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)


def _python_trees():
    """Source text of random Python expressions: the whitelist and everything around it."""
    leaves = st.one_of(st.sampled_from(NAMES), NUMBER_TEXTS, st.sampled_from(["'s'", "b'b'", "...", "[]"]))

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**", "%", "//", "@", "^", "<",
                                              " and ", " if x else "]), inner)
            .map(lambda t: f"({t[0]}{t[1]}{t[2]})"),
            st.tuples(st.sampled_from(["-", "+", "~", "not "]), inner).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(st.sampled_from(FUNCTION_NAMES), st.lists(inner, min_size=0, max_size=3))
            .map(lambda t: f"{t[0]}({', '.join(t[1])})"),
            st.tuples(inner, st.sampled_from(["__class__", "real", "__dict__", "conjugate"]))
            .map(lambda t: f"({t[0]}).{t[1]}"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]})[{t[1]}]"),
            inner.map(lambda s: f"(lambda: {s})()"),
            inner.map(lambda s: f"f'{{{s}}}'"),
            st.tuples(st.sampled_from(["sin", "exp", "-", "("]), st.integers(20, 40), inner)
            .map(lambda t: _deep(t[0], t[1], t[2])),
        )

    return st.recursive(leaves, extend, max_leaves=12)


def _deep(op: str, depth: int, inner: str) -> str:
    if op == "-":
        return "-" * depth + f"({inner})"
    if op == "(":
        return "(" * depth + inner + ")" * depth
    return f"{op}(" * depth + inner + ")" * depth


def _parse_or_message(text: str) -> Expression | None:
    start = time.thread_time()  # CPU time: a loaded machine does not stretch it
    try:
        result = parse(text)
    except ExpressionError as err:
        assert str(err).strip()
        result = None
    assert time.thread_time() - start < PARSE_CALIBRATIONS * calibration_seconds_once()
    return result


def _evaluates_everywhere(expression: Expression) -> None:
    """Any real dtype, autograd, and complex where torch supports it: values or NaN, no exception."""
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        x = torch.tensor([-2.0, -0.5, 0.0, 0.5, 2.0, 1e30, -1e-30], dtype=dtype, requires_grad=True)
        y = expression(x)
        assert y.shape == x.shape and y.dtype == dtype
        y.sum().backward()
        assert x.grad is not None and x.grad.shape == x.shape
    if expression.complex_ok:
        z = torch.tensor([0.5 + 1e-20j, -2.0 + 1e-20j], dtype=torch.complex128)
        assert expression(z).shape == z.shape


@fuzz_settings(4 * EXAMPLES)
@given(hostile_text)
def test_hostile_unicode_text_gives_an_expression_or_a_message(text):
    expression = _parse_or_message(text)
    if expression is not None:
        _evaluates_everywhere(expression)


@fuzz_settings(4 * EXAMPLES)
@given(_python_trees())
def test_any_python_expression_gives_an_expression_or_a_message(text):
    note(f"text: {text!r}")
    expression = _parse_or_message(text)
    if expression is not None:
        _evaluates_everywhere(expression)


@fuzz_settings(EXAMPLES)
@given(_python_trees(), extreme_floats)
def test_accepted_expressions_run_through_the_sweep_or_say_why(text, x):
    """Whatever the language accepts, the whole engine answers: a sweep, or a GradLabError."""
    expression = _parse_or_message(text)
    assume(expression is not None)
    note(f"text: {expression.text!r}  x = {x!r}")
    start = time.perf_counter()
    try:
        result = run_sweep(SweepSettings(expression.text, x, ("float32", "float64"), ("central", "complex_step"),
                                         points=5))
    except GradLabError as err:
        assert str(err).strip()
    else:
        assert len(result.table) <= 2 * 2 * 5
    assert time.perf_counter() - start < SWEEP_SECONDS


# ---------------------------------------------------------------- the command line


def run_cli(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exit_:  # argparse's own usage errors
        return exit_.code


def _assert_cli_outcome(status: int, out: str, err: str) -> None:
    assert status in (0, 2), (status, err)
    assert "Traceback" not in err and "Traceback" not in out
    if status == 2:
        assert err.startswith("error: ") and err.count("\n") == 1, err[:500]
        assert cli.UNEXPECTED not in err, err  # a bug: an exception GradLab did not anticipate


CLI_NUMBERS = st.one_of(st.sampled_from(["nan", "inf", "-inf", "0", "-1", "1e308", "-1e308", "5e-324",
                                         "1e999", "", " ", "1e-3", "3", "0x10", "1_0", "٣", "😀"]),
                        extreme_floats.map(repr))
CLI_COUNTS = st.sampled_from(["0", "-1", "1", "2", "3", "5", str(LIMITS.sweep_points + 1), "10**9",
                              "99999999999999999999", "1e3", "nan", "", "٣"])
# Shapes whose product overflows int64 are tested separately (OVERFLOWING_SHAPES, a known bug).
CLI_SHAPES = st.sampled_from(["3x4", "5", "0x5", "-1x3", "2x2x2x2x2", "1100x1000", "1024x1025",
                              "", "x", "٣x٣", "3,4", "2×3", "1e3x2", "3 x 4"])


def _sweep_argv():
    options = st.lists(st.one_of(
        st.tuples(st.just("--at"), CLI_NUMBERS),
        st.tuples(st.just("--eps-min"), CLI_NUMBERS),
        st.tuples(st.just("--eps-max"), CLI_NUMBERS),
        st.tuples(st.just("--points"), CLI_COUNTS),
        st.tuples(st.just("--dtype"), st.sampled_from(["float64", "float32", "float16", "int8", ""])),
        st.tuples(st.just("--scheme"), st.sampled_from(["central", "complex_step", "forward", "magic"])),
        st.tuples(st.just("--format"), st.sampled_from(["table", "csv", "json", "xml"])),
        st.tuples(st.sampled_from(["--bogus", "-x", "--help-me"]), st.just("1")),
    ), max_size=6).map(lambda pairs: [token for pair in pairs for token in pair])
    expression = st.one_of(st.sampled_from(["x**2", "sin(x)", "1/x", "log(x)", "-x", "abs(x)"]), hostile_text)
    return st.tuples(options, expression).map(
        lambda t: ["sweep", "--points", "5", "--dtype", "float64", "--scheme", "central", *t[0], "--", t[1]]
    )


def _check_argv():
    options = st.lists(st.one_of(
        st.tuples(st.just("--shape"), CLI_SHAPES),
        st.tuples(st.just("--model"), st.sampled_from(["affine", "expression", "mlp", "resnet"])),
        st.tuples(st.just("--expression"), st.one_of(st.sampled_from(["sin(x)", "1/x", "log(x)"]), hostile_text)),
        st.tuples(st.just("--samples"), CLI_COUNTS),
        st.tuples(st.just("--eps"), CLI_NUMBERS),
        st.tuples(st.just("--mode"), st.sampled_from(["sampled", "directional", "full", "all"])),
        st.tuples(st.just("--dtype"), st.sampled_from(["float64", "float32", "bfloat16", "complex64"])),
        st.tuples(st.just("--scheme"), st.sampled_from(["central", "complex_step", "richardson"])),
        st.tuples(st.just("--reduction"), st.sampled_from(["sum", "mean", "none", "max"])),
    ), max_size=5).map(lambda pairs: [token for pair in pairs for token in pair])
    return options.map(lambda opts: ["check", "--shape", "6x5", *opts])


@fuzz_settings(2 * EXAMPLES)
@given(argv=st.one_of(_sweep_argv(), _check_argv()))
def test_cli_exits_0_or_2_with_one_error_line(argv, capsys):
    note(f"argv: {argv!r}")
    status = run_cli([a.replace("\x00", "") for a in argv])  # argv cannot carry NUL
    out, err = capsys.readouterr()
    _assert_cli_outcome(status, out, err)


# Sizes whose product overflows int64: torch.Size(dims).numel() raises (20 digits) or wraps
# around (2**62 x 4 -> 0); the element limit is checked on Python ints so these are refused.
OVERFLOWING_SHAPES = ["99999999999999999999x2", "3037000500x3037000500", "4611686018427387904x4"]
SHAPE_OVERFLOW = ()


@pytest.mark.parametrize("argv", [
    [],
    ["--help-me"],
    ["frobnicate"],
    ["sweep"],
    ["sweep", "x"],
    ["sweep", "-x**2", "--at", "1"],  # an expression starting with '-' must follow '--'
    ["sweep", "--at", "1", "--", "-1"],
    *[pytest.param(["check", "--shape", shape], marks=SHAPE_OVERFLOW) for shape in OVERFLOWING_SHAPES],
    ["check", "--mode", "full", "--shape", "300x300"],
])
def test_cli_edge_cases(argv, capsys):
    _assert_cli_outcome(run_cli(argv), *capsys.readouterr())


# ---------------------------------------------------------------- pages (AppTest)

TEXT, NUMBER, SELECT, MULTI, TOGGLE = "text", "number", "select", "multi", "toggle"


@lru_cache(maxsize=None)
def _page(path: str) -> AppTest:
    """One warm AppTest per page, reused across examples (state accumulates, as for a visitor)."""
    at = AppTest.from_file(APP, default_timeout=PAGE_TIMEOUT_S)
    at.run()
    return at.switch_page(path).run()


def _fresh(path: str, query: dict[str, str | list[str]]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=PAGE_TIMEOUT_S)
    at.run()
    at.query_params.update(query)
    return at.switch_page(path).run()


def _widget(at: AppTest, kind: str, key: str):
    getter = {TEXT: at.text_input, NUMBER: at.number_input, SELECT: at.selectbox,
              MULTI: at.multiselect, TOGGLE: at.toggle}[kind]
    try:
        return getter(key=key)
    except KeyError:
        return None  # not on the page in its current state (e.g. the custom expression box)


def _assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    messages = [e.value for e in at.error] + [w.value for w in at.warning]
    for message in messages:
        assert message.strip(), "an empty message"
        assert "Traceback" not in message
    assert GENERIC_ERROR not in messages, "an unexpected exception reached show_error: " + repr(messages)


# Per page: the controls a visitor (or a crafted request) can set, with hostile values.
PAGE_CONTROLS = {
    "pages/explorer.py": [
        (SELECT, "fn", st.just("custom")),
        (TEXT, "expr", hostile_text),
        (NUMBER, "x", extreme_floats),
        (MULTI, "dtypes", st.lists(st.sampled_from(["float16", "bfloat16", "float32", "float64"]), unique=True)),
        (MULTI, "schemes", st.lists(st.sampled_from(["forward", "central", "complex_step", "richardson",
                                                     "five_point", "backward"]), unique=True, max_size=3)),
    ],
    "pages/roundoff.py": [
        (TEXT, "a", hostile_text),
        (TEXT, "b", hostile_text),
        (NUMBER, "low", extreme_floats),
        (NUMBER, "high", extreme_floats),
        (NUMBER, "n", st.sampled_from([0, -5, 1, 2, 1000, LIMITS.roundoff_samples + 1, 10**9])),
        (NUMBER, "seed", extreme_ints),
        (SELECT, "dist", st.sampled_from(["normal", "uniform", "log-uniform"])),
        (SELECT, "dtype", st.sampled_from(["float16", "bfloat16", "float32", "float64"])),
    ],
    "pages/network.py": [
        (TEXT, "hidden", hostile_text),
        (NUMBER, "inputs", st.sampled_from([0, -1, 1, 3, LIMITS.network_width + 1, 10**9])),
        (NUMBER, "idx", extreme_ints),
        (NUMBER, "seed", extreme_ints),
        (SELECT, "dtype", st.sampled_from(["float16", "bfloat16", "float32", "float64"])),
        (SELECT, "act", st.sampled_from(["tanh", "relu", "gelu", "softplus", "sigmoid"])),
    ],
    "pages/backward.py": [
        (TEXT, "a", hostile_text),
        (TEXT, "b", hostile_text),
        (TEXT, "c", hostile_text),
        (TEXT, "v", hostile_text),
        (TEXT, "steps", st.one_of(hostile_text, st.lists(st.sampled_from(["b", "br", "bn", "z", "f"]))
                                  .map(",".join))),
        (TEXT, "mv", hostile_text),
        (SELECT, "dtype", st.sampled_from(["float16", "bfloat16", "float32", "float64"])),
    ],
    "pages/gradcheck.py": [
        (TEXT, "shape", st.one_of(CLI_SHAPES, hostile_text)),
        (SELECT, "model", st.sampled_from(["affine", "expression", "mlp"])),
        (TEXT, "expression", hostile_text),
        (NUMBER, "samples", st.sampled_from([0, -1, 1, 5, LIMITS.sampled_elements + 1])),
        (NUMBER, "seed", extreme_ints),
        (SELECT, "mode", st.sampled_from(["sampled", "directional", "full"])),
        (SELECT, "dtype", st.sampled_from(["float16", "bfloat16", "float32", "float64"])),
        (SELECT, "reduction", st.sampled_from(["sum", "mean", "none"])),
    ],
}
PAGES = [p for p in PAGE_CONTROLS if (REPO_ROOT / p).is_file()]


def _changes(page: str):
    controls = PAGE_CONTROLS[page]
    one = st.sampled_from(range(len(controls))).flatmap(
        lambda i: controls[i][2].map(lambda value, i=i: (controls[i][0], controls[i][1], value)))
    return st.lists(one, min_size=1, max_size=3)


@pytest.mark.parametrize("page", PAGES)
def test_page_controls_with_hostile_values_give_a_result_or_a_message(page):
    @fuzz_settings(EXAMPLES)
    @given(_changes(page))
    def run(changes):
        at = _page(page)
        for kind, key, value in changes:
            widget = _widget(at, kind, key)
            if widget is not None:
                widget.set_value(value)
        note(f"changes: {changes!r}")
        at.run()
        _assert_clean(at)

    run()


def _query_value(value) -> str | list[str]:
    if isinstance(value, list):
        return [str(v) for v in value] or [""]
    return repr(value) if isinstance(value, float) else str(value)


def _queries(page: str):
    controls = PAGE_CONTROLS[page]
    pair = st.sampled_from(range(len(controls))).flatmap(
        lambda i: st.one_of(controls[i][2], hostile_text).map(lambda v, i=i: (controls[i][1], v)))
    return st.lists(pair, min_size=1, max_size=4, unique_by=lambda kv: kv[0]).map(
        lambda pairs: {k: _query_value(v).replace("\x00", "") if isinstance(v, str) else _query_value(v)
                       for k, v in pairs})


@pytest.mark.parametrize("page", PAGES)
def test_page_urls_with_hostile_values_give_a_result_or_a_message(page):
    @fuzz_settings(EXAMPLES // 2)
    @given(_queries(page))
    def run(query):
        note(f"query: {query!r}")
        _assert_clean(_fresh(page, query))

    run()


@pytest.mark.parametrize("page,key", [("pages/network.py", "inputs"), ("pages/network.py", "idx"),
                                      ("pages/roundoff.py", "n"), ("pages/roundoff.py", "low"),
                                      ("pages/explorer.py", "x"), ("pages/gradcheck.py", "samples")])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e999", "-1e999"])
def test_non_finite_number_in_the_url_falls_back_to_the_default(page, key, value):
    """Regression: Streamlit 1.67 raised OverflowError for ?inputs=inf on an integer number input."""
    if not (REPO_ROOT / page).is_file():
        pytest.skip(f"{page} is not there yet")
    at = _fresh(page, {key: value})
    _assert_clean(at)
    assert math.isfinite(at.number_input(key=key).value)


@pytest.mark.parametrize("shape", [pytest.param(shape, marks=SHAPE_OVERFLOW) for shape in OVERFLOWING_SHAPES])
def test_gradcheck_page_refuses_an_overflowing_shape_with_the_limit(shape):
    at = _fresh("pages/gradcheck.py", {"shape": shape})
    _assert_clean(at)
    assert "tensor elements" in " ".join(e.value for e in at.error)


@pytest.mark.parametrize("steps", ["zzz", ",".join(["z"] * (LIMITS.backward_steps + 1))])
def test_backward_step_button_after_a_bad_steps_url_shows_a_message(steps):
    """Regression: the step buttons' callback re-read the URL's steps outside its try (an exception)."""
    at = _fresh("pages/backward.py", {"steps": steps})
    at.button(key="step-b").click().run()
    _assert_clean(at)
    assert at.warning or at.error
