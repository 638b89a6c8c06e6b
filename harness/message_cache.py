"""The frontend's message cache, as a Streamlit client keeps it.

A ``ForwardMsg`` with ``metadata.cacheable`` is kept by the client under its ``hash``; the
client lists the hashes it holds in ``ClientState.cached_message_hashes`` and the server then
sends a small ``ref_hash`` message instead of the full one. Entries unused for more than
``max_cached_message_age`` runs are dropped (as the frontend does).

>>> from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
>>> cache = MessageCache()
>>> full = ForwardMsg(hash="h1")
>>> full.metadata.cacheable = True
>>> _ = cache.resolve(full)
>>> cache.resolve(ForwardMsg(ref_hash="h1")).hash, cache.ref_hits
('h1', 1)
>>> for _ in range(3):
...     cache.age()
>>> cache.hashes()
[]
"""

from __future__ import annotations

from harness.runs import ProtocolError
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


class MessageCache:
    """hash -> the full message and the last run that used it; ``enabled=False``: nothing kept."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.entries: dict[str, list] = {}  # hash -> [ForwardMsg, last run it was used]
        self.runs = 0  # full runs finished
        self.max_age = 2  # the server's max_cached_message_age, once new_session says it
        self.ref_hits = 0

    def resolve(self, msg: ForwardMsg) -> ForwardMsg:
        """The full message ``msg`` stands for (a ``ref_hash`` looked up), keeping a cacheable one."""
        if msg.WhichOneof("type") == "ref_hash":
            entry = self.entries.get(msg.ref_hash)
            if entry is None:
                raise ProtocolError(f"ref_hash {msg.ref_hash} is not in the client cache")
            full = ForwardMsg()
            full.CopyFrom(entry[0])
            full.metadata.CopyFrom(msg.metadata)  # delta_path etc. of *this* run
            entry[1] = self.runs
            self.ref_hits += 1
            return full
        if self.enabled and msg.metadata.cacheable and msg.hash:
            self.entries[msg.hash] = [msg, self.runs]
        return msg

    def age(self) -> None:
        """A full run finished: drop the entries no run used for more than ``max_age`` runs."""
        self.runs += 1
        for h in [h for h, (_, used) in self.entries.items() if self.runs - used > self.max_age]:
            del self.entries[h]

    def hashes(self) -> list[str]:
        """What the client tells the server it holds."""
        return list(self.entries) if self.enabled else []
