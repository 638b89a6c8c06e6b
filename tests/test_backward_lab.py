"""backward(gradient=v) (the backward(gradient) question): expected values from the chain rule, not from the code."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradlab.labs.backward.engine import (
    EMPTY_NOTE,
    MATRIX_EXAMPLES,
    QUESTION_CODE,
    QUESTION_PRINTOUT,
    STEP_CODES,
    BackwardSession,
    ExampleVJPSettings,
    VJPSettings,
    empty_demo,
    empty_example,
    example_vjp,
    matrix_vjp,
    parse_vector,
    vector_jacobian,
)
from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import DTYPE_NAMES, facts

SEED_A, SEED_B, SEED_C, SEED_V = (1.0, 2.0, 3.0), (3.0, 4.0, 5.0), (6.0, 7.0, 8.0), (0.1, 1.0, 0.0001)


def _close(got, want, dtype="float32", ulps=2):
    # A couple of roundings of the dtype: v is rounded, then one product or quotient.
    tol = ulps * facts(dtype).eps
    return all(math.isclose(g, w, rel_tol=tol) for g, w in zip(got, want))


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_seed_grads_are_3v_4bv_v_over_c(dtype):
    r = vector_jacobian(VJPSettings(SEED_A, SEED_B, SEED_C, SEED_V, dtype))
    assert _close(r.grads["a"], [3 * v for v in SEED_V], dtype)
    assert _close(r.grads["b"], [4 * b * v for b, v in zip(SEED_B, SEED_V)], dtype)
    assert _close(r.grads["c"], [v / c for c, v in zip(SEED_C, SEED_V)], dtype)


def test_seed_printed_numbers():
    # The question printed (float32, 5 significant digits):
    printed = {
        "a": (3.0000e-01, 3.0000e00, 3.0000e-04),
        "b": (1.2000e00, 1.6000e01, 2.0000e-03),
        "c": (1.6667e-02, 1.4286e-01, 1.2500e-05),
    }
    r = vector_jacobian(VJPSettings())
    for name, values in printed.items():
        assert all(math.isclose(g, p, rel_tol=5e-5) for g, p in zip(r.grads[name], values))


def test_jacobian_blocks_are_diagonal_3_4b_1_over_c():
    r = vector_jacobian(VJPSettings())
    assert np.allclose(r.jacobians["a"], 3 * np.eye(3))
    assert np.allclose(r.jacobians["b"], np.diag([4 * b for b in SEED_B]))
    assert np.allclose(r.jacobians["c"], np.diag([1 / c for c in SEED_C]), rtol=1e-7)
    for name in "abc":
        assert _close(r.vjp[name], r.grads[name])


def test_backward_v_equals_backward_of_weighted_sum():
    assert vector_jacobian(VJPSettings()).backward_equals_weighted_sum
    assert vector_jacobian(VJPSettings(v=(-2.5, 0.0, 7.0), dtype="float64")).backward_equals_weighted_sum


def test_seed_example_2_scalar_inputs():
    # a=0.1, b=1, c=0.1, no gradient argument (v = 1): grads 3, 4b = 4, 1/c = 10.
    r = vector_jacobian(VJPSettings((0.1,), (1.0,), (0.1,), (1.0,)))
    assert r.grads["a"] == (3.0,) and r.grads["b"] == (4.0,)
    assert math.isclose(r.grads["c"][0], 10.0, rel_tol=facts("float32").eps)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"b": (1.0, 2.0)}, "same length"),
        ({"c": (1.0, -2.0, 3.0)}, "c > 0"),
        ({"dtype": "int32"}, "Unknown dtype"),
    ],
)
def test_vjp_misuse(kwargs, match):
    with pytest.raises(GradLabError, match=match):
        VJPSettings(**kwargs).validated()


@pytest.mark.parametrize("text,expected", [("1,2,3", (1.0, 2.0, 3.0)), ("[0.1, 1.0, 0.0001]", SEED_V), (" 4  5 ", (4.0, 5.0))])
def test_parse_vector(text, expected):
    assert parse_vector(text) == expected


@pytest.mark.parametrize("text", ["", "1, x", "1, nan", "[]", "1" * 400])
def test_parse_vector_refuses(text):
    with pytest.raises(GradLabError):
        parse_vector(text)


# ---------------------------------------------------------------- accumulation


def test_accumulation_and_retain_graph():
    records = BackwardSession.from_text("br,b,b,z,f,b").replay()
    assert [r.ok for r in records] == [True, True, False, True, True, True]
    one = records[0].grads["a"]
    assert _close(records[1].grads["a"], [2 * g for g in one])  # .grad accumulates: 3v + 3v
    assert records[2].grads == records[1].grads  # a refused step changes nothing
    assert "second time" in records[2].message and "retain_graph=True" in records[2].message
    assert records[3].grads == {"a": None, "b": None, "c": None}
    assert records[5].grads["a"] == one  # a new forward gives a fresh graph


def test_backward_without_gradient_on_a_vector_is_refused_by_pytorch():
    (record,) = BackwardSession.from_text("bn").replay()
    assert not record.ok and "scalar outputs" in record.message


def test_session_is_plain_values_and_deterministic():
    s = BackwardSession().backward(retain_graph=True).backward().zero_grad()
    assert s.to_text() == "br,b,z"
    assert BackwardSession.from_text(s.to_text()) == s
    # Each replay starts from fresh leaves: the second gives the chain rule's values again (3v,
    # 4bv, v/c after "br", twice that after "b", none after "z"), not the first's accumulated on.
    for records in (s.replay(), s.replay()):
        assert [(r.step, r.ok) for r in records] == [("br", True), ("b", True), ("z", True)]
        for record, times in zip(records[:2], (1, 2)):
            assert _close(record.grads["a"], [times * 3 * v for v in SEED_V])
            assert _close(record.grads["b"], [times * 4 * b * v for b, v in zip(SEED_B, SEED_V)])
            assert _close(record.grads["c"], [times * v / c for c, v in zip(SEED_C, SEED_V)])
        assert records[2].grads == {"a": None, "b": None, "c": None}
    assert s.reset().steps == ()


def test_unknown_step_lists_the_known_ones():
    with pytest.raises(GradLabError, match="Unknown step 'q'") as err:
        BackwardSession.from_text("b,q")
    for code in STEP_CODES:
        assert code in str(err.value)


def test_then_adds_a_step_by_its_code_and_refuses_an_unknown_one():
    assert BackwardSession().then("br").then("z") == BackwardSession().backward(retain_graph=True).zero_grad()
    with pytest.raises(GradLabError, match="Unknown step 'q'"):
        BackwardSession().then("q")


# ---------------------------------------------------------------- non-diagonal Jacobian


def test_matrix_vjp_is_weighted_sum_of_rows():
    w = ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0))
    r = matrix_vjp(w, (1.0, 1.0, 1.0), (1.0, 0.5))
    # 1*[1,2,3] + 0.5*[4,5,6] = [3, 4.5, 6]
    assert r.vjp == (3.0, 4.5, 6.0) and r.grad == (3.0, 4.5, 6.0)
    assert np.array_equal(r.jacobian, np.array(w))


@pytest.mark.parametrize("name", list(MATRIX_EXAMPLES))
def test_matrix_examples(name):
    e = MATRIX_EXAMPLES[name]
    r = matrix_vjp(e.w, e.x, e.v)
    expected = tuple(sum(vi * row[j] for vi, row in zip(e.v, e.w)) for j in range(len(e.x)))
    assert r.grad == pytest.approx(expected)


def test_seed_one_hot_picks_a_row_of_2I():
    e = MATRIX_EXAMPLES["twice"]
    assert matrix_vjp(e.w, e.x, (0.0, 1.0, 0.0, 0.0)).grad == (0.0, 2.0, 0.0, 0.0)
    assert matrix_vjp(e.w, e.x, (1.0, 1.0, 1.0, 1.0)).grad == (2.0, 2.0, 2.0, 2.0)


def test_example_vjp_weights_the_examples_rows():
    # W = [[1, 2, 3], [4, 5, 6]], v = (1, 0.5): 1*(1, 2, 3) + 0.5*(4, 5, 6) = (3, 4.5, 6).
    assert example_vjp(ExampleVJPSettings("wx", (1.0, 0.5))).grad == (3.0, 4.5, 6.0)
    # z = 2x: a one-hot v picks one row of J = 2I.
    assert example_vjp(ExampleVJPSettings("twice", (0.0, 0.0, 1.0, 0.0))).grad == (0.0, 0.0, 2.0, 0.0)
    with pytest.raises(GradLabError, match="Unknown example"):
        example_vjp(ExampleVJPSettings("nope", (1.0,)))


def test_matrix_vjp_shape_errors():
    with pytest.raises(GradLabError, match="x needs 3"):
        matrix_vjp(((1.0, 2.0, 3.0),), (1.0,), (1.0,))


# ---------------------------------------------------------------- torch.empty


def test_empty_demo_shows_arbitrary_values_next_to_zeros():
    demo = empty_demo(size=3, calls=2)
    assert len(demo.empty_calls) == 2 and all(len(c) == 3 for c in demo.empty_calls)
    assert demo.zeros == (0.0, 0.0, 0.0)
    assert "pin_memory" in EMPTY_NOTE
    with pytest.raises(GradLabError):
        empty_demo(size=0)


# The backward(gradient) question's Example 3 printed these three lines, as posted.
PRINTED = {"a": "tensor([3.3003])", "b": "tensor([0.])", "c": "tensor([inf])"}


def test_the_questions_printout_is_reproduced_character_for_character():
    assert QUESTION_PRINTOUT == PRINTED
    for line in (f"print({k}.grad) # {text}" for k, text in PRINTED.items()):
        assert line in QUESTION_CODE
    ex = empty_example(a=1.0, b=0.0, c=0.0)
    assert ex.printed == PRINTED and ex.matches_question


def test_what_the_printout_says_about_a_b_and_c():
    # y has 1 entry, gradients 3: each .grad receives the sum of the weights, 0.1 + 1 + 0.0001.
    weight_sum = float(np.float32(0.1) + np.float32(1.0) + np.float32(0.0001))
    # a.grad = 3 * sum(v) whatever a is: the printout cannot tell a's value ...
    for a in (-5.0, 0.0, 1.0, 1e6):
        ex = empty_example(a=a)
        assert ex.grads["a"] == pytest.approx(3 * weight_sum, rel=1e-6) and ex.printed["a"] == PRINTED["a"]
    # ... b.grad = 4 b sum(v) is 0 only for b = 0, c.grad = sum(v)/c is +inf only for c = +0.
    assert empty_example(b=0.5).printed["b"] != PRINTED["b"]
    assert empty_example(c=1.0).printed["c"] != PRINTED["c"]
    assert empty_example(c=-0.0).printed["c"] != PRINTED["c"]  # -inf
    assert empty_example().y == -math.inf  # log(0)


def test_the_note_agrees_with_the_printout():
    # The words the page shows next to the printout: b and c were 0, a cannot be read off,
    # and the numbers it quotes are the printed ones.
    assert "b was 0" in EMPTY_NOTE and "c was 0" in EMPTY_NOTE
    assert "a's value cannot be read off" in EMPTY_NOTE
    assert "came out as 0" not in EMPTY_NOTE and "a was 0" not in EMPTY_NOTE  # the old, wrong claim
    assert "3.3003" in EMPTY_NOTE and "1.1001" in EMPTY_NOTE and "inf" in EMPTY_NOTE
    assert f"{3 * 1.1001:.4f}" == "3.3003"
