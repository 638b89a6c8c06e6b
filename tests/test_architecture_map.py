"""docs/ARCHITECTURE.md maps every module: each one is named in the row of the folder that holds it.

A row of the folder table starts with the folder (``| `gradlab/labs/` |``) or, for modules at
the top of ``gradlab/``, with the files themselves. A module is mapped when its row names it in
backticks (``sweep``, ``roundoff/``, or ``limits.py``); a module of a subpackage needs the
subpackage and its own name in its folder's row.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
ROWS = [line for line in DOC.splitlines() if line.startswith("| `")]
MODULES = sorted(p.relative_to(ROOT) for p in (ROOT / "gradlab").rglob("*.py")
                 if p.name != "__init__.py")


def _row_of(folder: str) -> str | None:
    return next((row for row in ROWS if row.startswith(f"| `{folder}`")), None)


def _names(row: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", row))


def mapped(module: Path) -> bool:
    parts = module.parts  # ("gradlab", ..., "name.py")
    if len(parts) == 2:  # gradlab/limits.py: named in a row's first cell
        return any(module.name in _names(row.split(" | ")[0]) or str(module) in _names(row.split(" | ")[0])
                   for row in ROWS)
    row = _row_of(f"{parts[0]}/{parts[1]}/")
    if row is None:
        return False
    names = {n.strip("`") for n in _names(row)}
    words = set(re.findall(r"[\w/]+", " ".join(names)))
    if len(parts) == 3:
        return module.stem in words or f"{module.stem}/" in words
    return f"{parts[2]}/" in words and module.stem in words  # gradlab/labs/roundoff/settings.py


def test_the_check_finds_a_missing_module():
    assert not mapped(Path("gradlab/labs/no_such_lab.py"))
    assert not mapped(Path("gradlab/labs/roundoff/no_such_part.py"))
    assert not mapped(Path("gradlab/no_such_module.py"))
    assert mapped(Path("gradlab/labs/roundoff/settings.py")) and mapped(Path("gradlab/limits.py"))


@pytest.mark.parametrize("module", MODULES, ids=str)
def test_every_module_is_in_the_map(module):
    assert mapped(module), f"docs/ARCHITECTURE.md does not name {module} in its folder's row"


RECIPE = re.compile(r"^- \*\*(?P<what>[^*]+)\*\* \((?P<files>\d+) files?(?:; `(?P<test>\w+)`)?\)", re.MULTILINE)


def test_every_recipe_touches_at_most_three_files_and_the_issue_s_six_are_performed():
    """Each recipe says how many files it touches (at most three); a dtype, a scheme, a preset, a
    limit, a CLI subcommand and a lab name the test of tests/test_recipes.py that performs them."""
    recipes = {m["what"]: m for m in RECIPE.finditer(DOC)}
    performed = (ROOT / "tests" / "test_recipes.py").read_text(encoding="utf-8")
    assert {"A dtype", "A scheme", "A preset", "A limit a visitor can hit", "A CLI subcommand", "A lab"} <= {
        what for what, m in recipes.items() if m["test"]}
    for what, m in recipes.items():
        assert int(m["files"]) <= 3, what
        assert m["test"] is None or f"\ndef {m['test']}(copy)" in performed, (what, m["test"])
