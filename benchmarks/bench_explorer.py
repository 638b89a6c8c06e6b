"""How long does the Explorer take to rerun after a widget change? (AppTest, warm.)

Opens the Explorer under app.py with AppTest, warms it (first run, imports,
caches), then times ``--reruns`` reruns, each after changing one control the way
a user would: a new x (a new sweep: cache miss), a different dtype set, or a
display option (chart only, inside the fragment). Prints the median per kind,
and the ratio against a bare rerun of a trivial one-line page under the same
AppTest harness, so the harness's own cost is visible. Target: median under
300 ms. This prints; it does not assert (a benchmark, not a timed test).

    python -m benchmarks.bench_explorer
    python -m benchmarks.bench_explorer --reruns 30
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO_ROOT = Path(__file__).resolve().parents[1]

TARGET_MS = 300
TIMEOUT_S = 120


def _trivial_page() -> None:
    import streamlit as st

    st.number_input("x", key="x", value=0.5)


def _timed(at: AppTest, change) -> float:
    start = time.perf_counter()
    change(at).run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise SystemExit(f"the page raised: {[e.message for e in at.exception]}")
    return elapsed * 1000


def _explorer() -> AppTest:
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=TIMEOUT_S)
    at.run()
    at.switch_page("pages/explorer.py").run()
    return at


def _x_changes(n: int):
    # A fresh x each time: every rerun computes a new sweep (no cache hit).
    return [lambda at, i=i: at.number_input(key="x").set_value(1.2 + 0.01 * (i + 1)) for i in range(n)]


def _dtype_changes(n: int):
    sets = (["float32"], ["float16", "float64"], ["bfloat16", "float32"], ["float32", "float64"])
    return [lambda at, i=i: at.sidebar.multiselect(key="dtypes").set_value(sets[i % len(sets)])
            for i in range(n)]


def _display_changes(n: int):
    return [lambda at, i=i: at.radio(key="error").set_value(("absolute", "relative")[i % 2])
            for i in range(n)]


def _median(at: AppTest, changes) -> float:
    return statistics.median(_timed(at, change) for change in changes)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=15, help="timed reruns per kind of change")
    args = parser.parse_args(argv)

    bare = AppTest.from_function(_trivial_page, default_timeout=TIMEOUT_S).run()
    bare_ms = _median(bare, [lambda at, i=i: at.number_input(key="x").set_value(i / 7)
                             for i in range(args.reruns)])
    at = _explorer()
    _timed(at, _x_changes(1)[0])  # warm the sweep path once
    kinds = {
        "x changed (new sweep)": _x_changes(args.reruns),
        "dtypes changed (cached after the first cycle)": _dtype_changes(args.reruns),
        "display option (error kind)": _display_changes(args.reruns),
    }
    print(f"bare rerun of a trivial page: median {bare_ms:.1f} ms")
    for label, changes in kinds.items():
        ms = _median(at, changes)
        verdict = "ok" if ms < TARGET_MS else "over target"
        print(f"Explorer, {label}: median {ms:.1f} ms over {args.reruns} reruns, "
              f"{ms / bare_ms:.1f}x bare ({verdict}; target < {TARGET_MS} ms)")


if __name__ == "__main__":
    main()
