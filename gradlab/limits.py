"""Every limit a user can hit, stated in one place.

A deployed GradLab link is public, so every computation a visitor can trigger
is limited. Modules import these numbers instead of writing their own, and
over a limit they raise :class:`gradlab.errors.LimitError` naming it.

>>> LIMITS.expression_chars
300
>>> within_limit("sweep points", 61, LIMITS.sweep_points)
61
"""

from __future__ import annotations

import contextvars
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path, PurePosixPath

from gradlab.errors import LimitError


def cpu_quota(text: str) -> float | None:
    """Cores granted by a cgroup CPU quota written ``"quota period"`` (cgroup v2's ``cpu.max``;
    v1's ``cpu.cfs_quota_us`` and ``cpu.cfs_period_us``), or None when there is no quota.

    >>> cpu_quota("150000 100000")  # docker run --cpus 1.5
    1.5
    >>> cpu_quota("max 100000"), cpu_quota("-1 100000"), cpu_quota("")
    (None, None, None)
    """
    try:
        quota, period = (int(value) for value in text.split())
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def usable_cpus(cgroup_root: str = "/sys/fs/cgroup", own_cgroups: str = "/proc/self/cgroup") -> int:
    """The cores this process may use: its CPU affinity (taskset, a container's cpuset), capped by
    the CPU quota (a container's ``--cpus``, rounded up) of its cgroup or any cgroup above it.
    ``os.cpu_count()`` counts the host's cores, which a container may be far from having."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quotas = [q for q in map(cpu_quota, _quota_texts(Path(cgroup_root), own_cgroups)) if q is not None]
    return max(1, min([cores, *(math.ceil(q) for q in quotas)]))


def _quota_texts(root: Path, own_cgroups: str):
    """The ``"quota period"`` texts of this process's cgroup and its ancestors ("" where absent).
    Walking up also finds a container's own cgroup, mounted at the root, when its path is the host's."""
    try:
        lines = Path(own_cgroups).read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        v2 = controllers == ""
        if not (v2 or "cpu" in controllers.split(",")):
            continue
        parts = PurePosixPath(path or "/").parts[1:]
        for depth in range(len(parts), -1, -1):
            where = (root if v2 else root / "cpu").joinpath(*parts[:depth])
            if v2:
                yield _read(where / "cpu.max")
            else:
                yield f"{_read(where / 'cpu.cfs_quota_us')} {_read(where / 'cpu.cfs_period_us')}"


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


_CPUS = usable_cpus()


@dataclass(frozen=True)
class Limits:
    # expression language: parse and build stay in milliseconds
    expression_chars: int = 300
    expression_nodes: int = 120
    expression_depth: int = 24
    literal_magnitude: float = 1e100  # largest |number| typed literally
    constant_magnitude: float = 1e300  # largest |value| of a constant sub-expression
    exponent_magnitude: float = 100  # largest |p| in a numeric exponent x**p
    # error-vs-eps sweep
    sweep_points: int = 401
    eps_smallest: float = 1e-300
    eps_largest: float = 1e6
    # tensor gradient checks
    tensor_elements: int = 1_048_576
    sampled_elements: int = 1_000
    full_check_elements: int = 65_536  # perturbations in one full check (each is 2+ forward passes)
    directional_checks: int = 64
    layer_checks: int = 128  # modules x calls a layer-by-layer check runs (each one or two gradient checks)
    recurrent_steps: int = 4096  # a gru layer's sequence: one step after another (~0.1 ms each with autograd)
    full_check_seconds: float = 20.0  # one full check on the page, projected from its pace
    chunk_bytes: int = 256 * 2**20  # memory for the batches of perturbed inputs in flight
    # worker threads of a full/sampled check (the default and the most allowed); the
    # Streamlit server uses one per check (gradlab.ui.runtime.CHECK_WORKERS)
    check_workers: int = min(2, _CPUS)
    # evaluation time: symbolic work whose cost size alone does not limit
    # (the 5th derivative of tan(tan(...(x))) grows ~6x per order: minutes for 12 levels)
    evaluation_seconds: float = 2.0  # exact derivatives of one expression (sympy + mpmath)
    # worker processes (gradlab.server.pool): heavy work runs there and is killed over a limit
    request_seconds: float = 10.0  # CPU seconds of one heavy request's worker, whatever its steps (5x on the wall clock)
    worker_memory_mb: int = 1536  # resident memory of the worker running one request
    pool_workers: int = _CPUS  # worker processes of one server: one per usable core (usable_cpus)
    # teaching pages
    roundoff_samples: int = 100_000
    roundoff_seconds: float = 5.0  # one comparison (~1 s per 100k points); tiny |x| in float64 needs ~3000-bit references
    network_width: int = 512
    network_depth: int = 6
    backward_vector_entries: int = 32  # entries of a, b, c, v (the Jacobian is n x n)
    backward_steps: int = 20  # replayed backward()/zero/forward steps in one session
    summed_terms: int = 200_000  # terms of the summed-loss lab (its compensated sum is a Python loop)
    # caches: entries kept per cached function, and for how long
    cache_entries: int = 32
    cache_entries_large: int = 8  # results holding one row per sample (megabytes each)
    cache_seconds: int = 3600
    # sessions (tabs) per client address, at serve.py's door (gradlab/server/edge.py); a class
    # behind one school NAT address is one address (docs/DEPLOYMENT.md, "Limits at the door")
    sessions_per_address: int = 120  # open at once: 30 students x 3 tabs, and a third more
    new_sessions_burst: int = 90  # opened at once: every tab of that class reconnecting together
    new_sessions_per_minute: int = 60  # then: 30 students reloading every 30 s, twice a busy class's pace


#: Environment variable that overrides limits, e.g. for a class on a small server:
#: ``GRADLAB_LIMITS="full_check_elements=4096, roundoff_samples=20000"``.
ENV_VARIABLE = "GRADLAB_LIMITS"

#: Named sets of overrides. "classroom": every request a student can make stays
#: well under a second of CPU, so 30 students fit on 2 cores (docs/DEPLOYMENT.md).
PROFILES = {
    "classroom": "tensor_elements=65536, sampled_elements=50, directional_checks=16, "
                 "full_check_elements=4096, full_check_seconds=3, roundoff_samples=20000, "
                 "roundoff_seconds=2, evaluation_seconds=1",
}


def limits_from(text: str | None) -> Limits:
    """The default limits with the overrides in ``text`` (``name=value`` pairs, comma-separated).

    A name in :data:`PROFILES` stands for its overrides; later pairs win.
    A misspelt name or a value that is not a positive number raises ValueError:
    a server must not start with a limit silently left at its default.

    >>> limits_from("roundoff_samples=20000, full_check_seconds=5").roundoff_samples
    20000
    >>> limits_from("classroom, full_check_seconds=5").full_check_elements
    4096
    >>> limits_from("roundof_samples=1")
    Traceback (most recent call last):
    ...
    ValueError: GRADLAB_LIMITS: no limit named 'roundof_samples'; the limits are in gradlab/limits.py.
    """
    defaults = Limits()
    overrides: dict[str, int | float] = {}
    expanded = ",".join(PROFILES.get(part.strip(), part) for part in (text or "").split(","))
    for item in filter(None, (part.strip() for part in expanded.split(","))):
        name, _, raw = (piece.strip() for piece in item.partition("="))
        if name not in _FIELD_TYPES:
            raise ValueError(f"{ENV_VARIABLE}: no limit named {name!r}; the limits are in gradlab/limits.py.")
        overrides[name] = _positive(name, raw, _FIELD_TYPES[name])
    return replace(defaults, **overrides)


def _positive(name: str, raw: str, kind: type) -> int | float:
    try:
        value = kind(raw) if kind is float else int(raw.replace("_", ""))
    except ValueError:
        raise ValueError(f"{ENV_VARIABLE}: {name}={raw!r} is not a{'n integer' if kind is int else ' number'}.") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{ENV_VARIABLE}: {name} must be a positive number, not {raw!r}.")
    return value


_FIELD_TYPES = {f.name: type(getattr(Limits(), f.name)) for f in fields(Limits)}

LIMITS = limits_from(os.environ.get(ENV_VARIABLE))


def within_limit(what: str, value: int | float, limit: int | float) -> int | float:
    """Return ``value`` when it is within ``limit``, else raise a LimitError naming it."""
    if value > limit:
        raise LimitError(
            f"Too many {what}: {value:g} asked for, GradLab allows at most {limit:g} "
            f"so that one request cannot slow the server for everyone."
        )
    return value


# The size limits of one check (LIMITS.tensor_elements) protect a server shared by many users:
# they bind the pages' engine calls (the labs' worker entries) and the CLI, which enter
# server_limits(), and not gradlab.gradcheck, assert_gradients or check_layers called from a user's own
# Python, where a 1-10 M-parameter model is the user's own time to spend (memory stays chunked
# by LIMITS.chunk_bytes either way).
_SERVER_LIMITS: contextvars.ContextVar[bool] = contextvars.ContextVar("gradlab_server_limits", default=False)


@contextmanager
def server_limits():
    """Within it, :func:`size_limit` is the server's limit: entered by the pages' engine calls
    (the labs' worker entries: :mod:`gradlab.server.worker_entries`) and the CLI.

    >>> size_limit(LIMITS.tensor_elements) == math.inf
    True
    >>> with server_limits():
    ...     size_limit(LIMITS.tensor_elements) == LIMITS.tensor_elements
    True
    """
    token = _SERVER_LIMITS.set(True)
    try:
        yield
    finally:
        _SERVER_LIMITS.reset(token)


def size_limit(limit: int | float) -> int | float:
    """``limit`` within :func:`server_limits` (the server and the CLI), else no limit (inf): a size
    limit that guards the server's other users, not a check run on the user's own machine."""
    return limit if _SERVER_LIMITS.get() else math.inf
