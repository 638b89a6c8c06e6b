"""GradLab's numbers as ratios to the floor app's, measured in the same run, against their targets.

The floor (``benchmarks/floor_app.py``: one slider, one Plotly chart, nothing else)
is the least a Streamlit page costs on this machine, so a ratio to it holds on any
machine where an absolute time does not. Two readers:

* ``load_test.py --against-floor``: :func:`classroom_bar`, the same class against
  GradLab and the floor (server CPU per rerun and its ratio, class and burst p95,
  errors, RSS after the settle); with ``--changing`` also :func:`changing_bar`, a class
  moving between presets with one control changed (CPU ratio, each page's p95, errors);
* ``bench_browser.py --floor``: :func:`felt_ratios`, each page's first chart (first
  and returning visit) and one interaction against the floor's.

No servers and no browsers here: plain arithmetic on measured numbers.

>>> [r["met"] for r in felt_ratios({"load": 3.0, "return": 1.2, "input": 0.3},
...                                {"load": 2.5, "return": 0.6, "input": 0.2})]
[True, False, True]
"""

from __future__ import annotations

import math

#: Felt in Chromium, page / floor: key in bench_browser's measures -> (what it is, target ratio).
FELT_TARGETS: dict[str, tuple[str, float]] = {
    "load": ("first visit", 1.25),
    "return": ("returning", 1.5),
    "input": ("interaction", 1.5),
}
CPU_RATIO_TARGET = 2.0  # server CPU per rerun under the class, GradLab / floor
CLASS_P95_TARGET = 1.0  # seconds, one `streamlit run app.py`
BURST_P95_TARGET = 2.0
CHANGING_PAGE_P95_TARGET = 2.0  # seconds on every page: a class moving between presets, one control changed
RSS_GROWTH_TARGET = 0.10  # RSS after the settle within 10 % of before the class ...
RSS_SETTLE_S = 60.0  # ... a minute after the last tab closed


def ratio(value: float | None, floor: float | None) -> float | None:
    """``value / floor``, or None when either is missing or the floor is not positive.

    >>> ratio(3.0, 2.0), ratio(None, 2.0), ratio(1.0, 0.0)
    (1.5, None, None)
    """
    if value is None or floor is None or not floor > 0 or math.isnan(value):
        return None
    return value / floor


def felt_ratios(page: dict, floor: dict) -> list[dict]:
    """One row per felt-speed target: name, seconds, the floor's, ratio, target, met (None: not measured).

    >>> felt_ratios({"load": 2.0, "return": None, "input": 0.1}, {"load": 1.0, "return": 0.5, "input": 0.1})[0]
    {'name': 'first visit', 'seconds': 2.0, 'floor': 1.0, 'ratio': 2.0, 'target': 1.25, 'met': False}
    """
    rows = []
    for key, (name, target) in FELT_TARGETS.items():
        r = ratio(page.get(key), floor.get(key))
        rows.append({"name": name, "seconds": page.get(key), "floor": floor.get(key), "ratio": r,
                     "target": target, "met": None if r is None else r <= target})
    return rows


def tally(rows: list[dict]) -> tuple[int, int, int]:
    """(met, measured, not measured) over rows with a ``met`` of True, False or None.

    >>> tally([{"met": True}, {"met": False}, {"met": None}, {"met": True}])
    (2, 3, 1)
    """
    measured = [r["met"] for r in rows if r["met"] is not None]
    return sum(measured), len(measured), len(rows) - len(measured)


