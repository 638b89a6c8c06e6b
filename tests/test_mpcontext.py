"""mpmath precision under threads: private contexts neither wait for nor feel other threads.

The Streamlit server computes every visitor's exact reference in that visitor's
thread of one process; mpmath's global context (``mpmath.mp``) is shared by all of
them, and sympy changes its precision too.
"""

import sys
import threading

import mpmath
import pytest
import sympy

from gradlab.numerics.expressions import X
from gradlab.numerics.mp_precision import MP_LOCK, private_digits, to_shared, working_digits
from gradlab.numerics.exact_derivatives import mp_evaluate

# Known constants (not computed by the code under test).
SQRT2_60 = "1.41421356237309504880168872420969807856967187537694807317668"
E_60 = "2.71828182845904523536028747135266249775724709369995957496697"


def _digits(value, n=60) -> str:
    with working_digits(n + 10):
        return mpmath.nstr(value, n, strip_zeros=False)


@pytest.mark.parametrize(("expr", "x", "expected"), [
    (sympy.sqrt(2 * X), 1.0, SQRT2_60),
    (sympy.exp(X), 1.0, E_60),
    (sympy.sqrt(X) * sympy.exp(X) / sympy.exp(X), 2.0, SQRT2_60),
], ids=["sqrt(2x)", "exp(x)", "sqrt(x)exp(x)/exp(x)"])
def test_references_keep_their_digits_while_another_thread_changes_the_global_precision(expr, x, expected):
    stop = threading.Event()

    def meddle() -> None:  # what sympy's evalf does to mpmath.mp, without any lock
        while not stop.is_set():
            mpmath.mp.dps = 15
            mpmath.mp.dps = 200

    meddler = threading.Thread(target=meddle, daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so the meddling lands mid-evaluation
    meddler.start()
    try:
        values = [mp_evaluate(expr, x, 70) for _ in range(200)]
    finally:
        stop.set()
        meddler.join()
        sys.setswitchinterval(interval)
        mpmath.mp.dps = 15
    assert {_digits(v) for v in values} == {expected}


def test_a_reference_does_not_wait_for_a_thread_holding_the_global_precision():
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with MP_LOCK:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    held.wait(5)
    result: list = []
    worker = threading.Thread(target=lambda: result.append(mp_evaluate(sympy.exp(X), 1.0, 60)), daemon=True)
    worker.start()
    worker.join(5)
    finished_while_held = bool(result)
    release.set()
    holder.join(5)
    worker.join(5)
    assert finished_while_held, "mp_evaluate waited for MP_LOCK"
    assert _digits(result[0]) == E_60


def test_a_private_context_is_lent_to_one_caller_at_a_time():
    with private_digits(30) as a, private_digits(40) as b:
        assert a is not b
        assert (a.dps, b.dps) == (30, 40)
    assert mpmath.mp.dps == 15  # the global context is untouched


def test_shared_values_keep_every_bit_after_the_private_context_moves_on():
    with private_digits(60) as ctx:
        third = ctx.mpf(1) / 3
    shared = to_shared(third)
    with private_digits(5):  # the same context, lent again at a low precision
        pass
    assert shared._mpf_ == third._mpf_
    assert _digits(shared, 55) == "0." + "3" * 55
