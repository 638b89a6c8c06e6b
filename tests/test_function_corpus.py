"""Issue 35, the checker on the code users write: gradlab.gradcheck's default mode and check_layers
on hand-written autograd.Functions (gradlab.testing.functions), right and buggy, in float64,
float32 and bfloat16.

(a) the corpus is what it says: each correct backward is autograd of its plain-torch reference,
each buggy one is off by at least 10 tolerances (in the dtypes it is wrong in) with its twin's
forward; (b) no correct Function fails; (c) a bug is caught when the check fails naming an element
whose gradient really is wrong (gradlab.testing.functions_scoring), per case and as rates
(issue 35: >= 95 % in float64 and float32, >= 90 % in bfloat16, over bugs of >= 10 tolerances);
(d) check_layers names the planted Function, and nothing else, in a causal GPT and a CNN.

Misses of today's engine are ``xfail(strict=True)`` with the engine's reason: they turn into
failures once it is fixed, and the marker must then go.
"""

from __future__ import annotations

import functools

import pytest
import torch
from torch import nn

import gradlab
from gradlab.layers.record import record_calls
from gradlab.testing.functions import BUG_KINDS, DTYPES, by_name, function_corpus
from gradlab.testing.functions_linear import Cumsum
from gradlab.testing.functions_models import CNN_PLACES, GPT_PLACES, CausalGPT, SmallCNN, cnn_input, gpt_tokens
from gradlab.testing.functions_scoring import bug_size, flat_gradient, score, true_gradient, weight_sets

CASES = function_corpus()
CORRECT = [c for c in CASES if c.correct]
BUGGY = [c for c in CASES if not c.correct]
NAME = {torch.float64: "float64", torch.float32: "float32", torch.bfloat16: "bfloat16"}
TARGET = {"float64": 0.95, "float32": 0.95, "bfloat16": 0.90}

#: (case, dtype) -> why today's default check misses it. None now: a backward wrong only below float64
#: fails since autograd's own rounding is allowed for only up to a bound of what rounding can produce
#: (gradlab.check.running.float64_witness.AutogradRounding), no longer up to its distance from float64 autograd.
MISSED: dict[tuple[str, str], str] = {}
#: dtype -> why today's catch rate is under issue 35's target there.
RATE_MISSED: dict[str, str] = {}


@functools.cache
def _size(name: str, dtype: torch.dtype) -> float:
    return bug_size(by_name(name), dtype)


def _counted(case, dtype) -> bool:
    """A bug of >= 10 tolerances in ``dtype`` (issue 35's denominator)."""
    return NAME[dtype] in case.wrong_in and _size(case.name, dtype) >= 10


@functools.cache
def _checked(name: str, dtype: torch.dtype):
    case = by_name(name)
    inputs = case.inputs(dtype)
    return score(case, inputs, gradlab.gradcheck(case.fn, *inputs))


def _ids(case):
    return case.name


# --- (a) the corpus -------------------------------------------------------------------------------

