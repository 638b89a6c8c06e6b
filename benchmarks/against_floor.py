"""The classroom bar: one class against GradLab and the same class against the floor app, in one run.

``python -m benchmarks.load_test --against-floor`` runs load_test's class (``--sessions``
tabs interacting every 0.5-3 s for ``--duration`` s, then a burst of ``--burst``
simultaneous reruns, then ``--settle`` s with every tab closed) twice, one after the
other, with the same options and seed:

1. against ``benchmarks/floor_app.py`` (one slider, one chart): a tab opens the page and
   moves its one slider, the floor's only interaction;
2. against one plain ``streamlit run app.py`` (``--entry``), the tabs spread over every
   page (``--page all``) opening the page's preset links from the preset registry.

Then one table (:func:`benchmarks.floor_ratios.classroom_bar`): server CPU per rerun of
each and the ratio (target <= 2x the floor's), class p95 < 1 s, burst p95 < 2 s, zero
errors, RSS back within 10 % a minute after (``--settle 60``; a shorter settle is reported
but not judged). The floor's settle is at most 10 s: its memory is not a target.

``--changing`` adds a third run, next to the presets-only class (which keeps its own
targets): a fresh ``streamlit run app.py`` and a class whose tabs move between their page's
presets *with one control changed* (a new seed, x, shape or v each move,
``benchmarks.class_links.CHANGED_CONTROL``), and its own table
(:func:`benchmarks.floor_ratios.changing_bar`): server CPU per rerun <= 2x the floor's,
p95 < 2 s on every page, zero errors.

The floor runs first, so GradLab's settle ends the run. Both runs share the machine with
whatever else runs on it: the cores other jobs used during each class are printed beside
the numbers (server CPU per rerun is steady under such load, latencies are not).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

from benchmarks.floor_ratios import changing_bar, class_measures, classroom_bar, verdict
from benchmarks.class_links import all_pages, page_links, preset_coverage
from benchmarks.load_class import run
from benchmarks.load_report import print_report

FLOOR_APP = "benchmarks/floor_app.py"
FLOOR_SETTLE_S = 10.0


def _one(args: argparse.Namespace, label: str) -> tuple[dict, dict]:
    """One load-test run with ``args``: its full report printed under ``label``, (summary, measures)."""
    print(f"\n===== {label} =====")
    stats, info = asyncio.run(run(args))
    info["page"] = label
    summary = print_report(stats, info, args)
    return summary, class_measures(summary, info)


def _fmt(name: str, value: float | None) -> str:
    if value is None or value != value:  # None or NaN
        return "-"
    if name == "server CPU per rerun":
        return f"{value * 1000:.1f} ms"
    if name == "RSS after the settle":
        return f"{value:+.1%}"
    if name == "errors":
        return f"{value:.0f}"
    return f"{value:.3f} s"


def print_bar(rows: list[dict], gradlab: dict, floor: dict, args: argparse.Namespace, load: tuple) -> None:
    print(f"\n===== Classroom bar: {args.sessions} tabs x {args.duration:.0f} s, burst {args.burst}, "
          f"settle {args.settle:.0f} s, same run =====")
    print(f"load average before {' '.join(f'{x:.2f}' for x in load)}, after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs); other jobs used "
          f"{floor['other_cores']:.2f} cores during the floor's class, {gradlab['other_cores']:.2f} during GradLab's")
    print(f"reruns in the class: GradLab {gradlab['reruns']}, floor {floor['reruns']}; RSS before/after: "
          f"GradLab {gradlab['rss_before'] / 1024:.0f} -> {gradlab['rss_after'] / 1024:.0f} MiB, "
          f"floor {floor['rss_before'] / 1024:.0f} -> {floor['rss_after'] / 1024:.0f} MiB")
    judged = _table(rows)
    print(f"{sum(judged)} of {len(judged)} targets met"
          + (f"; memory not judged: settle {args.settle:.0f} s < 60 s" if rows[-1]["met"] is None else ""))


def _table(rows: list[dict]) -> list[bool]:
    """Print a bar's rows as a table; the verdicts of the rows that could be judged."""
    head = ["", "GradLab", "floor", "ratio", "target", ""]
    table = [[r["name"], _fmt(r["name"], r["gradlab"]), _fmt(r["name"], r["floor"]),
              "-" if r["ratio"] is None else f"{r['ratio']:.2f}x", r["target"], verdict(r["met"])]
             for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(head)]
    for line in [head, *table]:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    return [r["met"] for r in rows if r["met"] is not None]


