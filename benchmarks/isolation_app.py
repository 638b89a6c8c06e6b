"""A one-page Streamlit app for measuring how one session's heavy request affects another's.

``?heavy=1&expr=...&x=...&mode=pool`` runs the Explorer's work through
:func:`gradlab.ui.worker_calls.heavy` (a worker process, ended at its limit) and
writes the exact derivative's digits with format_mp, as the pages will;
``mode=thread`` does what the Explorer did before: the sweep in the session's
own thread, sympy's LaTeX of the real-x derivative, mpmath.nstr of the digits
(for the before/after comparison). Without ``heavy`` the page is a trivial
rerun. ``formulas=1`` adds the LaTeX step.
Used by ``benchmarks/bench_isolation.py`` and ``tests/test_isolation_server.py``.
"""

import time

import mpmath
import streamlit as st
import sympy

from gradlab.step_sweep.engine import SweepSettings, run_sweep
from gradlab.literal_text import markdown_literal
from gradlab.numerics.expressions import parse
from gradlab.numerics.mp_format import format_mp
from gradlab.labs.explorer import formulas, view
from gradlab.ui.worker_calls import heavy
from gradlab.ui.runtime import configure_runtime, release_session_on_disconnect

configure_runtime()
release_session_on_disconnect()
query = st.query_params
if query.get("heavy"):
    start = time.perf_counter()
    settings = SweepSettings(query.get("expr", "x**2"), float(query.get("x", "1")))
    try:
        if query.get("mode") == "thread":
            result = run_sweep(settings)
            if query.get("formulas"):
                sympy.latex(parse(settings.expression).derivative())
            digits = mpmath.nstr(result.reference.d1, 20) if result.reference.defined else ""
        else:
            result = heavy(view, settings).result
            if query.get("formulas"):
                heavy(formulas, settings.expression)
            digits = format_mp(result.reference.d1, 20) if result.reference.defined else ""
        st.success(f"done in {time.perf_counter() - start:.2f} s")
    except Exception as err:  # noqa: BLE001 - the sentence is what is measured
        st.error(markdown_literal(f"{type(err).__name__} after {time.perf_counter() - start:.2f} s: {err}"))
else:
    st.write("trivial")
