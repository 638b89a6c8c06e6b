"""gradlab.gradcheck's default progress (gradlab/check/running/terminal_progress.py): a line with an
estimate on a terminal's stderr for a long check, nothing for a quick one or off a terminal."""

import io
import sys

import torch

import gradlab
import gradlab.check.running.terminal_progress as terminal


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _check():
    return gradlab.gradcheck(torch.sin, torch.linspace(0.0, 1.0, 100, dtype=torch.float64))


def test_a_long_check_on_a_terminal_shows_its_pace_and_an_estimate(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    monkeypatch.setattr(terminal, "QUIET_SECONDS", 0.0)  # as if the check took long
    assert _check().verdict == "pass"
    text = sys.stderr.getvalue()
    assert "gradcheck: 13 of 13 perturbations evaluated in" in text, repr(text)
    # after the pass the line says the values are judged, then the check's end closes it
    assert "judging the values beyond tolerance" in text, repr(text)
    assert text.split("\r")[-1].startswith("\x1b[Kgradcheck: done in ") and text.endswith(" s\n"), repr(text)


def test_the_line_is_ended_when_the_check_raises(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    monkeypatch.setattr(terminal, "QUIET_SECONDS", 0.0)

    def fn(t):
        if t.dim() > 1 or not bool((t == torch.linspace(0.0, 1.0, 100, dtype=torch.float64)).all()):
            raise ValueError("refused off x")
        return t.sin()

    try:
        gradlab.gradcheck(fn, torch.linspace(0.0, 1.0, 100, dtype=torch.float64))
    except Exception:  # noqa: BLE001 - whatever the check makes of fn's refusal, the line is ended
        pass
    text = sys.stderr.getvalue()
    assert text == "" or text.endswith("\n"), repr(text)


def test_a_quick_check_or_no_terminal_prints_nothing(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert _check().verdict == "pass"
    assert sys.stderr.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(terminal, "QUIET_SECONDS", 0.0)
    assert _check().verdict == "pass"
    assert sys.stderr.getvalue() == ""


def test_a_callers_progress_replaces_it(monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    monkeypatch.setattr(terminal, "QUIET_SECONDS", 0.0)
    seen = []
    gradlab.gradcheck(torch.sin, torch.linspace(0.0, 1.0, 100, dtype=torch.float64),
                      progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] and sys.stderr.getvalue() == ""
