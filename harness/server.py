"""A running app: ``streamlit run`` on 127.0.0.1 at a free port, and several measured together.

:class:`Server` starts the process, waits for its health check and stops it by its pid on
exit; :class:`Fleet` is the replicas of one run, which a tab sticks to as behind a load
balancer with sticky sessions, their memory and CPU summed.

>>> 1024 <= free_port() < 65536
True
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from pathlib import Path

from deploy.run_local import health, stop_process, streamlit_command, wait_healthy
from harness.processes import cpu_seconds, rss_kib, threads

REPO_ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def log_says(path: Path, text: str, timeout: float) -> None:
    """Wait until the log at ``path`` holds ``text``; RuntimeError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while text not in path.read_text(errors="replace"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {text!r} in {path} within {timeout:.0f} s")
        await asyncio.sleep(0.5)


class Server:
    """``streamlit run app.py`` on 127.0.0.1, stopped (by its pid) on exit."""

    def __init__(self, port: int, app: str = "app.py", cwd: Path = REPO_ROOT,
                 extra_env: dict[str, str] | None = None, log: Path | None = None,
                 options: dict[str, str] | None = None) -> None:
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self.cmd = streamlit_command(app, port, options)
        self.cwd = cwd
        # no start-up warm-up (gradlab/ui/warm_views.py) unless asked: its CPU would count in every measurement
        self.env = {"GRADLAB_WARM_PRESETS": "0", **os.environ, **(extra_env or {})}
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

    def running(self) -> list[Server]:
        return [s for s in self.servers if s.proc is not None and s.proc.poll() is None]

    def rss_kib(self) -> int:
        return sum(rss_kib(s.pid) for s in self.running())

    def rss_by_server(self) -> dict[int, int]:
        return {s.port: rss_kib(s.pid) for s in self.running()}

    def cpu_by_server(self) -> dict[int, float]:
        return {s.port: cpu_seconds(s.pid) for s in self.running()}

    def cpu_seconds(self) -> float:
        return sum(cpu_seconds(s.pid) for s in self.running())

    def threads(self) -> int:
        return sum(threads(s.pid) for s in self.running())

    def health(self) -> str:
        answers = {health(s.base_url) for s in self.running()}
        return answers.pop() if len(answers) == 1 else ",".join(sorted(answers))
