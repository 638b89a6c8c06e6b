"""Load test: a class of students against ``streamlit run app.py``, over Streamlit's own protocol.

Starts GradLab on 127.0.0.1 (a free port unless ``--port``), then:

1. warm-up: one tab opens the page, so imports and first-time caches are paid;
   server RSS is read (``VmRSS`` in ``/proc/<pid>/status``) as *before*;
2. class: ``--sessions`` tabs open the page from a shared link (the page's
   preset links and its default view) and interact every 0.5–3 s until
   ``--duration`` seconds have passed: mostly changing one widget to another
   valid value, as a click does (the rerun carries every widget's state and the
   page's query string), sometimes reopening the page from another link;
3. burst: ``--burst`` fresh tabs open the page, then all change a widget at the
   same instant;
4. all tabs close; after ``--settle`` seconds RSS is read again as *after*.
   ``--rounds N`` repeats 2-4 against the same server and reports RSS after each
   round: a leak grows round after round, size-limited caches level off.

``--replicas N`` starts N servers and sends tab i to replica i mod N, as a load
balancer with sticky sessions does (memory and CPU are summed over them): one
Streamlit process runs every script under one interpreter lock, so it uses
about one core, and replicas are how a machine's other cores serve the class.
``--lb haproxy`` puts the real load balancer of ``deploy/`` (HAProxy, its
affinity cookie and health checks) in front of them instead: every tab is a
browser of its own that loads the page's HTML, keeps the cookie and opens its
websocket through HAProxy; the report says whether every browser stayed on one
replica. ``--kill-at S`` then kills the last replica S seconds into the class:
its tabs reconnect through HAProxy to the same URL, as the frontend does (retrying a
refused connection), and the report checks each view came back (same page, same query
values, no exception). The class targets (``summary["targets"]``, :func:`class_targets`)
leave those reconnects out of the class p95: they are the kill's cost to its own sessions.
The report also says how many cores other jobs on the machine used during the class:
latencies measured beside them are partly theirs.

``--page all`` spreads the class over every page of ``gradlab.ui.navigation.PAGES`` (tab i
on page i mod their number), each tab opening its page from the page's preset links in the
preset registry (``gradlab.teaching.presets``; :func:`preset_coverage` says if one is left out).

``--against-floor`` runs the same class against ``benchmarks/floor_app.py`` and then against
GradLab (every page's presets unless ``--page`` says otherwise) and prints the classroom bar:
server CPU per rerun of both and their ratio, class and burst p95, errors, RSS before/after
(``benchmarks/against_floor.py``). With ``--changing`` it also runs a class moving between
every page's presets with one control changed (a new seed, x, shape or v each move), and prints
its own targets: p95 < 2 s on every page, server CPU per rerun <= 2x the floor's, zero errors.
``--changing`` alone runs that class without the floor. Each student opens a changed link, then
moves in that tab as in a browser: clicks a preset's button, then types the new value (two
reruns); ``--changing-tabs`` opens a new tab on a changed link for each move instead.

Optionally ``--browsers N`` Chromium contexts (Playwright, Debian's
``/usr/bin/chromium``) open the page repeatedly during the class phase and check
the real UI: connected, script finished, a Plotly chart drawn (when the page
draws one), no exception element.

Reported: p50/p95/max seconds from rerun request to the run's terminal
``script_finished``, per phase; protocol errors (connection, closed socket,
undecodable frame, unknown cache ref, no ``script_finished`` in time);
exception elements; ``st.error`` alerts (GradLab's generic "something went
wrong" message counted apart); server RSS and CPU. Targets for a 2-core machine
are printed next to the numbers. The exit status is 1 only on protocol errors:
this is a benchmark, not a timed test. Load is loopback only, limited in
sessions and time, and stops by itself.

    python -m benchmarks.load_test                       # 30 tabs, 60 s, burst 20
    python -m benchmarks.load_test --quick               # smoke test, ~15 s
    python -m benchmarks.load_test --rounds 3 --settle 40 --browsers 0   # memory over three classes
    python -m benchmarks.load_test --page home --sessions 10 --duration 20
    python -m benchmarks.load_test --page roundoff --replicas 2 --limits classroom
    python -m benchmarks.load_test --page all --replicas 2 --lb haproxy --kill-at 20
    python -m benchmarks.load_test --against-floor --sessions 30 --duration 60 --settle 60
    python -m benchmarks.load_test --against-floor --changing --duration 60 --settle 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from benchmarks.against_floor import main_against_floor
from benchmarks.load_class import run
from benchmarks.load_report import print_report

REPO_ROOT = Path(__file__).resolve().parents[1]

#: Limits that keep the load small whatever the options say.
MAX_SESSIONS = 200
MAX_DURATION = 600.0
MAX_BURST = 100
MAX_ROUNDS = 5
MAX_REPLICAS = 4


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sessions", type=int, default=30, help="tabs in the class (default 30)")
    p.add_argument("--duration", type=float, default=60.0, help="class phase, seconds (default 60)")
    p.add_argument("--burst", type=int, default=20, help="simultaneous reruns after the class (default 20; 0: none)")
    p.add_argument("--page", default=None,
                   help="url path of the page (default: explorer if it exists, else home); "
                        "'all': tab i on page i mod 6, every page at once")
    p.add_argument("--port", type=int, default=0,
                   help="port for the server, or with --lb for the load balancer; more replicas take the "
                        "next ports (default: free ones)")
    p.add_argument("--rounds", type=int, default=1,
                   help="class + burst + settle, repeated against the same server (default 1, at most "
                        f"{MAX_ROUNDS}): memory that grows round after round is a leak")
    p.add_argument("--clear-caches", action="store_true",
                   help="after the last round, clear the server's caches (as the app menu does), wait "
                        "--settle seconds and read RSS again: the growth the caches do not explain")
    p.add_argument("--quick", action="store_true", help="smoke test: 3 tabs, 5 s, burst 3, short settle")
    p.add_argument("--think-min", type=float, default=0.5)
    p.add_argument("--think-max", type=float, default=3.0)
    p.add_argument("--browsers", type=int, default=None,
                   help="Chromium contexts checking the UI during the class (default 2; 0 with --quick)")
    p.add_argument("--expect-chart", type=lambda s: s.lower() in ("1", "true", "yes"), default=None,
                   help="whether the browser check requires a Plotly chart (default: not on home)")
    p.add_argument("--settle", type=float, default=None, help="seconds to wait before the 'after' RSS (default 10)")
    p.add_argument("--omp-threads", type=int, default=0, help="set OMP_NUM_THREADS for the server")
    p.add_argument("--replicas", type=int, default=1,
                   help=f"servers to start (at most {MAX_REPLICAS}); tab i talks to replica i mod n, as "
                        "behind a load balancer with sticky sessions. Memory and CPU are summed.")
    p.add_argument("--lb", choices=("none", "haproxy"), default="none",
                   help="haproxy: the real load balancer of deploy/ (Debian's haproxy) in front of the "
                        "replicas, on --port; every tab a browser with its own affinity cookie")
    p.add_argument("--kill-at", type=float, default=0.0, metavar="SECONDS",
                   help="with --lb and 2+ replicas: kill the last replica this far into the (first) class; "
                        "its tabs reconnect through the load balancer")
    p.add_argument("--entry", default="app.py",
                   help="script each replica runs (default app.py; serve.py adds the security headers)")
    p.add_argument("--limits", default="", metavar="OVERRIDES",
                   help="GRADLAB_LIMITS for the server, e.g. 'classroom' (see gradlab/limits.py)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="extra streamlit option for the server, e.g. runner.postScriptGC=false (repeatable)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--server-log", default="", help="write the server's output to this file")
    p.add_argument("--json", default="", help="also write the summary as JSON to this file")
    p.add_argument("--against-floor", action="store_true",
                   help="the same class against benchmarks/floor_app.py, then against GradLab (--page "
                        "defaults to all), and the classroom bar: CPU per rerun and its ratio, p95s, RSS")
    p.add_argument("--changing", action="store_true",
                   help="tabs move between their page's presets with one control changed (a new seed, x, "
                        "shape or v) instead of clicking widgets; with --against-floor: a third run, "
                        "beside the presets-only class")
    p.add_argument("--no-warm-presets", action="store_true",
                   help="GradLab without its start-up warm-up of every preset's view (by default the "
                        "class starts once the server's log says it has ended)")
    p.add_argument("--changing-tabs", action="store_true",
                   help="with --changing: each move opens a new tab on the changed link, instead of "
                        "clicking the preset's button and setting the control in the tab (a browser's way)")
    args = p.parse_args(argv)
    for kv in args.config:
        if "=" not in kv:
            p.error(f"--config takes KEY=VALUE, e.g. runner.postScriptGC=false; got {kv!r}")
    if args.quick:
        args.sessions, args.duration, args.burst = min(args.sessions, 3), min(args.duration, 5.0), min(args.burst, 3)
        args.browsers = 0 if args.browsers is None else args.browsers
        args.settle = 2.0 if args.settle is None else args.settle
    if args.against_floor or args.changing:  # every page's presets; no Chromium beside the class (the floor has none)
        args.page = "all" if args.page is None else args.page
        args.browsers = 0 if args.browsers is None else args.browsers
    args.browsers = 2 if args.browsers is None else min(args.browsers, 3)
    args.settle = 10.0 if args.settle is None else args.settle
    args.sessions = max(1, min(args.sessions, MAX_SESSIONS))
    args.duration = max(1.0, min(args.duration, MAX_DURATION))
    args.burst = max(0, min(args.burst, MAX_BURST))
    args.rounds = max(1, min(args.rounds, MAX_ROUNDS))
    args.replicas = max(1, min(args.replicas, MAX_REPLICAS))
    args.settle = max(0.0, min(args.settle, 300.0))
    if args.kill_at and (args.lb == "none" or args.replicas < 2 or not 0 < args.kill_at < args.duration):
        p.error("--kill-at needs --lb haproxy, --replicas 2 or more, and a time within --duration")
    if args.page is None:
        args.page = "explorer" if (REPO_ROOT / "pages" / "explorer.py").is_file() else "home"
    args.page = "" if args.page in ("home", "/") else args.page.strip("/")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.against_floor:
        return main_against_floor(args)
    stats, info = asyncio.run(run(args))
    info["page"] = args.page or "home"
    summary = print_report(stats, info, args)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2, default=str))
    # a replica killed on purpose costs its own sessions one run each; anything else is an error
    views_lost = [r for r in summary["reconnects"] if not (r["ok"] and r["same_page"] and r["same_query"])]
    return 1 if summary["protocol_errors_unexpected"] or views_lost or summary["sticky_violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
