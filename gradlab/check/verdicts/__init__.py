"""Verdicts and reports: each value's state, the table and summary, their words, what is returned.

- ``judging``: each checked value's state, after re-estimating the values that do not pass.
- ``autograd_slack``: how far autograd's own value may be off (its rounding, a backward's spread).
- ``states``: the four states' rows and the words of a verdict (headline, message, hint, notes).
- ``element``: one checked value (a leaf both ``states`` and ``results`` read).
- ``columns``: the per-value table as numpy columns, a DataFrame on demand.
- ``table_rows``: a row of that table as an Element, and the worst row.
- ``report``: the value table and the summary.
- ``diagnosis``: why a check passed or failed, with the fix.
- ``culprit_output``: which output part a wrong gradient comes through.
- ``nonfinite``: fn NaN or inf at the given input, said plainly.
- ``hand_written``: what a hand-written check prints beside a sampled check's values.
- ``results``: what a check returns (``CheckResult``, ``CheckSummary``, ``GradcheckError``).
- ``notebook``: a result in Jupyter: headline, worst values, figure.
"""
