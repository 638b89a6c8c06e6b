"""The benchmarks' ratio-to-the-floor tables: the arithmetic and the targets' boundaries.

``benchmarks/floor_ratios.py`` turns measured numbers into the rows that
``load_test.py --against-floor`` and ``bench_browser.py --floor`` print; a wrong
comparison there would print "met" for a missed target. The numbers below are chosen
by hand, so each expected ratio and verdict is known without running the code. The
class's preset links: every preset of the registry is among them.
"""

from __future__ import annotations

import math

import pytest

from benchmarks.floor_ratios import class_measures, classroom_bar, felt_ratios, ratio, tally
from benchmarks.class_links import all_pages, page_links, preset_coverage
from gradlab.teaching.presets import PRESETS, presets_for

FLOOR = dict(cpu_per_rerun=0.012, class_p95=0.05, burst_p95=0.1, errors=0, rss_before=80_000, rss_after=80_400)


def _bar(settle: float = 60.0, **gradlab) -> dict[str, dict]:
    base = dict(cpu_per_rerun=0.024, class_p95=0.9, burst_p95=1.5, errors=0, rss_before=1000, rss_after=1100)
    return {r["name"]: r for r in classroom_bar({**base, **gradlab}, FLOOR, settle)}


def test_cpu_ratio_is_gradlab_over_floor_and_two_is_still_met():
    at_two = _bar()["server CPU per rerun"]
    assert at_two["ratio"] == pytest.approx(2.0) and at_two["met"] is True  # 24 ms / 12 ms
    over = _bar(cpu_per_rerun=0.030)["server CPU per rerun"]
    assert over["ratio"] == pytest.approx(2.5) and over["met"] is False  # 30 ms / 12 ms


def test_p95_targets_are_strict_bounds_on_gradlab_alone():
    assert _bar(class_p95=0.999)["class p95"]["met"] is True
    assert _bar(class_p95=1.0)["class p95"]["met"] is False  # "< 1 s"
    assert _bar(burst_p95=2.0)["burst p95"]["met"] is False  # "< 2 s"
    assert _bar(burst_p95=float("nan"))["burst p95"]["met"] is None  # no burst: not judged
    assert _bar()["class p95"]["ratio"] is None  # only the CPU row is judged as a ratio


def test_errors_must_be_zero():
    assert _bar(errors=0)["errors"]["met"] is True
    assert _bar(errors=1)["errors"]["met"] is False


def test_memory_within_ten_percent_judged_only_after_a_minute():
    row = _bar()["RSS after the settle"]  # 1000 -> 1100 KiB: +10 %, the bound itself
    assert row["gradlab"] == pytest.approx(0.10) and row["met"] is True
    assert row["floor"] == pytest.approx(400 / 80_000)
    assert _bar(rss_after=1101)["RSS after the settle"]["met"] is False
    assert _bar(rss_after=880)["RSS after the settle"]["met"] is False  # -12 %: gone is as suspect as grown
    assert _bar(settle=30.0)["RSS after the settle"]["met"] is None


def test_class_measures_divide_class_cpu_by_its_reruns():
    summary = {"targets": dict(class_p95=0.8, burst_p95=1.2, errors=1, exceptions=2, page_not_found=0)}
    info = dict(class_cpu=0.5, class_seconds=40.0, class_requests=100, rss_before=10, rss_after=11)
    m = class_measures(summary, info)
    assert m["cpu_per_rerun"] == pytest.approx(0.2)  # 0.5 cores x 40 s = 20 CPU s over 100 reruns
    assert m["errors"] == 3 and m["reruns"] == 100 and math.isnan(m["other_cores"])


def test_felt_ratios_against_their_targets():
    floor = {"load": 2.0, "return": 0.8, "input": 0.2}
    rows = {r["name"]: r for r in felt_ratios({"load": 2.5, "return": 1.2, "input": 0.32}, floor)}
    assert rows["first visit"]["ratio"] == pytest.approx(1.25) and rows["first visit"]["met"] is True
    assert rows["returning"]["ratio"] == pytest.approx(1.5) and rows["returning"]["met"] is True
    assert rows["interaction"]["ratio"] == pytest.approx(1.6) and rows["interaction"]["met"] is False
    worse = {r["name"]: r for r in felt_ratios({"load": 2.6, "return": None, "input": 0.3}, floor)}
    assert worse["first visit"]["met"] is False  # 1.3x > 1.25x
    assert worse["returning"]["met"] is None and worse["returning"]["ratio"] is None
    assert tally(list(rows.values()) + list(worse.values())) == (3, 5, 1)


def test_ratio_without_a_floor_is_none():
    assert ratio(1.0, None) is None and ratio(1.0, 0.0) is None and ratio(float("nan"), 1.0) is None
    assert ratio(3.0, 4.0) == 0.75


def test_the_class_opens_every_preset_of_the_registry():
    pages = all_pages()
    links = {page: page_links(page or "home") for page in pages}
    assert preset_coverage(links) == []
    left_out = "gradcheck"
    assert left_out in pages and len(presets_for(left_out)) >= 2
    without = {page: value for page, value in links.items() if page != left_out}
    assert preset_coverage(without) == [f"{left_out}/{p.key}" for p in PRESETS if p.page == left_out]
