"""The recipes of docs/ARCHITECTURE.md, each performed in a copy of the repository.

A recipe says which files adding a thing touches (at most three); the test makes exactly those
edits in a temporary copy, runs the tests that thing reaches there and checks it shows up where
the recipe promises. A test pinned to today's rows, a registry the recipe forgets, or a
page that needs a file the recipe does not name fails here, not in the next contributor's hands.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture
def copy(tmp_path) -> Path:
    """The repository's files (tracked, and new ones not ignored) copied to a temporary folder."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tmp_path / name)
    return tmp_path


def insert_after(root: Path, path: str, anchor: str, text: str) -> None:
    """The recipe's one edit: ``text`` after the first ``anchor`` in ``path`` (which must hold it)."""
    file = root / path
    source = file.read_text()
    assert source.count(anchor) >= 1, f"{path} no longer holds {anchor!r}: update the recipe"
    file.write_text(source.replace(anchor, anchor + text, 1))


def run(root: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python *args`` in the copy, importing the copy's gradlab (never the installed one)."""
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=timeout)


def passes(root: Path, *tests: str, k: str | None = None) -> int:
    """The named tests pass in the copy (fast tier, one process: the suite's workers are busy);
    how many passed."""
    selection = ["-k", k] if k else []
    done = run(root, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider", "-p", "no:randomly",
               "-m", "not slow and not browser and not server", *selection, *tests)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return int(re.search(r"(\d+) passed", done.stdout).group(1))


def test_a_dtype_is_one_row(copy):
    """docs/ARCHITECTURE.md, "A dtype": one row in DTYPE_TABLE; widgets, tables, the CLI take it."""
    insert_after(copy, "gradlab/numerics/dtypes.py", '''label="float8_e5m2 (emulated)", compute=torch.float32),
''', '''        _facts("float8_e4m3fnuz", None, rtol=0.5, atol=0.1, colour="#5d7a1f", aliases=("e4m3fnuz",),
               label="float8_e4m3fnuz (emulated)", compute=torch.float32),
''')
    passes(copy, "tests/test_vocabulary.py", "tests/test_precision_table.py", "tests/test_fp8.py",
           "tests/test_sweep_answer.py")
    listed = run(copy, "-m", "gradlab", "dtypes")
    assert listed.returncode == 0 and "float8_e4m3fnuz" in listed.stdout, listed.stderr


def test_a_scheme_is_one_row(copy):
    """docs/ARCHITECTURE.md, "A scheme": one row in SCHEMES; the sweep, figures and the CLI take it."""
    insert_after(copy, "gradlab/numerics/schemes.py", '''help="extrapolates two central differences: error ∝ h⁴."),
''', '''        Scheme(name="forward_3point", label="3-point forward", short_label="3-point forward",
               order=2, offsets=(0.0, 1.0, 2.0), weights=(-3 / 2, 2.0, -1 / 2), truncation_constant=1 / 3,
               dash="dot", symbol="star", help="(−3f(x) + 4f(x+h) − f(x+2h))/2h: error ∝ h², one-sided."),
''')
    passes(copy, "tests/test_schemes.py", "tests/test_vocabulary.py", "tests/test_sweep.py")
    swept = run(copy, "-m", "gradlab", "sweep", "exp(x)", "--at", "1", "--scheme", "forward_3point", "--points", "5", "--format", "csv")
    assert swept.returncode == 0 and "forward_3point" in swept.stdout, swept.stderr[-2000:]


def test_a_preset_is_one_row(copy):
    """docs/ARCHITECTURE.md, "A preset": one Preset in PRESETS; the page's buttons, its link and the
    page's own per-preset tests take it."""
    insert_after(copy, "gradlab/teaching/presets.py", '''"get coarser while a gradient element stays the same."),
''', '''    Preset("summed", "bfloat16_small", "A small loss in bfloat16",
           "How coarse is a small loss in bfloat16?", {**_SUMMED, "shape": "20x30", "dtype": "bfloat16"},
           "bfloat16 keeps 8 significant bits: even 600 terms sum to a coarse grid."),
''')
    passes(copy, "tests/test_presets.py", "tests/test_page_summed.py", k="bfloat16_small or gallery or unique")
    shown = run(copy, "-c", "from gradlab.teaching.presets import preset, url_query; "
                            "print(url_query(preset('summed', 'bfloat16_small')))")
    assert shown.returncode == 0 and "bfloat16" in shown.stdout and "20x30" in shown.stdout, shown.stderr