def classroom_bar(gradlab: dict, floor: dict, settle: float) -> list[dict]:
    """The classroom bar's rows from each run's measures (:func:`class_measures`).

    Each row: name, GradLab's value, the floor's, their ratio (None where a ratio means
    nothing), the target in words, met. Only the CPU row's target is a ratio; the others
    are GradLab's own (the floor's value is shown beside it for scale). The memory row is
    met only after a settle of a minute or more: a shorter one says too little.

    >>> m = dict(cpu_per_rerun=0.02, class_p95=0.5, burst_p95=1.0, errors=0, rss_before=1000, rss_after=1050)
    >>> [(r["name"], r["met"]) for r in classroom_bar(m, dict(m, cpu_per_rerun=0.01), settle=60)]
    [('server CPU per rerun', True), ('class p95', True), ('burst p95', True), ('errors', True), ('RSS after the settle', True)]
    """
    def growth(m: dict) -> float | None:
        return (m["rss_after"] - m["rss_before"]) / m["rss_before"] if m.get("rss_before") else None

    cpu = ratio(gradlab["cpu_per_rerun"], floor["cpu_per_rerun"])
    grown = growth(gradlab)
    rows = [
        ("server CPU per rerun", gradlab["cpu_per_rerun"], floor["cpu_per_rerun"], cpu,
         f"<= {CPU_RATIO_TARGET:g}x the floor's", None if cpu is None else cpu <= CPU_RATIO_TARGET),
        ("class p95", gradlab["class_p95"], floor["class_p95"], None, f"< {CLASS_P95_TARGET:g} s",
         gradlab["class_p95"] < CLASS_P95_TARGET),
        ("burst p95", gradlab["burst_p95"], floor["burst_p95"], None, f"< {BURST_P95_TARGET:g} s",
         None if math.isnan(gradlab["burst_p95"]) else gradlab["burst_p95"] < BURST_P95_TARGET),
        ("errors", gradlab["errors"], floor["errors"], None, "0", gradlab["errors"] == 0),
        ("RSS after the settle", grown, growth(floor), None,
         f"within {RSS_GROWTH_TARGET:.0%} after {RSS_SETTLE_S:.0f} s",
         None if grown is None or settle < RSS_SETTLE_S else abs(grown) <= RSS_GROWTH_TARGET),
    ]
    return [dict(zip(("name", "gradlab", "floor", "ratio", "target", "met"), row, strict=True)) for row in rows]


def class_measures(summary: dict, info: dict) -> dict:
    """The bar's inputs from one load-test run (``load_test.summarise``'s summary and the run's info).

    Server CPU per rerun is the server's CPU seconds over the class phase divided by the
    reruns the class asked for (each open, link or widget change is one script run).
    """
    targets = summary["targets"]
    return {
        "cpu_per_rerun": info["class_cpu"] * info["class_seconds"] / max(1, info["class_requests"]),
        "reruns": info["class_requests"],
        "class_p95": targets["class_p95"],
        "burst_p95": targets["burst_p95"],
        "errors": targets["errors"] + targets["exceptions"] + targets["page_not_found"],
        "rss_before": info["rss_before"],
        "rss_after": info["rss_after"],
        "other_cores": info.get("class_other_cores", float("nan")),
        "page_p95": {page: v["p95"] for page, v in summary.get("pages", {}).items()},
    }


def changing_bar(changing: dict, floor: dict) -> list[dict]:
    """The changing class's rows (same keys as :func:`classroom_bar`'s): server CPU per rerun
    against the floor's (<= 2x), p95 < 2 s on each page of the class (``page_p95``), errors 0.

    >>> m = dict(cpu_per_rerun=0.03, errors=0, page_p95={"grid": 0.4, "roundoff": 2.5})
    >>> [(r["name"], r["met"]) for r in changing_bar(m, dict(cpu_per_rerun=0.01, class_p95=0.1))]
    [('server CPU per rerun', False), ('p95 grid', True), ('p95 roundoff', False), ('errors', True)]
    """
    cpu = ratio(changing["cpu_per_rerun"], floor["cpu_per_rerun"])
    rows = [("server CPU per rerun", changing["cpu_per_rerun"], floor["cpu_per_rerun"], cpu,
             f"<= {CPU_RATIO_TARGET:g}x the floor's", None if cpu is None else cpu <= CPU_RATIO_TARGET)]
    for page, p95 in sorted(changing["page_p95"].items()):
        rows.append((f"p95 {page}", p95, floor.get("class_p95"), None, f"< {CHANGING_PAGE_P95_TARGET:g} s",
                     None if math.isnan(p95) else p95 < CHANGING_PAGE_P95_TARGET))
    rows.append(("errors", changing["errors"], floor.get("errors"), None, "0", changing["errors"] == 0))
    return [dict(zip(("name", "gradlab", "floor", "ratio", "target", "met"), row, strict=True)) for row in rows]


def verdict(met: bool | None) -> str:
    """'met', 'MISSED', or '-' when the target could not be judged.

    >>> verdict(True), verdict(False), verdict(None)
    ('met', 'MISSED', '-')
    """
    return "-" if met is None else ("met" if met else "MISSED")
