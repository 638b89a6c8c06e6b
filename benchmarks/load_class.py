"""The load test's class: tabs that open a page from a shared link and interact until told to
stop, a burst of tabs rerunning at one instant, Chromium checking the real page meanwhile, and
the server's memory and CPU sampled throughout (:func:`run`).

Every run is recorded (:class:`Stats`); :mod:`benchmarks.load_report` reads the records.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

from benchmarks.class_links import CHANGED_CONTROL, Step, all_pages, changing_moves, changing_steps, page_links, text_choices
from gradlab.ui.warm_views import warming_enabled
from harness.browser import CHROMIUM, CHROMIUM_ARGS, CONNECTED, SCRIPT_FINISHED
from harness.processes import machine_ticks, other_cores, process_ticks
from harness.runs import ProtocolError, RunResult
from harness.server import Fleet, Server, free_port, log_says
from harness.session import StreamlitSession
from harness.widgets import state_for

RECONNECT_ATTEMPTS = 3  # a browser behind the load balancer retries a failed reconnect ...
RECONNECT_BACKOFF = 1.0  # ... after 1 s, then 2 s (Streamlit's frontend retries with backoff)


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


# ---------------------------------------------------------------------- students


async def student(idx: int, base_url: str, page: str, links: list[str], stop_at: float,
                  stats: Stats, rng: random.Random, think: tuple[float, float],
                  text: dict[str, list[str]], via_lb: bool = False,
                  move: Callable[[random.Random], str] | None = None,
                  step: Callable[[random.Random], Step] | None = None) -> None:
    """One tab: open a link, then interact every ``think`` seconds until ``stop_at``.

    ``move``: the tab is a student of a changing class, who opens the link ``move`` draws (a
    preset with one control changed), then every ``think`` seconds takes the ``step`` it draws in
    the same tab (clicks a preset's button, then sets the control), as in a browser; without
    ``step``, opens a new ``move`` link instead (each move a new tab).

    Each student is a browser of its own: its cookies, the page's HTML loaded before each
    websocket, so the server tells the students apart as visitors (gradlab.server.visitors; a
    class without cookies is one visitor running one script at a time).

    ``via_lb``: the browser is behind a load balancer, and when its websocket is lost it
    reconnects to the same URL, as Streamlit's frontend does.
    """
    await asyncio.sleep(rng.uniform(0, min(3.0, max(0.0, stop_at - time.monotonic()) / 4)))
    jar: dict[str, str] = {}
    tab = StreamlitSession(base_url, cookies=jar)

    async def open_tab(query: str, kind: str) -> RunResult:
        nonlocal tab
        await tab.close()
        tab = StreamlitSession(base_url, cookies=jar)
        tab.query_string = query  # the URL this tab shows, even if loading it fails
        replica = await tab.load_page(page, query)
        if via_lb:
            stats.route(idx, "page", replica)
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
        result = await open_or_lose(move(rng) if move else rng.choice(links), "open")
        while True:
            if result.protocol_error:
                if not via_lb:
                    break
                await recover(result)
            await asyncio.sleep(rng.uniform(*think))
            if time.monotonic() >= stop_at:
                break
            if step is not None:
                result = await _take(tab, step(rng), stats, idx, page)
                if result is None:  # the button or the control is not drawn: a new tab on a changed link
                    result = await open_or_lose(move(rng), "link")
                continue
            if move is not None:
                result = await open_or_lose(move(rng), "link")
                continue
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


async def _take(tab: StreamlitSession, step: Step, stats: Stats, idx: int, page: str) -> RunResult | None:
    """A changing class's move in an open tab: the preset's button clicked, then its control set
    (each a rerun, recorded as a widget change); None when either is not on the page."""
    button = tab.find_widget(user_key=step.button)
    if button is None:
        return None
    result = await tab.set_widget(button, state_for(button, True))
    stats.add("class", "widget", result, idx, page)
    control = tab.find_widget(url_key=step.control)
    if not result.ok or control is None:
        return result if result.ok else None
    result = await tab.set_widget(control, state_for(control, step.value))
    stats.add("class", "widget", result, idx, page)
    return result


#: The line gradlab.ui.warm_views logs when its first pass over the presets has ended.
WARMED = "warmed "
WARM_TIMEOUT = 600.0


async def _presets_warmed(server: Server) -> None:
    """Wait for the server's log to say every preset's view is warm (the first run started it)."""
    await log_says(server.log_path, WARMED, WARM_TIMEOUT)


async def burst(fleet: "Fleet", pages: list[str], links: dict[str, list[str]], n: int, stats: Stats,
                rng: random.Random, text: dict[str, list[str]]) -> None:
    """``n`` tabs (tab i on page i mod len(pages)) open their page, then all rerun at once
    (one widget change each). Each tab is a new browser."""
    tabs = [StreamlitSession(fleet.url(i), cookies={}) for i in range(n)]
    tab_pages = [pages[i % len(pages)] for i in range(n)]
    queries = [rng.choice(links[page]) for page in tab_pages]
    try:
        for tab, page, query in zip(tabs, tab_pages, queries, strict=True):
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
                        await tab.wait_for_selector(CONNECTED, timeout=60_000)
                        await tab.wait_for_selector(SCRIPT_FINISHED, timeout=60_000)
                        if expect_chart:
                            await tab.wait_for_selector(
                                "[data-testid='stPlotlyChart'] .main-svg", timeout=60_000)
                        await tab.wait_for_timeout(300)
                        await tab.wait_for_selector(SCRIPT_FINISHED, timeout=60_000)
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
    pages = all_pages() if args.page == "all" else [args.page]
    if args.changing:  # only pages with presets and a control to change
        pages = [page for page in pages if changing_moves(page or "home")]
    links = {page: page_links(page or "home") for page in pages}
    text = text_choices()
    port = args.port or free_port()
    env = {}
    if args.omp_threads:
        env["OMP_NUM_THREADS"] = str(args.omp_threads)
    if args.limits:
        env["GRADLAB_LIMITS"] = args.limits
    options = dict(kv.split("=", 1) for kv in args.config)
    # GradLab warms every preset's view as it starts (gradlab/ui/warm_views.py), as a deployed
    # server does before its class arrives: the class starts once that first pass has ended (not in
    # the test suite, whose conftest turns it off for every server it starts)
    warming = (Path(args.entry).name in ("app.py", "serve.py") and not getattr(args, "no_warm_presets", False)
               and warming_enabled())
    env["GRADLAB_WARM_PRESETS"] = "1" if warming else "0"
    info: dict = {"page": args.page, "links": sum(map(len, links.values())), "port": port, "env": env,
                  "changing": {page: CHANGED_CONTROL[page] for page in pages} if args.changing else {},
                  "options": options, "replicas": args.replicas, "lb": args.lb}
    stats = Stats()
    log = Path(args.server_log) if args.server_log else None
    with contextlib.ExitStack() as stack:
        if warming and log is None:  # the warm-up says in the server's log when its first pass ended
            log = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "server.log"
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
        if warming:
            t0 = time.monotonic()
            await asyncio.gather(*(_presets_warmed(server) for server in servers))
            info["warm_presets_wait"] = time.monotonic() - t0
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
            for server in fleet.running():
                tab = StreamlitSession(server.base_url)
                await tab.connect()
                stats.add("warm-up", "open", await tab.open(pages[0], ""))
                await tab.clear_caches()
                await asyncio.sleep(1.0)
                await tab.close()
            await asyncio.sleep(args.settle)
            info["rss_cleared"] = fleet.rss_kib()
        info["threads_after"] = fleet.threads()
        info["alive_ports"] = [s.port for s in fleet.running()]
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
                    via_lb=bool(fleet.lb_url), move=changing_moves(pages[i % len(pages)]) if args.changing else None,
                    step=changing_steps(pages[i % len(pages)]) if args.changing and not getattr(args, "changing_tabs", False) else None)
            for i in range(args.sessions)]
    if args.browsers:
        page = "explorer" if len(pages) > 1 else pages[0]
        expect_chart = args.expect_chart if args.expect_chart is not None else bool(page)
        jobs.append(browsers(fleet.url(0), page, links.get(page) or page_links(page), args.browsers,
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


def _same_view(before: str, after: str) -> bool:
    """Whether the URL after a reconnect shows the view ``before`` showed: no parameter added
    or changed. One may be gone: a URL widget at its default value is left out of the URL
    when a fresh session reads it (e.g. ``schemes=Central`` on the Explorer)."""
    was = {}
    for key, value in parse_qsl(before, keep_blank_values=True):
        was.setdefault(key, []).append(value)
    now = {}
    for key, value in parse_qsl(after, keep_blank_values=True):
        now.setdefault(key, []).append(value)
    return all(was.get(key) == values for key, values in now.items())
