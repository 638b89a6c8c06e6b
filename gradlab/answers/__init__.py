"""Each page's answer sentence: the page's question answered from its engine's result.

An answer is a level (``success``, ``info``, ``warning``, ``error``) and a text, built
from a result's numbers, never from prose; the pages show it through one level -> message
box map (:func:`gradlab.ui.messages.show_answer`).
"""