def test_the_corpus_has_every_bug_kind_and_its_twins():
    assert len(CORRECT) >= 18 and len(BUGGY) >= 17
    assert {c.bug for c in BUGGY} == set(BUG_KINDS)
    for c in BUGGY:
        twin = by_name(c.twin)
        assert twin.correct and all(torch.equal(a, b) for a, b in zip(twin.inputs(), c.inputs())), c.name
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CORRECT, ids=_ids)
def test_a_correct_backward_is_autograd_of_its_reference(case):
    inputs = case.inputs(torch.float64)
    for w in weight_sets(case, inputs):
        torch.testing.assert_close(flat_gradient(case.fn, inputs, w), true_gradient(case, inputs, w),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", BUGGY, ids=_ids)
def test_a_bug_is_ten_tolerances_where_it_is_wrong_and_the_forward_is_its_twins(case):
    for dtype in (torch.float64, torch.float32):
        size = _size(case.name, dtype)
        if NAME[dtype] in case.wrong_in:
            assert size >= 10, f"{case.name} is only {size:.1f} {NAME[dtype]} tolerances off"
        else:
            assert size < 1, f"{case.name} should be right in {NAME[dtype]}; {size:.1f} tolerances off"
    for dtype in DTYPES:
        inputs = case.inputs(dtype)
        with torch.no_grad():
            assert torch.equal(case.fn(*inputs), by_name(case.twin).fn(*inputs))


# --- (b) no correct Function fails ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=NAME.get)
@pytest.mark.parametrize("case", CORRECT, ids=_ids)
def test_the_default_check_never_fails_a_correct_function(case, dtype):
    assert _checked(case.name, dtype).verdict != "fail"


# --- (c) bugs caught, naming a wrong element --------------------------------------------------------------

def _catch_params():
    for case in BUGGY:
        for dtype in DTYPES:
            if _counted(case, dtype):
                reason = MISSED.get((case.name, NAME[dtype]))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                yield pytest.param(case, dtype, id=f"{case.name}-{NAME[dtype]}", marks=marks)


@pytest.mark.parametrize("case, dtype", list(_catch_params()))
def test_the_default_check_fails_a_bug_naming_a_wrong_element(case, dtype):
    s = _checked(case.name, dtype)
    assert s.verdict == "fail", f"{case.name} ({case.bug}) in {NAME[dtype]}: {s.verdict}"
    assert s.named_is_wrong, f"{case.name} in {NAME[dtype]}: the named element {s.named} is not a wrong one"


def test_the_known_misses_are_bugs_the_rates_count():
    for name, dtype in MISSED:
        assert _counted(by_name(name), getattr(torch, dtype)), (name, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [pytest.param(d, id=NAME[d], marks=[pytest.mark.xfail(
    strict=True, reason=RATE_MISSED[NAME[d]])] if NAME[d] in RATE_MISSED else []) for d in DTYPES])
def test_catch_rate_meets_issue_35(dtype):
    counted = [c for c in BUGGY if _counted(c, dtype)]
    caught = [c.name for c in counted if _checked(c.name, dtype).caught]
    missed = sorted({c.name for c in counted} - set(caught))
    assert len(caught) / len(counted) >= TARGET[NAME[dtype]], f"{len(caught)}/{len(counted)}; missed {missed}"


# --- (d) check_layers names the planted Function ---------------------------------------------------------

@pytest.mark.slow
def test_check_layers_passes_the_clean_gpt():
    r = gradlab.check_layers(CausalGPT(), gpt_tokens())
    assert r.failing_modules == () and r.verdict != "fail", r.answer


def test_check_layers_passes_the_clean_cnn():
    r = gradlab.check_layers(SmallCNN(), cnn_input())
    assert r.failing_modules == () and r.verdict != "fail", r.answer


class _Inline(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        return self.b(Cumsum.apply(self.a(x)))


#: Whether check_layers checks a module whose own forward applies a Function between its children
#: (the committed engine did not; the tree's gradlab/layers now does).
INLINE_CHECKED = any(c.path == "" for c in record_calls(_Inline(), (torch.ones(1, 2),), {}))
INLINE = ("issue 35: check_layers checks leaves and modules whose own forward returns a custom Function's output; "
          "the attention Function applied inline between the children qkv and proj is neither, so it is never "
          "checked and the model passes")


@pytest.mark.slow
@pytest.mark.parametrize("plant", [pytest.param(p, marks=pytest.mark.xfail(not INLINE_CHECKED, strict=True,
                                                                           reason=INLINE) if "attn" in p else ())
                                   for p in GPT_PLACES])
def test_check_layers_names_the_bug_planted_in_the_gpt(plant):
    r = gradlab.check_layers(CausalGPT(plant=plant), gpt_tokens())
    assert r.failing_modules == (plant,), r.answer


@pytest.mark.parametrize("plant", CNN_PLACES)
def test_check_layers_names_the_bug_planted_in_the_cnn(plant):
    r = gradlab.check_layers(SmallCNN(plant=plant), cnn_input())
    assert r.failing_modules == (plant,), r.answer