def test_a_limit_is_one_field_and_its_reader(copy):
    """docs/ARCHITECTURE.md, "A limit a visitor can hit": a field of Limits and the one place that
    enforces it; GRADLAB_LIMITS sets it, and over it a visitor reads a sentence naming it."""
    insert_after(copy, "gradlab/limits.py", '''    summed_terms: int = 200_000''', '''
    summed_dimensions: int = 4  # axes of the summed-loss lab's input''')
    insert_after(copy, "gradlab/labs/summed/loss.py", '''LIMITS.summed_terms)
''', '''        within_limit("axes of the input", len(self.shape), LIMITS.summed_dimensions)
''')
    passes(copy, "tests/test_limits.py", k="enforced or environment or GRADLAB_LIMITS")
    env_over = subprocess.run([sys.executable, "-c", "from gradlab.labs.summed import SummedLossSettings\n"
                               "SummedLossSettings(shape=(2, 3))"], cwd=copy, capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=str(copy), GRADLAB_LIMITS="summed_dimensions=1"))
    assert "Too many axes of the input: 2 asked for, GradLab allows at most 1" in env_over.stderr, env_over.stderr


_ULP_COMMAND = '''"""``python -m gradlab ulp``: the gap above x in each dtype.

>>> from gradlab.cli.main import main
>>> main(["ulp", "1", "--dtype", "float64"])
float64: 2.22045e-16
0
"""

from __future__ import annotations

from gradlab.cli.common import finite_float
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES
from gradlab.numerics.ulp import ulp

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Add the ``ulp`` sub-command to an argparse subparsers object."""
    p = subparsers.add_parser("ulp", help="the gap above x in each dtype")
    p.add_argument("x", type=finite_float)
    p.add_argument("--dtype", choices=ALL_DTYPE_NAMES, action="append")
    p.set_defaults(run=run)


def run(args) -> int:
    for dtype in args.dtype or ALL_DTYPE_NAMES:
        print(f"{dtype}: {ulp(args.x, dtype):g}")
    return 0
'''

_ULP_TEST = '''import math

from gradlab.cli.main import main


def test_ulp_of_one_is_each_dtypes_eps(capsys):
    assert main(["ulp", "1", "--dtype", "float64", "--dtype", "float32"]) == 0
    assert capsys.readouterr().out.split() == ["float64:", f"{2.0 ** -52:g}", "float32:", f"{2.0 ** -23:g}"]


def test_a_bad_x_is_one_line_and_exit_2(capsys):
    try:
        main(["ulp", "nan"])
    except SystemExit as exit:
        assert exit.code == 2
    assert capsys.readouterr().err.count("\\n") == 1
'''


def test_a_cli_subcommand_is_a_module_a_name_in_main_and_a_test(copy):
    """docs/ARCHITECTURE.md, "A CLI subcommand": gradlab/cli/<name>.py, its name in main's tuple,
    tests/test_cli_<name>.py; --help lists it, the import graph keeps main -> subcommand -> common."""
    (copy / "gradlab/cli/ulp.py").write_text(_ULP_COMMAND)
    main = copy / "gradlab/cli/main.py"
    source = main.read_text()
    for old, new in (("from gradlab.cli import check, grid, layers, summed, sweep",
                      "from gradlab.cli import check, grid, layers, summed, sweep, ulp"),
                     ("(sweep, check, layers, grid, summed)", "(sweep, check, layers, grid, summed, ulp)")):
        assert old in source, f"gradlab/cli/main.py no longer holds {old!r}: update the recipe"
        source = source.replace(old, new)
    main.write_text(source)
    (copy / "tests/test_cli_ulp.py").write_text(_ULP_TEST)
    passes(copy, "tests/test_cli_ulp.py", "tests/test_import_graph.py", "--doctest-modules", "gradlab/cli/ulp.py")
    listed = run(copy, "-m", "gradlab", "--help")
    assert listed.returncode == 0 and "ulp" in listed.stdout, listed.stderr


