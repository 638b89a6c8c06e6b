"""issue 38: the checker installs without the web app. ``pip install gradlab`` brings what
``gradlab.gradcheck`` and its friends need; Streamlit, Plotly and python-flint come with the
``app`` extra (and requirements.txt, which ``streamlit run app.py`` uses)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
WEB_LAB = {"streamlit", "plotly", "python-flint", "orjson"}  # orjson: Plotly encodes charts with it


def _names(requirements) -> set[str]:
    return {re.split(r"[<>=\[ ;]", r.strip(), maxsplit=1)[0].lower() for r in requirements
            if r.strip() and not r.strip().startswith(("#", "-r"))}


def test_the_checker_needs_no_web_lab_and_the_app_extra_brings_it():
    base, app = _names(PROJECT["dependencies"]), _names(PROJECT["optional-dependencies"]["app"])
    assert base == {"torch", "numpy", "pandas", "sympy", "mpmath"} and app == WEB_LAB
    assert "torch==2.13.0" in PROJECT["dependencies"]  # unpinned, pip pulls the CUDA build
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert _names(requirements) == base | app  # the web lab's own command installs everything
    assert "gradlab[app]" in PROJECT["optional-dependencies"]["dev"]


#: Runs with Streamlit, Plotly and flint impossible to import: what the checker does in a venv
#: that has only the base dependencies.
_WITHOUT_WEB_LAB = textwrap.dedent("""
    import html, importlib.abc, json, sys
    BLOCKED = ("streamlit", "plotly", "flint")
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, Block())
    import torch, gradlab
    from gradlab.errors import GradLabError
    from gradlab.notebook_html import NO_PLOTLY
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    check = gradlab.gradcheck(torch.sin, x)
    gradlab.assert_gradients(torch.sin, x)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh()).double()
    layers = gradlab.check_layers(model, torch.randn(2, 3, dtype=torch.float64))
    sweep = gradlab.sweep("sin(x)", at=1.0, dtypes=("float64",))
    pages = [r._repr_html_() for r in (check, layers, sweep)]
    try:
        check.figure()
        asked = "drawn"
    except GradLabError as err:
        asked = str(err)
    from gradlab.cli.main import main
    code = main(["check", "--mode", "sampled", "--samples", "3"])
    print(json.dumps({"verdicts": [check.verdict, layers.passed], "said": ["<table" in p for p in pages],
                      "asked": asked == NO_PLOTLY, "cli": code,
                      "imported": sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in BLOCKED})}))
""")


@pytest.mark.slow
def test_check_layers_sweep_the_cli_and_notebook_tables_run_without_the_web_lab():
    done = subprocess.run([sys.executable, "-c", _WITHOUT_WEB_LAB], cwd=ROOT, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"verdicts": ["pass", True], "said": [True, True, True], "asked": True, "cli": 0, "imported": []}, out
