"""Run N GradLab replicas behind HAProxy on this machine, without containers.

    python deploy/run_local.py                    # 2 replicas (one per core), http://127.0.0.1:8080
    python deploy/run_local.py --replicas 4 --port 8631 --limits classroom
    python deploy/run_local.py --address 0.0.0.0  # reachable from the classroom's network

Each replica is ``streamlit run serve.py`` (app.py plus its security headers) on
127.0.0.1 at ports ``--port``+1, +2, ...; HAProxy (Debian: ``apt-get install -y
haproxy``) listens on ``--address:--port`` with ``deploy/haproxy.cfg``, the same
file the compose set-up uses, its DNS-discovered servers replaced by the local
ones. Ctrl-C stops everything. ``benchmarks/load_test.py --lb haproxy`` and
``tests/test_deploy_lb.py`` use :class:`Balancer` from here, and every script that starts
a Streamlit server (the load test, the benchmarks, the server tests) starts, waits for and
stops it with :func:`streamlit_command`, :func:`wait_healthy` and :func:`stop_process` from here.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
CONFIG = Path(__file__).with_name("haproxy.cfg")
HAPROXY = os.environ.get("GRADLAB_HAPROXY", "haproxy")

_TEMPLATE_LINE = re.compile(r"^\s*server-template .*$", re.MULTILINE)


def local_config(ports: list[int], host: str = "127.0.0.1") -> str:
    """deploy/haproxy.cfg with one ``server rI host:port`` line per replica instead of DNS discovery.

    >>> cfg = local_config([8632, 8633])
    >>> [line.split()[1:3] for line in cfg.splitlines() if line.strip().startswith("server ")]
    [['r1', '127.0.0.1:8632'], ['r2', '127.0.0.1:8633']]
    """
    text = CONFIG.read_text(encoding="utf-8")
    if len(_TEMPLATE_LINE.findall(text)) != 1:
        raise ValueError(f"{CONFIG} must have exactly one server-template line to replace")
    servers = "\n".join(f"    server r{i} {host}:{port} check" for i, port in enumerate(ports, 1))
    return _TEMPLATE_LINE.sub(lambda _: servers, text)


def streamlit_command(entry: str, port: int, options: dict[str, str] | None = None) -> list[str]:
    """``streamlit run <entry>`` on 127.0.0.1:``port``, headless, with any further ``--key value``.

    >>> streamlit_command("app.py", 8501, {"server.maxUploadSize": "1"})[-6:]
    ['--server.port', '8501', '--browser.gatherUsageStats', 'false', '--server.maxUploadSize', '1']
    """
    cmd = [sys.executable, "-m", "streamlit", "run", entry, "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"]
    for key, value in (options or {}).items():
        cmd += [f"--{key}", value]
    return cmd


def health(url: str, timeout: float = 2.0) -> str:
    """What ``url`` + /_stcore/health answers ("ok" when the server is ready)."""
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as response:
        return response.read().decode(errors="replace")


def wait_healthy(url: str, seconds: float, proc: subprocess.Popen | None = None) -> None:
    """Poll ``url`` + /_stcore/health until it answers "ok" (RuntimeError after ``seconds``, or
    as soon as ``proc`` has exited)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode} before {url} was healthy")
        try:
            if health(url) == "ok":
                return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"{url}/_stcore/health did not answer 'ok' within {seconds:.0f} s")