_LAB = '''"""The Ulps lab: the gap above x in every dtype.

>>> v = view(UlpSettings(x=1.0))
>>> v.answer.level, list(v.tables["gaps"]["dtype"])[:2]
('info', ['float16', 'bfloat16'])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from gradlab.errors import GradLabError
from gradlab.numerics.dtypes import ALL_DTYPE_NAMES
from gradlab.numerics.ulp import ulp
from gradlab.server.worker_entries import worker_entry
from gradlab.view import Answer, Chart, View

__all__ = ["UlpSettings", "view"]


@dataclass(frozen=True)
class UlpSettings:
    x: float = 1.0

    def __post_init__(self) -> None:
        if not math.isfinite(self.x):
            raise GradLabError(f"x must be a finite number; got {self.x!r}.")


def gap_bars(table: pd.DataFrame):
    import plotly.graph_objects as go

    return go.Figure(go.Bar(x=table["dtype"], y=table["gap"]), layout={"yaxis": {"type": "log"}})


@worker_entry("the gaps", "request_seconds")
def view(settings: UlpSettings) -> View:
    table = pd.DataFrame({"dtype": ALL_DTYPE_NAMES, "gap": [float(ulp(settings.x, d)) for d in ALL_DTYPE_NAMES]})
    widest = table.loc[table["gap"].idxmax()]
    return View(Answer("info", f"At x = {settings.x:g} the widest gap is {widest.gap:g}, in {widest.dtype}."),
                charts={"gaps": Chart(gap_bars, (table,))}, tables={"gaps": table})
'''

_PAGE = '''"""Ulps: the gap above x in every dtype. Layout only."""

from __future__ import annotations

import streamlit as st

from gradlab.labs.ulps import UlpSettings, view
from gradlab.ui.url_widgets import url_number
from gradlab.ui.messages import show_answer, stop_with_error
from gradlab.ui.page_chrome import answer_box, main_chart_box, start_page, title_row
from gradlab.ui.views import lab_view, show_chart

start_page("ulps")

with title_row("Ulps", "how far apart are the numbers near x?"):
    pass
try:
    settings = UlpSettings(x=float(url_number("x", "x", value=1.0, min_value=-1e30, max_value=1e30)))
    shown = lab_view(view, settings)
except Exception as err:  # noqa: BLE001 - a value's sentence; anything else generically
    stop_with_error(err)
with answer_box():
    show_answer(shown.answer, icon=":material/lightbulb:")
with main_chart_box():
    show_chart(settings, shown, "gaps", "gradlab-ulps")
st.dataframe(shown.tables["gaps"], hide_index=True)
'''


def test_a_lab_is_its_module_its_page_and_a_page_row(copy):
    """docs/ARCHITECTURE.md, "A lab": gradlab/labs/<lab>.py (settings and a view(settings) worker
    entry; a package once it grows), pages/<lab>.py, one PageSpec in gradlab/ui/navigation.py. The
    app opens it, it has the pages' shape, it imports only its lab and the ui, its worker entry is
    known to the pool and its limit named, and no import circle appears."""
    (copy / "gradlab/labs/ulps.py").write_text(_LAB)
    (copy / "pages/ulps.py").write_text(_PAGE)
    insert_after(copy, "gradlab/ui/navigation.py", "PAGES: tuple[PageSpec, ...] = (\n", '''    PageSpec("pages/ulps.py", "Ulps", ":material/straighten:", "ulps", "The gap above x in every dtype."),
''')
    ran = passes(copy, "tests/test_app_pages.py", "tests/test_page_shape.py", "tests/test_page_imports.py",
           "tests/test_presets.py", "tests/test_import_graph.py", "tests/test_hostile_requests.py",
           "--doctest-modules", "gradlab/labs/ulps.py", k="ulps or registry or router or worker_entry or circle "
                                                           "or unique or gallery or lab_and")
    assert ran >= 10  # the page's own: opened, its shape (4), its imports, its router, its doctest, ...
