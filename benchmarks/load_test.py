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
   round: a leak grows round after round, bounded caches level off.

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
(``benchmarks/against_floor.py``).

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
this is a benchmark, not a timed test. Load is loopback only, bounded in
sessions and time, and stops by itself.

    python benchmarks/load_test.py                       # 30 tabs, 60 s, burst 20
    python benchmarks/load_test.py --quick               # smoke test, ~15 s
    python benchmarks/load_test.py --rounds 3 --settle 40 --browsers 0   # memory over three classes
    python benchmarks/load_test.py --page home --sessions 10 --duration 20
    python benchmarks/load_test.py --page roundoff --replicas 2 --limits classroom
    python benchmarks/load_test.py --page all --replicas 2 --lb haproxy --kill-at 20
    python benchmarks/load_test.py --against-floor --sessions 30 --duration 60 --settle 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.st_client import ProtocolError, RunResult, StreamlitSession  # noqa: E402
from deploy.run_local import health, stop_process, streamlit_command, wait_healthy  # noqa: E402

CHROMIUM = os.environ.get("GRADLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

#: Limits that keep the load bounded whatever the options say.
MAX_SESSIONS = 200
MAX_DURATION = 600.0
MAX_BURST = 100
MAX_ROUNDS = 5
MAX_REPLICAS = 4

STEAL_WARNING = 0.10  # hypervisor steal above which latencies say more about the host than GradLab
SLOWEST_SHOWN = 8  # reruns listed with what they asked for, to see what is slow
RECONNECT_ATTEMPTS = 3  # a browser behind the load balancer retries a failed reconnect ...
RECONNECT_BACKOFF = 1.0  # ... after 1 s, then 2 s (Streamlit's frontend retries with backoff)

TARGET_CLASS_P95 = 1.0
TARGET_BURST_P95 = 2.0  # a burst of 20 simultaneous reruns: p95 < 2 s
TARGET_MEMORY = 0.10


# ------------------------------------------------------------------ what to send


def _page_links(page: str) -> list[str]:
    """Query strings a student may arrive with: the page's preset links, and none."""
    links = [""]
    try:
        from gradlab.teaching.presets import presets_for, url_query

        for preset in presets_for(page):
            links.append(urlencode(url_query(preset), doseq=True))
    except Exception:  # noqa: BLE001 - the registry is optional for the benchmark
        pass
    if page == "explorer":
        try:
            from gradlab.teaching.catalogue import CATALOGUE
            from gradlab.teaching.presets import url_values

            links += [urlencode(url_values("explorer", {"fn": k, "x": e.x}), doseq=True)
                      for k, e in CATALOGUE.items()]
        except Exception:  # noqa: BLE001
            pass
    return list(dict.fromkeys(links))


def preset_coverage(links: dict[str, list[str]]) -> list[str]:
    """``page/key`` of every preset in the registry whose link is not among ``links`` (url path ->
    the query strings a class opens it with): a preset of a page the class leaves out, or one whose
    page name is not a page's url path."""
    from gradlab.teaching.presets import PRESETS, url_query

    return [f"{p.page}/{p.key}" for p in PRESETS
            if urlencode(url_query(p), doseq=True) not in links.get(p.page, [])]


def _text_choices() -> dict[str, list[str]]:
    """Values for text inputs, by query-parameter key (a student types a known function)."""
    try:
        from gradlab.teaching.catalogue import CATALOGUE

        expressions = sorted({e.expression for e in CATALOGUE.values()})
    except Exception:  # noqa: BLE001
        expressions = ["sin(x)", "exp(x)", "1/x", "x**3"]
    return {key: expressions for key in ("expression", "expr", "f", "function")}


def _all_pages() -> list[str]:
    """Every page's url path ('' for the home page), for ``--page all``."""
    try:
        from gradlab.ui.navigation import PAGES

        paths = [spec.url_path for spec in PAGES]
    except Exception:  # noqa: BLE001
        paths = ["home", "explorer"]
    return ["" if path in ("home", "/") else path for path in paths]


def _generic_error_text() -> str:
    try:
        from gradlab.ui.messages import GENERIC_ERROR

        return GENERIC_ERROR
    except Exception:  # noqa: BLE001
        return "Something went wrong"


# ------------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_ticks() -> tuple[int, int, int]:
    """(all CPU ticks, ticks stolen by the hypervisor, idle ticks) of this machine, from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(fields[:8]), fields[7] if len(fields) > 7 else 0, fields[3] + fields[4]  # idle + iowait


def process_ticks() -> dict[int, tuple[int, int, int, int]]:
    """pid -> (parent pid, CPU ticks of its own (user + system), of its reaped children (their
    user + system, theirs included), start time in ticks since boot), for every process alive now."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                f = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                out[int(entry.name)] = (int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14]), int(f[19]))
            except (OSError, ValueError, IndexError):
                continue
    return out


def other_cores(before: dict[int, tuple], after: dict[int, tuple], seconds: float, ours: int = 0) -> float:
    """Cores that processes outside ``ours``'s tree (default: this process: the client, the servers
    and their workers, HAProxy) used between two :func:`process_ticks` snapshots ``seconds`` apart:
    another job on the machine.

    Each process's own time and its reaped children's are counted, so a job's short-lived processes
    count too (their parent reaps them): the gain of every other process alive at both snapshots
    (the same process: same start time), plus all of a new one's, less what a process that ended
    had used by the first snapshot (its parent's children's time gains all of it).
    """
    ours = ours or os.getpid()
    children: dict[int, list[int]] = {}
    for pid, row in {**before, **after}.items():
        children.setdefault(row[0], []).append(pid)
    mine, todo = set(), [ours]
    while todo:
        pid = todo.pop()
        if pid not in mine:
            mine.add(pid)
            todo += children.get(pid, [])
    ticks = 0
    for pid, (_, own, reaped, started) in after.items():
        if pid in mine:
            continue
        was = before.get(pid)
        if was is not None and was[3] == started:
            ticks += own + reaped - was[1] - was[2]
        else:
            ticks += own + reaped  # started in between
    for pid, (parent, own, reaped, started) in before.items():
        now = after.get(pid)
        if pid not in mine and parent not in mine and (now is None or now[3] != started):
            ticks -= own + reaped  # ended in between: counted whole in its parent's children's time
    return max(0.0, ticks / os.sysconf("SC_CLK_TCK") / max(seconds, 1e-9))


class Server:
    """``streamlit run app.py`` on 127.0.0.1, stopped (by its pid) on exit."""

    def __init__(self, port: int, app: str = "app.py", cwd: Path = REPO_ROOT,
                 extra_env: dict[str, str] | None = None, log: Path | None = None,
                 options: dict[str, str] | None = None) -> None:
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self.cmd = streamlit_command(app, port, options)
        self.cwd = cwd
        self.env = {**os.environ, **(extra_env or {})}
        self.log_path = log
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        self.start()
        return self.wait_healthy()

    def start(self) -> None:
        """Start the process without waiting (several replicas start together, then wait)."""
        out = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(self.cmd, cwd=self.cwd, env=self.env,
                                     stdout=out, stderr=subprocess.STDOUT)

    def wait_healthy(self) -> Server:
        assert self.proc is not None
        try:
            wait_healthy(self.base_url, 60, self.proc)
        except RuntimeError:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        stop_process(self.proc)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


class Fleet:
    """One or more servers (replicas) measured together; a tab sticks to one, as behind a
    load balancer with sticky sessions, or every tab goes to ``lb_url`` (a real one).
    A replica killed on purpose (``--kill-at``) is left out of the measurements."""

    def __init__(self, servers: list[Server], lb_url: str = "") -> None:
        self.servers = servers
        self.lb_url = lb_url

    def url(self, tab: int) -> str:
        return self.lb_url or self.servers[tab % len(self.servers)].base_url

    def _alive(self) -> list[Server]:
        return [s for s in self.servers if s.proc is not None and s.proc.poll() is None]

    def rss_kib(self) -> int:
        return sum(rss_kib(s.pid) for s in self._alive())

    def rss_by_server(self) -> dict[int, int]:
        return {s.port: rss_kib(s.pid) for s in self._alive()}

    def cpu_by_server(self) -> dict[int, float]:
        return {s.port: cpu_seconds(s.pid) for s in self._alive()}

    def cpu_seconds(self) -> float:
        return sum(cpu_seconds(s.pid) for s in self._alive())

    def threads(self) -> int:
        return sum(threads(s.pid) for s in self._alive())

    def health(self) -> str:
        answers = {health(s.base_url) for s in self._alive()}
        return answers.pop() if len(answers) == 1 else ",".join(sorted(answers))


# ----------------------------------------------------------------------- records


@dataclass
class Record:
    phase: str
    kind: str  # open | widget | link | reconnect
    result: RunResult
    student: int = -1
    page: str = ""
    t: float = field(default_factory=time.monotonic)  # when it ended


@dataclass
class Stats:
    records: list[Record] = field(default_factory=list)
    browser: list[dict] = field(default_factory=list)
    samples: list[tuple[float, int, float]] = field(default_factory=list)  # t, rss KiB, cpu s
    connect_errors: list[str] = field(default_factory=list)
    # behind a real load balancer: which replica each browser's connections reached
    routes: dict[int, list[tuple[float, str, str]]] = field(default_factory=dict)  # (t, what, replica)
    reconnects: list[dict] = field(default_factory=list)
    killed: dict = field(default_factory=dict)  # replica, t (monotonic), at (s into the class)

    def add(self, phase: str, kind: str, result: RunResult | None, student: int = -1,
            page: str = "") -> None:
        if result is not None:
            self.records.append(Record(phase, kind, result, student, page))

    def route(self, student: int, what: str, replica: str) -> None:
        self.routes.setdefault(student, []).append((time.monotonic(), what, replica))


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


# ---------------------------------------------------------------------- students


async def student(idx: int, base_url: str, page: str, links: list[str], stop_at: float,
                  stats: Stats, rng: random.Random, think: tuple[float, float],
                  text: dict[str, list[str]], via_lb: bool = False) -> None:
    """One tab: open a link, then interact every ``think`` seconds until ``stop_at``.

    ``via_lb``: the tab is a browser behind a load balancer (its own cookies, the page's
    HTML loaded before each websocket), and when its websocket is lost it reconnects to
    the same URL, as Streamlit's frontend does.
    """
    await asyncio.sleep(rng.uniform(0, min(3.0, max(0.0, stop_at - time.monotonic()) / 4)))
    jar: dict[str, str] | None = {} if via_lb else None
    tab = StreamlitSession(base_url, cookies=jar)

    async def open_tab(query: str, kind: str) -> RunResult:
        nonlocal tab
        await tab.close()
        tab = StreamlitSession(base_url, cookies=jar)
        tab.query_string = query  # the URL this tab shows, even if loading it fails
        if via_lb:
            stats.route(idx, "page", await tab.load_page(page, query))
        await tab.connect()
        if via_lb:
            stats.route(idx, "websocket", tab.replica)
        result = await tab.open(page, query)
        stats.add("class", kind, result, idx, page)
        return result

    async def open_or_lose(query: str, kind: str) -> RunResult:
        # Behind the load balancer, a page load or websocket that fails (its replica died with
        # the request in flight: HAProxy answers 502) is a lost run, as a browser shows an error
        # page for it; the loop below then reconnects. Counted against the replica the browser
        # was on (sticky): a lost run anywhere but on a replica killed on purpose is an error.
        try:
            return await open_tab(query, kind)
        except ProtocolError as exc:
            if not via_lb:
                raise
            hops = stats.routes.get(idx, [])
            lost = RunResult(status="protocol-error", seconds=0.0, protocol_error=str(exc),
                             replica=hops[-1][2] if hops else "")
            stats.add("class", kind, lost, idx, page)
            return lost

    async def recover(lost: RunResult) -> None:
        # The websocket is gone: the browser opens the same URL again, through the load
        # balancer, retrying a failed connection as Streamlit's frontend does (a replica just
        # killed may take a health check or two to leave HAProxy's rotation). The view must
        # come back: same page, same query values, a run that finishes without an exception.
        # the page's own hash is known once a run of the lost tab finished: a tab lost while it
        # opened (its replica killed between new_session and the run's navigation message) holds
        # app.py's hash, which no page has (7 of 15 reconnects "lost their view" so, under load)
        query, page_hash = tab.query_string, tab.page_script_hash if tab.runs_finished else ""
        for attempt in range(1, RECONNECT_ATTEMPTS + 1):
            try:
                back = await open_tab(query, "reconnect")
                break
            except ProtocolError:
                if attempt == RECONNECT_ATTEMPTS:
                    raise
                await asyncio.sleep(RECONNECT_BACKOFF * attempt)
        stats.reconnects.append({
            "student": idx, "page": page, "lost": lost.replica, "replica": back.replica,
            "error": lost.protocol_error[:80], "ok": back.ok, "attempts": attempt,
            "exceptions": len(back.exceptions), "seconds": back.seconds, "query": query,
            "lost_while_opening": not page_hash,
            "same_page": not page_hash or tab.page_script_hash == page_hash,
            "same_query": _same_view(query, tab.query_string),
            "query_after": tab.query_string,
        })

    try:
        result = await open_or_lose(rng.choice(links), "open")
        while True:
            if result.protocol_error:
                if not via_lb:
                    break
                await recover(result)
            await asyncio.sleep(rng.uniform(*think))
            if time.monotonic() >= stop_at:
                break
            if rng.random() < 0.1:
                # reload from another shared link: a new tab, as the browser does
                result = await open_or_lose(rng.choice(links), "link")
                continue
            result = await tab.change_widget(rng, text)
            if result is None:  # a page without widgets: just rerun it
                result = await tab.rerun()
            stats.add("class", "widget", result, idx, page)
    except ProtocolError as exc:
        stats.connect_errors.append(f"student {idx}: {exc}")
    finally:
        await tab.close()


async def burst(fleet: "Fleet", pages: list[str], links: dict[str, list[str]], n: int, stats: Stats,
                rng: random.Random, text: dict[str, list[str]]) -> None:
    """``n`` tabs (tab i on page i mod len(pages)) open their page, then all rerun at once
    (one widget change each). Behind a load balancer each tab is a new browser."""
    via_lb = bool(fleet.lb_url)
    tabs = [StreamlitSession(fleet.url(i), cookies={} if via_lb else None) for i in range(n)]
    tab_pages = [pages[i % len(pages)] for i in range(n)]
    queries = [rng.choice(links[page]) for page in tab_pages]
    try:
        for tab, page, query in zip(tabs, tab_pages, queries, strict=True):
            if via_lb:
                await tab.load_page(page, query)
            await tab.connect()
        opened = await asyncio.gather(*(t.open(page, query)
                                        for t, page, query in zip(tabs, tab_pages, queries, strict=True)))
        for r, page in zip(opened, tab_pages, strict=True):
            stats.add("burst", "open", r, page=page)
        await asyncio.sleep(1.0)

        async def one(tab: StreamlitSession) -> RunResult:
            r = await tab.change_widget(rng, text)
            return r if r is not None else await tab.rerun()

        for r, page in zip(await asyncio.gather(*(one(t) for t in tabs)), tab_pages, strict=True):
            stats.add("burst", "widget", r, page=page)
    except ProtocolError as exc:
        stats.connect_errors.append(f"burst: {exc}")
    finally:
        await asyncio.gather(*(t.close() for t in tabs), return_exceptions=True)


async def sampler(fleet: Fleet, stats: Stats, stop: asyncio.Event) -> None:
    while not stop.is_set():
        with contextlib.suppress(OSError, ValueError):
            stats.samples.append((time.monotonic(), fleet.rss_kib(), fleet.cpu_seconds()))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


async def browsers(base_url: str, page: str, links: list[str], n: int, stop_at: float,
                   stats: Stats, expect_chart: bool) -> None:
    """``n`` Chromium contexts open the page again and again; each load is checked."""
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        stats.browser.append({"error": "playwright is not installed"})
        return
    if not Path(CHROMIUM).is_file():
        stats.browser.append({"error": f"no Chromium at {CHROMIUM}"})
        return
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            async def context_loop(i: int) -> None:
                ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
                tab = await ctx.new_page()
                k = i
                while time.monotonic() < stop_at - 5:
                    link = links[k % len(links)]
                    k += 1
                    url = f"{base_url}/{page}" + (f"?{link}" if link else "")
                    t0 = time.perf_counter()
                    check: dict = {"url": url[len(base_url):]}
                    try:
                        await tab.goto(url)
                        await tab.wait_for_selector(
                            "[data-testid='stApp'][data-test-connection-state='CONNECTED']",
                            timeout=60_000)
                        await tab.wait_for_selector(
                            "[data-testid='stApp'][data-test-script-state='notRunning']",
                            timeout=60_000)
                        if expect_chart:
                            await tab.wait_for_selector(
                                "[data-testid='stPlotlyChart'] .main-svg", timeout=60_000)
                        await tab.wait_for_timeout(300)
                        await tab.wait_for_selector(
                            "[data-testid='stApp'][data-test-script-state='notRunning']",
                            timeout=60_000)
                        check["seconds"] = time.perf_counter() - t0
                        check["charts"] = await tab.locator("[data-testid='stPlotlyChart']").count()
                        check["exceptions"] = await tab.locator("[data-testid='stException']").count()
                        check["ok"] = check["exceptions"] == 0 and (check["charts"] > 0 or not expect_chart)
                    except Exception as exc:  # noqa: BLE001 - a failed check is a result
                        check["ok"] = False
                        check["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                    stats.browser.append(check)
                    await asyncio.sleep(1.0)
                await ctx.close()

            await asyncio.gather(*(context_loop(i) for i in range(n)))
        finally:
            await browser.close()


# ----------------------------------------------------------------------- the run


async def run(args: argparse.Namespace) -> tuple[Stats, dict]:
    rng = random.Random(args.seed)
    pages = _all_pages() if args.page == "all" else [args.page]
    links = {page: _page_links(page or "home") for page in pages}
    text = _text_choices()
    port = args.port or free_port()
    env = {}
    if args.omp_threads:
        env["OMP_NUM_THREADS"] = str(args.omp_threads)
    if args.limits:
        env["GRADLAB_LIMITS"] = args.limits
    options = dict(kv.split("=", 1) for kv in args.config)
    info: dict = {"page": args.page, "links": sum(map(len, links.values())), "port": port, "env": env,
                  "options": options, "replicas": args.replicas, "lb": args.lb}
    stats = Stats()
    log = Path(args.server_log) if args.server_log else None
    with contextlib.ExitStack() as stack:
        # `--port` is the first replica's port (the next ones follow it), or with a load balancer
        # the balancer's (the replicas follow it); without `--port`, free ones
        def replica_port(i: int) -> int:
            if not args.port:
                return port if i == 0 and args.lb == "none" else free_port()
            return port + i + (args.lb != "none")

        servers = [Server(replica_port(i),
                          app=args.entry, extra_env=env,
                          log=log.with_suffix(f".{i}{log.suffix}") if log and i else log, options=options)
                   for i in range(args.replicas)]
        for server in servers:  # start together, then wait: start-up is mostly imports
            stack.callback(server.__exit__)
            server.start()
        for server in servers:
            server.wait_healthy()
        fleet = Fleet(servers)
        if args.lb == "haproxy":
            from deploy.run_local import Balancer

            lb_log = log.with_suffix(f".haproxy{log.suffix}") if log else None
            lb = stack.enter_context(Balancer(port, [s.port for s in servers], log=lb_log))
            fleet.lb_url = lb.url
        info["rss_start"] = fleet.rss_kib()
        # warm-up: imports, first runs of caches, each page's chart (every replica, directly,
        # all at once: each replica is a process of its own)
        async def warm_up(server: Server) -> None:
            warm = StreamlitSession(server.base_url)
            await warm.connect()
            for page in pages:
                for link in links[page][:3 if len(pages) == 1 else 1]:
                    stats.add("warm-up", "open", await warm.open(page, link))
                    stats.add("warm-up", "widget", await warm.change_widget(rng, text))
            info["widgets"] = sorted(f"{w.kind}:{w.key or w.label}" for w in warm.widgets.values())
            await warm.close()

        await asyncio.gather(*(warm_up(server) for server in servers))
        await asyncio.sleep(2.0)
        info["rss_before"] = fleet.rss_kib()
        info["rss_before_by_server"] = fleet.rss_by_server()
        info["threads_before"] = fleet.threads()

        info["rss_rounds"] = []
        for round_no in range(args.rounds):
            await _one_round(args, fleet, pages, links, text, rng, stats, info,
                             kill_at=args.kill_at if round_no == 0 else 0.0)
            info["rss_rounds"].append(fleet.rss_kib())
        info["rss_after"] = info["rss_rounds"][-1]
        if args.clear_caches:
            # what is left once the caches are emptied: growth the caches do not explain
            for server in fleet._alive():
                tab = StreamlitSession(server.base_url)
                await tab.connect()
                stats.add("warm-up", "open", await tab.open(pages[0], ""))
                await tab.clear_caches()
                await asyncio.sleep(1.0)
                await tab.close()
            await asyncio.sleep(args.settle)
            info["rss_cleared"] = fleet.rss_kib()
        info["threads_after"] = fleet.threads()
        info["alive_ports"] = [s.port for s in fleet._alive()]
        info["health_after"] = fleet.health()
    return stats, info


async def _kill_later(fleet: Fleet, seconds: float, stats: Stats, t_class: float) -> None:
    """Kill the last replica (SIGKILL: a crash, not a shutdown) ``seconds`` into the class."""
    await asyncio.sleep(seconds)
    victim = fleet.servers[-1]
    victim.proc.kill()
    # deploy/run_local.py names the replicas r1, r2, ... in order
    stats.killed = {"replica": f"r{len(fleet.servers)}", "t": time.monotonic(),
                    "at": time.monotonic() - t_class}


async def _one_round(args, fleet: Fleet, pages: list[str], links: dict[str, list[str]], text: dict,
                     rng: random.Random, stats: Stats, info: dict, kill_at: float = 0.0) -> None:
    """The class, the burst, then ``--settle`` seconds with every tab closed."""
    stop = asyncio.Event()
    sampling = asyncio.create_task(sampler(fleet, stats, stop))
    t_class = time.monotonic()
    stop_at = t_class + args.duration
    cpu0, ticks0, procs0 = fleet.cpu_by_server(), machine_ticks(), process_ticks()
    records0 = len(stats.records)
    jobs = [student(i, fleet.url(i), pages[i % len(pages)], links[pages[i % len(pages)]], stop_at, stats,
                    random.Random(rng.random()), (args.think_min, args.think_max), text,
                    via_lb=bool(fleet.lb_url))
            for i in range(args.sessions)]
    if args.browsers:
        page = "explorer" if len(pages) > 1 else pages[0]
        expect_chart = args.expect_chart if args.expect_chart is not None else bool(page)
        jobs.append(browsers(fleet.url(0), page, links.get(page) or _page_links(page), args.browsers,
                             stop_at, stats, expect_chart))
    if kill_at:
        jobs.append(_kill_later(fleet, kill_at, stats, t_class))
    await asyncio.gather(*jobs)
    info["class_seconds"] = time.monotonic() - t_class
    # the last round's; a replica killed during it is left out
    cpu1 = fleet.cpu_by_server()
    info["class_cpu"] = sum(cpu1[port] - cpu0[port] for port in cpu1) / info["class_seconds"]
    ticks1 = machine_ticks()
    info["class_steal"] = (ticks1[1] - ticks0[1]) / max(1, ticks1[0] - ticks0[0])
    # everything on the machine (server, its workers, this client): near 1 = the class is CPU-bound
    info["class_busy"] = 1 - (ticks1[2] - ticks0[2]) / max(1, ticks1[0] - ticks0[0])
    # ... of which other jobs on the machine (not this client, its servers, workers or HAProxy)
    info["class_other_cores"] = other_cores(procs0, process_ticks(), info["class_seconds"])
    info["class_requests"] = sum(1 for r in stats.records[records0:] if r.phase == "class")  # this round's

    if args.burst:
        await asyncio.sleep(1.0)
        t_burst, procs0 = time.monotonic(), process_ticks()
        await burst(fleet, pages, links, args.burst, stats, rng, text)
        info["burst_other_cores"] = other_cores(procs0, process_ticks(), time.monotonic() - t_burst)
    info["rss_peak"] = max([s[1] for s in stats.samples] + [info["rss_before"], info.get("rss_peak", 0)])
    stop.set()
    await sampling

    await asyncio.sleep(args.settle)


# ---------------------------------------------------------------------- reporting


def summarise(stats: Stats, info: dict) -> tuple[list[list[str]], dict]:
    generic = _generic_error_text()
    rows = []
    summary: dict = {"phases": {}}
    for phase in ("warm-up", "class", "burst"):
        for kinds, label in ((("open", "link"), "open"), (("widget",), "rerun"), (None, "all")):
            recs = [r for r in stats.records if r.phase == phase and (kinds is None or r.kind in kinds)]
            if not recs:
                continue
            times = [r.result.seconds for r in recs if r.result.ok]
            perr = sum(1 for r in recs if r.result.protocol_error)
            other = sum(1 for r in recs if not r.result.ok and not r.result.protocol_error)
            exc = sum(len(r.result.exceptions) for r in recs)
            alerts = [a for r in recs for a in r.result.error_alerts]
            gen = sum(1 for a in alerts if generic in a)
            row = dict(n=len(recs), p50=pct(times, 50), p95=pct(times, 95),
                       max=max(times) if times else float("nan"),
                       protocol_errors=perr, failed_runs=other, exceptions=exc,
                       error_alerts=len(alerts) - gen, generic_errors=gen)
            summary["phases"][f"{phase}/{label}"] = row
            rows.append([phase, label, str(row["n"]), f"{row['p50']:.3f}", f"{row['p95']:.3f}",
                         f"{row['max']:.3f}", str(perr), str(other), str(exc),
                         str(row["error_alerts"]), str(gen)])
    summary["protocol_errors"] = (sum(1 for r in stats.records if r.result.protocol_error)
                                  + len(stats.connect_errors))
    # a replica killed on purpose costs its own sessions one lost run each; nothing else may fail
    killed, t_kill = stats.killed.get("replica"), stats.killed.get("t", float("inf"))
    summary["protocol_errors_killed"] = sum(1 for r in stats.records if r.result.protocol_error
                                            and killed and r.result.replica == killed and r.t >= t_kill)
    summary["protocol_errors_unexpected"] = summary["protocol_errors"] - summary["protocol_errors_killed"]
    summary["killed"] = stats.killed
    summary["reconnects"] = stats.reconnects
    summary["sticky_violations"] = sticky_violations(stats)
    summary["replicas_seen"] = sorted({rep for hops in stats.routes.values() for _, _, rep in hops})
    summary["pages"] = {}
    for page in sorted({r.page for r in stats.records if r.phase == "class"}):
        times = [r.result.seconds for r in stats.records if r.phase == "class" and r.page == page and r.result.ok]
        summary["pages"][page or "home"] = dict(n=len(times), p50=pct(times, 50), p95=pct(times, 95))
    # every class request over the target, with what it changed: what sets the p95
    summary["class_over_target"] = sorted(
        ((round(r.result.seconds, 3), r.page or "home", r.result.request) for r in stats.records
         if r.phase == "class" and r.result.ok and r.result.seconds >= TARGET_CLASS_P95), reverse=True)
    summary["exceptions"] = sum(len(r.result.exceptions) for r in stats.records)
    summary["page_not_found"] = sum(1 for r in stats.records if r.result.page_not_found)
    summary["browser"] = stats.browser
    summary["targets"] = class_targets(stats, summary, info)
    return rows, summary


def class_targets(stats: Stats, summary: dict, info: dict | None = None) -> dict:
    """The class targets over this run: class p95 < 1 s, burst p95 < 2 s, zero errors,
    zero exception elements (memory is reported apart).

    A replica killed on purpose (``--kill-at``) "only costs its own sessions a reconnect": the
    runs lost on it are counted apart (``protocol_errors_killed``), and its sessions' reconnect
    runs (the browser opening the same URL again, a new session on the surviving replica) are
    that cost, so they are left out of the class p95 and counted apart too. Every other run of
    the class counts, before and after the kill (the surviving replica then serves the whole
    class): the p95 before and after the kill are given as well, and the cores that other jobs on
    the machine used meanwhile (from ``info``).
    """
    t_kill = stats.killed.get("t", float("inf"))
    counted = [r for r in stats.records if r.phase == "class" and r.result.ok and r.kind != "reconnect"]
    times = [r.result.seconds for r in counted]
    before = [r.result.seconds for r in counted if r.t < t_kill]
    after = [r.result.seconds for r in counted if r.t >= t_kill]
    burst = [r.result.seconds for r in stats.records if r.phase == "burst" and r.kind == "widget" and r.result.ok]
    reconnects = [r.result.seconds for r in stats.records if r.phase == "class" and r.kind == "reconnect"]
    phases = summary["phases"].values()
    errors = summary["protocol_errors_unexpected"] + sum(v["failed_runs"] for v in phases)
    return dict(
        class_n=len(times), class_p50=pct(times, 50), class_p95=pct(times, 95),
        class_max=max(times, default=float("nan")),
        class_p95_before_kill=pct(before, 95), class_n_before_kill=len(before),
        class_p95_after_kill=pct(after, 95) if stats.killed else float("nan"), class_n_after_kill=len(after),
        reconnects_left_out=len(reconnects), reconnect_max=max(reconnects, default=float("nan")),
        burst_n=len(burst), burst_p95=pct(burst, 95),
        errors=errors, exceptions=summary["exceptions"],
        generic_errors=sum(v["generic_errors"] for v in phases),
        page_not_found=summary["page_not_found"],
        # cores other jobs on the machine took meanwhile: latencies measured beside them are theirs too
        class_other_cores=(info or {}).get("class_other_cores", float("nan")),
        burst_other_cores=(info or {}).get("burst_other_cores", float("nan")),
    )


def sticky_violations(stats: Stats) -> list[str]:
    """Browsers whose connections (page loads, websockets) reached more than one replica,
    except one move away from a replica killed on purpose, after it was killed."""
    killed, t_kill = stats.killed.get("replica"), stats.killed.get("t", float("inf"))
    out = []
    for idx, hops in sorted(stats.routes.items()):
        names = [rep for _, _, rep in hops]
        if "" in names:
            out.append(f"browser {idx}: a response without the replica header: {names}")
            continue
        before = {rep for t, _, rep in hops if t < t_kill}
        after = {rep for t, _, rep in hops if t >= t_kill}
        if len(before) > 1:
            out.append(f"browser {idx}: {names}")
        elif len(after) > 1 or (after and before and after != before and before != {killed}):
            out.append(f"browser {idx} (after the kill): {names}")
        elif killed in after:
            out.append(f"browser {idx}: reached {killed} after it was killed: {names}")
    return out


def print_report(stats: Stats, info: dict, args: argparse.Namespace) -> dict:
    rows, summary = summarise(stats, info)
    head = ["phase", "requests", "n", "p50 s", "p95 s", "max s", "proto err", "failed",
            "exceptions", "st.error", "generic err"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)] if rows else []
    print()
    print(f"GradLab load test: page '{info['page']}', {args.sessions} sessions x "
          f"{args.duration:.0f} s (think {args.think_min}-{args.think_max} s), burst {args.burst}, "
          f"{info['replicas']} replica(s){' behind HAProxy' if info['lb'] == 'haproxy' else ''}, port {info['port']}, "
          f"env {info['env'] or '-'}, options {info['options'] or '-'}")
    print("Widgets on the page: " + (", ".join(info.get("widgets", [])) or "none"))
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    mib = 1024
    before, after, peak = info["rss_before"], info["rss_after"], info["rss_peak"]
    if stats.killed:  # memory is compared over the replicas still running
        before = sum(info["rss_before_by_server"][port] for port in info["alive_ports"])
        info["rss_before_survivors"] = before
    growth = (after - before) / before if before else float("nan")
    print(f"\nServer RSS: start {info['rss_start'] / mib:.0f} MiB, before {before / mib:.0f} MiB "
          f"(after warm-up), peak {peak / mib:.0f} MiB, after {after / mib:.0f} MiB "
          f"({growth:+.1%}, {args.settle:.0f} s after the last tab closed); threads "
          f"{info['threads_before']} -> {info['threads_after']}")
    if "rss_cleared" in info:
        cleared = info["rss_cleared"]
        print(f"After clearing the caches: {cleared / mib:.0f} MiB ({(cleared - before) / before:+.1%}, "
              f"{args.settle:.0f} s later)")
    if len(info["rss_rounds"]) > 1:
        print("RSS after each round: " + ", ".join(
            f"{r / mib:.0f} MiB ({(r - before) / before:+.1%})" for r in info["rss_rounds"]))
    per_request = info["class_cpu"] * info["class_seconds"] / max(1, info["class_requests"])
    print(f"Server CPU during the class phase: {info['class_cpu']:.2f} cores on average "
          f"(of {os.cpu_count()}), {per_request * 1000:.0f} ms per request; health after: "
          f"{info['health_after']}")
    # CPU per request is steady from run to run; latencies are not when the hypervisor
    # hands this (virtual) machine's cores to someone else.
    steal = info["class_steal"]
    print(f"Machine: {info['class_busy']:.0%} of its CPU time busy during the class ({info['class_other_cores']:.2f} "
          f"cores of it by other jobs, not this client, its servers, workers or HAProxy), "
          f"{steal:.0%} stolen by the hypervisor"
          + (" - latencies are not representative; compare CPU per request instead"
             if steal > STEAL_WARNING else ""))
    cls = summary["phases"].get("class/all", {})
    bst = summary["phases"].get("burst/rerun", {})
    targets = summary["targets"]
    if stats.killed:  # the kill's reconnects are its own sessions' cost: left out of the class p95
        cls = dict(cls, p95=targets["class_p95"])
    # runs lost on a replica killed on purpose (--kill-at) are reported with the reconnects
    errors = summary["protocol_errors_unexpected"] + sum(v["failed_runs"] for v in summary["phases"].values())

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    print("\nTargets (2 cores):")
    if cls:
        print(f"  class p95 < {TARGET_CLASS_P95:.0f} s: {cls['p95']:.3f} s  "
              f"{verdict(cls['p95'] < TARGET_CLASS_P95)}"
              + (f" (over {targets['class_n']} runs, without the {targets['reconnects_left_out']} "
                 f"reconnects of the killed replica's sessions; p95 {targets['class_p95_before_kill']:.3f} s "
                 f"before the kill, {targets['class_p95_after_kill']:.3f} s after)" if stats.killed else ""))
    if bst:
        print(f"  burst p95 < {TARGET_BURST_P95:.0f} s: {bst['p95']:.3f} s  "
              f"{verdict(bst['p95'] < TARGET_BURST_P95)}")
    print(f"  zero errors: {errors} errors, {summary['exceptions']} exception elements, "
          f"{summary['page_not_found']} page-not-found  "
          f"{verdict(errors == 0 and summary['exceptions'] == 0 and not summary['page_not_found'])}")
    print(f"  memory back within {TARGET_MEMORY:.0%}: {growth:+.1%}  "
          f"{verdict(abs(growth) <= TARGET_MEMORY)}")
    if len(summary["pages"]) > 1:
        print("\nClass by page: " + ", ".join(f"{page} n={v['n']} p50 {v['p50']:.2f} s p95 {v['p95']:.2f} s"
                                              for page, v in summary["pages"].items()))
    if info["lb"] != "none":
        violations = summary["sticky_violations"]
        hops = sum(len(h) for h in stats.routes.values())
        print(f"\nThrough HAProxy: {len(stats.routes)} browsers, {hops} connections (page loads and "
              f"websockets) over replicas {', '.join(summary['replicas_seen'])}; every browser stayed on "
              f"one replica: {verdict(not violations)}")
        for v in violations[:10]:
            print(f"  NOT STICKY: {v}")
    if stats.killed:
        recs = stats.reconnects
        back = [r for r in recs if r["ok"] and not r["exceptions"] and r["same_page"] and r["same_query"]]
        print(f"Killed {stats.killed['replica']} {stats.killed['at']:.1f} s into the class: "
              f"{summary['protocol_errors_killed']} runs lost on it, {len(recs)} sessions reconnected "
              f"(to {', '.join(sorted({r['replica'] for r in recs})) or '-'}), {len(back)} with their view "
              f"back (same page, same query values, no exception); protocol errors elsewhere: "
              f"{summary['protocol_errors_unexpected']}  "
              f"{verdict(len(back) == len(recs) and summary['protocol_errors_unexpected'] == 0)}")
        for r in recs:
            if r not in back:
                print(f"  VIEW NOT BACK: {r}")
    if stats.browser:
        ok = sum(1 for b in stats.browser if b.get("ok"))
        secs = [b["seconds"] for b in stats.browser if "seconds" in b]
        print(f"\nBrowser check: {ok}/{len(stats.browser)} page loads correct under load"
              + (f", load-to-finished p50 {pct(secs, 50):.2f} s, max {max(secs):.2f} s" if secs else ""))
        for b in stats.browser:
            if not b.get("ok"):
                print(f"  FAILED {b}")
    slow = sorted((r for r in stats.records if r.phase == "class" and r.result.request),
                  key=lambda r: r.result.seconds, reverse=True)[:SLOWEST_SHOWN]
    if slow:
        print("\nSlowest reruns of the class (what changed, the view):")
        for r in slow:
            print(f"  {r.result.seconds:6.2f} s  {r.result.request[:160]}")
    for e in stats.connect_errors[:10]:
        print(f"  protocol error: {e}")
    shown = 0
    for r in stats.records:
        if (r.result.protocol_error or r.result.exceptions) and shown < 10:
            shown += 1
            first = r.result.exceptions[0] if r.result.exceptions else None
            print(f"  {r.phase}/{r.kind}{' on ' + r.result.replica if r.result.replica else ''}: "
                  f"{r.result.status} {r.result.protocol_error}"
                  + (f" exception {first.type}: {first.message[:120]}" if first else ""))
    summary.update(info=info, rss_growth=growth)
    return summary


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
    args = p.parse_args(argv)
    for kv in args.config:
        if "=" not in kv:
            p.error(f"--config takes KEY=VALUE, e.g. runner.postScriptGC=false; got {kv!r}")
    if args.quick:
        args.sessions, args.duration, args.burst = min(args.sessions, 3), min(args.duration, 5.0), min(args.burst, 3)
        args.browsers = 0 if args.browsers is None else args.browsers
        args.settle = 2.0 if args.settle is None else args.settle
    if args.against_floor:  # every page's presets; no Chromium beside the class (the floor has none)
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


def _same_view(before: str, after: str) -> bool:
    """Whether the URL after a reconnect shows the view ``before`` showed: no parameter added
    or changed. One may be gone: a bound widget at its default value is left out of the URL
    when a fresh session reads it (e.g. ``schemes=Central`` on the Explorer)."""
    was = {}
    for key, value in parse_qsl(before, keep_blank_values=True):
        was.setdefault(key, []).append(value)
    now = {}
    for key, value in parse_qsl(after, keep_blank_values=True):
        now.setdefault(key, []).append(value)
    return all(was.get(key) == values for key, values in now.items())


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.against_floor:
        from benchmarks.against_floor import main_against_floor

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
