"""Process-wide settings for the server, applied once from ``app.py``.

One Streamlit process serves every visitor, each session in its own thread.
Torch's default thread pools would let one visitor's tensor work claim every
core (and two visitors' work fight over them), so the server runs torch ops on
one thread each: a heavy request then slows its own session, not everyone's.
"""

from __future__ import annotations

import threading

import torch

__all__ = ["configure_runtime", "TORCH_THREADS", "TORCH_INTEROP_THREADS", "CHECK_WORKERS"]

#: Intra-op threads per torch op; the server's parallelism comes from sessions, not ops.
TORCH_THREADS = 1
#: Worker threads of one gradient check on the page (scripts and the CLI default to
#: LIMITS.check_workers, one per core): one visitor's full check keeps to one core, as
#: TORCH_THREADS keeps their tensor ops, so a second visitor is not slowed by it.
CHECK_WORKERS = 1
#: Inter-op threads (torch allows setting this once per process, before any parallel work).
TORCH_INTEROP_THREADS = 1

_lock = threading.Lock()
_configured = False


def configure_runtime() -> None:
    """Limit torch to one intra-op and one inter-op thread; call it on every rerun.

    The intra-op setting is re-applied each time (cheap), so code that changed it
    meanwhile cannot leave the server on every core; the inter-op pool can only
    be sized once per process, before any parallel work, so that is done once.
    """
    global _configured
    with _lock:
        if torch.get_num_threads() != TORCH_THREADS:
            torch.set_num_threads(TORCH_THREADS)
        if _configured:
            return
        try:
            torch.set_num_interop_threads(TORCH_INTEROP_THREADS)
        except RuntimeError:
            pass  # already set, or parallel work already started: it can only be set once
        _configured = True