def print_changing_bar(rows: list[dict], changing: dict, floor: dict, controls: dict[str, str],
                       args: argparse.Namespace) -> None:
    """The changing class's table: what each page's students change, CPU per rerun, each page's p95."""
    print(f"\n===== A class changing things: {args.sessions} tabs x {args.duration:.0f} s, each moving between "
          f"its page's presets with one control changed every {args.think_min:g}-{args.think_max:g} s =====")
    print("changed: " + ", ".join(f"{page} {key}" for page, key in sorted(controls.items()))
          + f"; reruns in the class: GradLab {changing['reruns']}, floor {floor['reruns']}; other jobs used "
          f"{changing['other_cores']:.2f} cores during it")
    judged = _table(rows)
    print(f"{sum(judged)} of {len(judged)} targets met (floor column of the p95 rows: the floor's class p95)")


def main_against_floor(args: argparse.Namespace) -> int:
    """Both runs, the bar, and ``--json``; exit status 1 on protocol errors in either run."""
    if args.replicas > 1 or args.lb != "none":
        raise SystemExit("--against-floor measures one plain server: leave out --replicas and --lb")
    pages = all_pages() if args.page == "all" else [args.page]
    missing = preset_coverage({page or "home": page_links(page or "home") for page in pages})
    print(f"GradLab's class opens {len(pages)} page(s) from their preset links"
          + (f"; presets NOT in the class: {', '.join(missing)}" if missing else
             " (every preset of the registry among them)" if args.page == "all" else "")
          + (f"; with {args.sessions} tabs (tab i on page i mod {len(pages)}) only the first "
             f"{args.sessions} pages have one" if args.sessions < len(pages) else ""))
    load = os.getloadavg()
    floor_args = argparse.Namespace(**{**vars(args), "entry": FLOOR_APP, "page": "", "browsers": 0, "changing": False,
                                       "settle": min(args.settle, FLOOR_SETTLE_S),
                                       "server_log": _floor_log(args.server_log)})
    floor_summary, floor = _one(floor_args, f"the floor ({FLOOR_APP})")
    presets_args = argparse.Namespace(**{**vars(args), "changing": False})
    gradlab_summary, gradlab = _one(presets_args, f"GradLab ({args.entry}, page {args.page or 'home'})")
    rows = classroom_bar(gradlab, floor, args.settle)
    report: dict = {"bar": rows, "gradlab": gradlab, "floor": floor, "missing_presets": missing,
                    "gradlab_summary": gradlab_summary, "floor_summary": floor_summary}
    summaries = [floor_summary, gradlab_summary]
    if args.changing:
        changing_summary, changing = _one(args, f"GradLab ({args.entry}), presets with one control changed")
        report.update(changing_bar=changing_bar(changing, floor), changing=changing,
                      changing_summary=changing_summary)
        summaries.append(changing_summary)
    print_bar(rows, gradlab, floor, args, load)
    if args.changing:
        print_changing_bar(report["changing_bar"], changing, floor, changing_summary["info"]["changing"], args)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=str))
    return 1 if sum(s["protocol_errors_unexpected"] for s in summaries) else 0


def _floor_log(path: str) -> str:
    if not path:
        return ""
    p = Path(path)
    return str(p.with_suffix(f".floor{p.suffix}"))
