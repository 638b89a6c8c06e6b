"""Each page's answer sentence: the page's question answered from its engine's result.

One module per page: :mod:`~gradlab.labs.explorer.answer` (Explorer), :mod:`~gradlab.answers.check`
(Grad check), :mod:`~gradlab.labs.backward.answer` (Backward), :mod:`~gradlab.labs.network.answer` (Network),
:mod:`~gradlab.labs.summed.answer` (Summed loss), :mod:`~gradlab.labs.roundoff.answer` (Round-off).
The Grid page's sentence is :func:`gradlab.labs.grid.story.grid_answer`, part of the story it tells.

An answer is a level and a text, built from a result's numbers, never from prose: one
:class:`Answer` type (``success``, ``info``, ``warning`` or ``error``) on every page, the Grid's
too, shown by one function, :func:`gradlab.ui.messages.show_answer`, through one level ->
message box map. (:class:`gradlab.notes.Note` is another thing: what an engine attaches to a
result about part of it.)

>>> Answer("success", "Autograd is right.").is_warning
False
"""

from __future__ import annotations

from gradlab.view import ANSWER_LEVELS, Answer, AnswerLevel

__all__ = ["Answer", "AnswerLevel", "ANSWER_LEVELS"]