def stop_process(proc: subprocess.Popen | None, patience: float = 10.0) -> None:
    """End a process we started, by its pid: SIGTERM, then SIGKILL after ``patience`` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(patience)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


class Balancer:
    """HAProxy with deploy/haproxy.cfg in front of replicas on ``ports``; stopped (by its pid) on exit.

    ``with Balancer(8631, [8632, 8633]) as lb: ...`` waits until every replica is
    up behind it; ``lb.url`` is where browsers go.
    """

    def __init__(self, port: int, ports: list[int], address: str = "127.0.0.1",
                 log: Path | None = None, env: dict[str, str] | None = None) -> None:
        self.port, self.ports, self.address = port, list(ports), address
        self.env = dict(env or {})  # e.g. GRADLAB_LB_REQUEST_RATE: haproxy.cfg's presetenv defaults
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log
        self.proc: subprocess.Popen | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="gradlab-haproxy-")
        self.config_path = Path(self._dir.name) / "haproxy.cfg"

    def __enter__(self) -> Balancer:
        self.config_path.write_text(local_config(self.ports), encoding="utf-8")
        env = {**os.environ, **self.env, "GRADLAB_BIND": f"{self.address}:{self.port}"}
        out = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        # -db: stay in the foreground, so the pid we hold is HAProxy's own.
        self.proc = subprocess.Popen([HAPROXY, "-db", "-f", str(self.config_path)], env=env,
                                     stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_healthy(self.url, 30, self.proc)
            self.wait_servers_up(30)
        except BaseException:
            self.__exit__()
            raise
        return self

    def wait_servers_up(self, seconds: float) -> None:
        """Until HAProxy's health checks have seen every replica up (each answers through it)."""
        deadline = time.monotonic() + seconds
        seen: set[str] = set()
        while time.monotonic() < deadline and len(seen) < len(self.ports):
            # a fresh request without the cookie goes to the least-loaded live replica
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    seen.add(r.headers.get("X-GradLab-Replica", ""))
            except OSError:
                pass
            if len(seen) < len(self.ports):
                time.sleep(0.2)
        if len(seen) < len(self.ports):
            raise RuntimeError(f"only {sorted(seen)} of {len(self.ports)} replicas answered through HAProxy")

    def __exit__(self, *exc: object) -> None:
        stop_process(self.proc)
        self._dir.cleanup()


#: Where the replicas' clients come from: HAProxy, on this machine. serve.py believes the
#: X-Forwarded-For it appends (the visitor's address, for the per-address session limits)
#: only from these (gradlab/server/visitors.py).
BALANCER_ADDRESSES = "127.0.0.1"


def start_replica(port: int, limits: str = "", entry: str = "serve.py") -> subprocess.Popen:
    """``streamlit run <entry>`` on 127.0.0.1:``port`` with the image's runtime settings, trusting
    the local balancer's ``X-Forwarded-For``."""
    env = {**os.environ, "MALLOC_ARENA_MAX": "2", "PYTHONMALLOC": "malloc", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "ONEDNN_PRIMITIVE_CACHE_CAPACITY": "16",
           "GRADLAB_TRUSTED_PROXIES": BALANCER_ADDRESSES}
    if limits:
        env["GRADLAB_LIMITS"] = limits
    return subprocess.Popen(streamlit_command(entry, port), cwd=REPO_ROOT, env=env)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicas", type=int, default=os.cpu_count() or 1,
                   help="streamlit processes (default: one per core; each uses about one core)")
    p.add_argument("--port", type=int, default=8080, help="HAProxy's port (replicas use the next ones)")
    p.add_argument("--address", default="127.0.0.1", help="HAProxy's address (0.0.0.0: every interface)")
    p.add_argument("--limits", default=os.environ.get("GRADLAB_LIMITS", "classroom"),
                   help="GRADLAB_LIMITS for the replicas (default: classroom, as the image)")
    args = p.parse_args(argv)
    ports = [args.port + i for i in range(1, max(1, args.replicas) + 1)]
    replicas = [start_replica(port, args.limits) for port in ports]
    try:
        for port, proc in zip(ports, replicas, strict=True):
            wait_healthy(f"http://127.0.0.1:{port}", 120, proc)
        with Balancer(args.port, ports, address=args.address) as lb:
            print(f"GradLab: {len(ports)} replica(s) behind HAProxy at {lb.url} "
                  f"(listening on {args.address}:{args.port}); Ctrl-C stops.", flush=True)
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            while all(p.poll() is None for p in replicas) and lb.proc.poll() is None:
                time.sleep(1)
            print("a replica or HAProxy stopped; shutting down", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for proc in replicas:
            stop_process(proc)


if __name__ == "__main__":
    sys.exit(main())
