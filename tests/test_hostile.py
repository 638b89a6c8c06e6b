"""A corpus of hostile expressions: each is refused in milliseconds and has no side effect.

The literal corpus is ``tests/hostile_expressions.txt`` (one expression per line);
generated cases (megabyte inputs, a million digits, deep nesting, NUL) are built
below. Some hostile-looking expressions are *accepted* by design and must stay
cheap: they parse in milliseconds and evaluate on a tensor in milliseconds.

"No side effect" means: no file such as /tmp/gradlab-pwned appears, no module is
imported (``sys.modules`` is unchanged), the working directory is unchanged.
Times are the best of a few tries after a warm-up, so a busy CI box does not fail them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch
from cost import assert_costs_at_most

from gradlab.cli import main as cli
from gradlab.numerics.expressions import Expression, ExpressionError, _parse_cached, parse
from gradlab.limits import LIMITS

CORPUS_FILE = Path(__file__).with_name("hostile_expressions.txt")
PWNED = (Path("/tmp/gradlab-pwned"), Path("/tmp/pwned"))
#: Refused, or accepted and evaluated, within this many calibrations of CPU time (cost.py):
#: about 18 ms here, where the costliest corpus entry takes 0.3 calibrations; a parse that
#: blows up exponentially takes thousands.
CALIBRATIONS = 5
EVAL_ELEMENTS = 1_000
MEGABYTE = 2**20
MATHS_PACKAGES = frozenset({"sympy", "mpmath", "torch"})


def _corpus() -> list[str]:
    lines = CORPUS_FILE.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _nested(fn: str, depth: int, inner: str = "x") -> str:
    return f"{fn}(" * depth + inner + ")" * depth


GENERATED = {
    "sin-500-deep": _nested("sin", 500),
    "unclosed-sin-500": "sin(" * 500,
    "parens-100k": "(" * 100_000 + "x" + ")" * 100_000,
    "unbalanced-parens-1MB": "(" * MEGABYTE,
    "sum-1MB": "x+" * (MEGABYTE // 2) + "x",
    "power-tower-1MB": "x**" * (MEGABYTE // 3) + "x",
    "digits-1e6": "1" * 10**6,
    "digits-1e6-times-x": "9" * 10**6 + "*x",
    "digits-299": "9" * 299,
    "float-1e6-digits": "0." + "1" * 10**6,
    "nul": "x\x00",
    "nul-1MB": "\x00" * MEGABYTE,
    "rtl-override": "\u202ex+1",
    "unary-minus-299": "-" * 299 + "x",
    "sin-depth-limit": _nested("sin", LIMITS.expression_depth),
    "one-char-over": "x" + " " * (LIMITS.expression_chars - 2) + "+1",
    "emoji-10kB": "😀" * 10_000,
    "newlines": "x\n+\n1",
}

ACCEPTED = {
    "x**x**x": "x**x**x",
    "x**x**x**x**x**x": "x**x**x**x**x**x",
    "149-parens": "(" * 149 + "x" + ")" * 149,
    "sin-23-deep": _nested("sin", LIMITS.expression_depth - 1),
    "tan-23-deep": _nested("tan", LIMITS.expression_depth - 1),
    "exp-exp-exp": "exp(exp(exp(x)))",
    "x**100": "x**100",
    "x**-100": "x**-100",
    "big-literal": "1e100*x",
    "big-constant": "x*(1e100*1e100*1e100)",
    "minus-23": "-" * (LIMITS.expression_depth - 1) + "x",
    "sigmoid-softplus": "sigmoid(softplus(sigmoid(softplus(sigmoid(softplus(x))))))",
    "tiny-literal": "5e-324*x",
    "underflow-literal": "1e-400+x",
    "hex-literal": "0xff*x",
    "product-of-20": "*".join(f"sin(x+{k})" for k in range(1, 21)),
}


def _all_refused() -> list[tuple[str, str]]:
    cases = [(repr(text)[:48], text) for text in _corpus()]
    return cases + list(GENERATED.items())


REFUSED = _all_refused()


@pytest.fixture(scope="module", autouse=True)
def warm_up():
    """Pay lazy imports (sympy, the ast module's helpers) before anything is timed or compared."""
    parse("sin(x) + 2**3 - log(x)/e")
    for text in ("x.y", "foo(x)", "9**9**9", "sin(x", "1e400", "x\u200b"):
        with pytest.raises(ExpressionError):
            parse(text)
    for path in PWNED:
        path.unlink(missing_ok=True)


def run_cli(argv: list[str]) -> int:
    """``python -m gradlab`` in-process: the exit status, whether returned or raised by argparse."""
    try:
        return cli.main(argv)
    except SystemExit as exit_:
        return exit_.code


def _refuse(text: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert str(info.value).strip(), "a refusal always says why"


def test_corpus_is_not_empty_and_has_no_duplicates():
    corpus = _corpus()
    assert len(corpus) > 100
    assert len(set(corpus)) == len(corpus)


@pytest.mark.parametrize("text", [t for _, t in REFUSED], ids=[i for i, _ in REFUSED])
def test_hostile_expression_is_refused_quickly_without_side_effects(text):
    modules, cwd = set(sys.modules), os.getcwd()
    assert_costs_at_most(lambda: _refuse(text), CALIBRATIONS, "the refusal")
    assert not any(path.exists() for path in PWNED)
    assert set(sys.modules) - modules == set(), "refusing an expression imported a module"
    assert os.getcwd() == cwd


@pytest.mark.parametrize("text", list(ACCEPTED.values()), ids=list(ACCEPTED))
def test_accepted_hostile_looking_expression_stays_cheap(text):
    modules = set(sys.modules)
    # uncached: the real cost
    assert_costs_at_most(lambda: _parse_cached.__wrapped__(text.strip()), CALIBRATIONS, "the parse")
    expression = parse(text)
    assert isinstance(expression, Expression)
    for dtype in (torch.float64, torch.float32):
        x = torch.linspace(0.1, 2.0, EVAL_ELEMENTS, dtype=dtype)
        assert_costs_at_most(lambda: expression(x), CALIBRATIONS, f"evaluating in {dtype}")
        assert expression(x).shape == x.shape
    # Building a valid expression may load more of sympy's own lazily imported modules; nothing else.
    foreign = {m for m in set(sys.modules) - modules if m.split(".")[0] not in MATHS_PACKAGES}
    assert foreign == set()
    assert not any(path.exists() for path in PWNED)


@pytest.mark.parametrize("text", [t for _, t in REFUSED if "\x00" not in t],
                         ids=[i for i, t in REFUSED if "\x00" not in t])
def test_cli_refuses_hostile_expression_with_one_error_line(text, capsys):
    """argv cannot hold NUL, so those cases are left out; '--' lets an expression start with '-'."""
    status = run_cli(["sweep", "--at", "1", "--points", "3", "--dtype", "float64",
                      "--scheme", "central", "--", text])
    out, err = capsys.readouterr()
    assert status == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err[:300]
    assert "Traceback" not in err and out == ""
    assert not any(path.exists() for path in PWNED)
