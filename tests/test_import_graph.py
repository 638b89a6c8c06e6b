"""No import circle between the modules of gradlab, benchmarks and harness: the module graph,
read from the source, has no cycle.

An edge A -> B means a statement in A's source imports B, wherever it stands: at module
level, inside a function (it still makes the two modules depend on each other; it only
hides the circle until the function runs) or under ``if TYPE_CHECKING:`` (a type name is a
dependency too: a reader must read B to read A; where a class's own methods call a module
that names the class, that module names a protocol of what it reads instead, e.g.
:mod:`gradlab.step_sweep.swept`). What does not count: the parent packages Python initialises on
the way (``import gradlab.step_sweep.engine`` runs ``gradlab/step_sweep/__init__.py`` first): an edge
goes to the module the statement names.
  ``from package import name`` is an edge to ``package.name`` when that is a module, to the
  module the package's ``_HOME`` sends a lazily imported name to (a front door's), to the
  package otherwise.

The graph is read with :mod:`ast`, so nothing is imported (and no cycle is hidden by an
import that happens to run in a lucky order).
"""

from __future__ import annotations

import ast
import functools
import pkgutil
from pathlib import Path

import gradlab

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gradlab"
#: The shared server/websocket harness and the benchmarks that use it: no circle there either.
PACKAGES = (PACKAGE, ROOT / "benchmarks", ROOT / "harness")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for package in PACKAGES for p in sorted(package.rglob("*.py"))}


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node of the source, wherever it stands."""
    return (node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))


def _targets(name: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in MODULES}
    base = node.module or ""
    if node.level:  # a relative import: from the module's package, up level - 1
        package = name.split(".") if MODULES[name].name == "__init__.py" else name.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join([*package, *([base] if base else [])])
    found = {f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES}
    homes = {a.name: home for a in node.names if (home := _lazy_home(base, a.name))}
    if len(found) + len(homes) < len(node.names) and base in MODULES:
        found.add(base)  # names defined in the module (or package) itself
    return found | set(homes.values())


def _lazy_home(package: str, name: str) -> str | None:
    """The module a front door's lazily imported ``name`` comes from (its ``_HOME``: names ->
    modules, as ``gradlab`` and ``gradlab.check`` keep it), followed through front doors; else None."""
    home = None
    while package in MODULES and name in (homes := _homes(package)):
        home = package = homes[name]
    return home if home in MODULES else None


@functools.cache
def _homes(module: str) -> dict[str, str]:
    for node in ast.parse(MODULES[module].read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["_HOME"]:
            return ast.literal_eval(node.value)
    return {}


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of :data:`PACKAGES` its source imports (itself left out)."""
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = {t for node in _imports(tree) for t in _targets(name, node)} - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan), sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_cycle_finder_finds_a_planted_circle_and_no_false_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}) == []


def test_the_graph_reads_module_level_function_level_and_relative_imports():
    graph = import_graph()
    assert "gradlab.numerics.dtypes" in graph["gradlab.step_sweep.engine"]  # module level
    assert "gradlab.step_sweep.display" in graph["gradlab.step_sweep.engine"]  # inside SweepResult.figure
    assert "gradlab.step_sweep.swept" in graph["gradlab.labs.explorer.figures"]  # under TYPE_CHECKING: counted
    assert "gradlab.step_sweep.engine" not in graph["gradlab.labs.explorer.figures"]  # a protocol, not the engine
    # a name a front door imports lazily: an edge to the module that holds it
    assert "gradlab.check.verdicts.states" in graph["gradlab.figures.check_values"]
    assert "gradlab.check.api" in graph["gradlab.testing.assertions"]  # inside a function
    assert "benchmarks.against_floor" in graph["benchmarks.load_test"]  # the benchmarks count too
    assert "harness.runs" in graph["harness.session"]  # and the harness they share with the tests
    walked = {m.name for m in pkgutil.walk_packages(gradlab.__path__, "gradlab.")} | {"gradlab"}
    assert {m for m in MODULES if m.split(".")[0] == "gradlab"} == walked  # every module, nothing else


def _cycles_outside_check() -> list[list[str]]:
    return [c for c in cycles(import_graph()) if not all(m.startswith("gradlab.check.") for m in c)]


def _cycles_inside_check() -> list[list[str]]:
    return [c for c in cycles(import_graph()) if all(m.startswith("gradlab.check.") for m in c)]


def test_no_import_circle_outside_the_check():
    assert _cycles_outside_check() == []


def test_no_import_circle_inside_the_check():
    assert _cycles_inside_check() == []


def test_the_harness_needs_no_benchmark():
    graph = import_graph()
    assert {m: sorted(t for t in graph[m] if t.startswith("benchmarks")) for m in graph
            if m.startswith("harness") and any(t.startswith("benchmarks") for t in graph[m])} == {}


def test_an_import_for_a_type_name_only_is_an_edge_too():
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import gradlab.step_sweep.engine\n"
    assert [n.names[0].name for n in _imports(ast.parse(source)) if isinstance(n, ast.Import)] == ["gradlab.step_sweep.engine"]
