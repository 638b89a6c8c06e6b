"""Every page imports only its lab's package (its front door, not the modules inside) and gradlab.ui.

A page lays out what its lab's ``view(settings)`` returns; what it computes, says or draws
lives in the lab (gradlab/labs/<lab>/), what every page shares in gradlab/ui/. So a newcomer
finds a feature in one package, and a page cannot grow engine code again.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "pages").glob("*.py"))

#: The lab package each page lays out (the home page draws the Explorer's first view).
LAB_OF = {"home": "explorer", "gradcheck": "gradcheck"}
#: Pages still to be moved onto their lab's view (issue 38); each leaves this set as it moves.
PENDING: set[str] = set()


def gradlab_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every gradlab import in ``path``, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "gradlab":
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "gradlab"]
    return sorted(found)


def foreign_imports(path: Path) -> list[str]:
    """The imports of a page that are neither its lab's package nor gradlab.ui."""
    lab = f"gradlab.labs.{LAB_OF.get(path.stem, path.stem)}"
    return [f"{path.name}:{line} imports {module}" for line, module in gradlab_imports(path)
            if module != lab and not module.startswith("gradlab.ui.")]


@pytest.mark.parametrize("path", [p for p in PAGES if p.stem not in PENDING], ids=lambda p: p.stem)
def test_a_page_imports_only_its_lab_and_the_ui(path):
    assert not foreign_imports(path)


def test_the_check_sees_an_import_of_an_engine_module(tmp_path):
    page = tmp_path / "summed.py"
    page.write_text("import streamlit as st\nfrom gradlab.labs.summed import view\n"
                    "def f():\n    from gradlab.labs.summed.loss import summed_loss\n"
                    "from gradlab.ui.views import lab_view\nimport gradlab.numerics.ulp\n")
    assert foreign_imports(page) == ["summed.py:4 imports gradlab.labs.summed.loss",
                                     "summed.py:6 imports gradlab.numerics.ulp"]


def test_every_pending_page_exists():
    assert PENDING <= {p.stem for p in PAGES}
