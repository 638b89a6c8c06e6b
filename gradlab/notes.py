"""A note an engine attaches to its result: a level and a sentence, never prose to be parsed.

The engine decides the level where it knows why it writes the note: a
``warning`` says that part of the result is missing or unreliable (a dtype
that overflows, no exact reference), an ``info`` explains what is shown (gaps
on a log axis, a scheme that does not apply). Pages and the CLI show the text
as it is and choose how by the level.

>>> note = Note.warning("float16: f(x) = 2.69e+43 overflows float16.")
>>> note.level, note.is_warning
('warning', True)
>>> Note.info("3 estimates are gaps.").is_warning
False
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Note", "NoteLevel"]

NoteLevel = Literal["info", "warning"]
_LEVELS = ("info", "warning")


@dataclass(frozen=True)
class Note:
    """One sentence about a result, with how much it matters."""

    level: NoteLevel
    text: str

    def __post_init__(self) -> None:
        if self.level not in _LEVELS:
            raise ValueError(f"A note's level is 'info' or 'warning', not {self.level!r}.")

    @classmethod
    def info(cls, text: str) -> "Note":
        """A note that explains what is shown."""
        return cls("info", text)

    @classmethod
    def warning(cls, text: str) -> "Note":
        """A note that says part of the result is missing or not to be trusted."""
        return cls("warning", text)

    @property
    def is_warning(self) -> bool:
        return self.level == "warning"
