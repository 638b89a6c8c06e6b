"""The check's structure: a front door, and one engine that the public API, forward mode and second order use.

``gradlab.check`` (its ``__init__``) is the front door: no module outside ``gradlab/check/``
(the rest of gradlab, pages, benchmarks, app.py, serve.py) imports anything under it, in code
or in a docstring's example, and every name it exports is used outside. Tests may import the
inside to unit-test it. ``gradlab/check/api.py`` holds ``gradcheck`` (a thin wrapper, as
torch's gradcheck is); nothing inside ``gradlab/check`` imports back from it, so the engine
never depends on its wrapper.
"""

import ast
import doctest
import inspect
import pathlib

import pytest
import torch

import gradlab.check
from gradlab.check import api
from gradlab.check.further import estimates, forward_mode, second_order
from gradlab.check.inputs import validation
from gradlab.check.running import engine

CHECK_DIR = pathlib.Path(gradlab.check.__file__).parent
ROOT = CHECK_DIR.parents[1]
#: Every module outside the check that may import it: the rest of gradlab, the pages, the benchmarks, the entry scripts.
OUTSIDE = sorted({*(p for p in (ROOT / "gradlab").rglob("*.py") if CHECK_DIR not in p.parents),
                  *(ROOT / "pages").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py"),
                  *(p for p in (ROOT / "app.py", ROOT / "serve.py") if p.exists())})
MODULES = sorted(p for p in CHECK_DIR.rglob("*.py")
                 if p.relative_to(CHECK_DIR).as_posix() not in ("__init__.py", "api.py"))


def _imported_modules(tree: ast.AST, package: str) -> set[str]:
    """Every module an import statement in ``tree`` names, relative imports resolved in ``package``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _example_code(source: str) -> str:
    """The code of every doctest example in a module's source, one statement per line."""
    parser = doctest.DocTestParser()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                found += [e.source for e in parser.get_examples(doc)]
    return "\n".join(found)


def _imports_api(source: str) -> bool:
    wanted = "gradlab.check.api"
    return any(name == wanted or name.startswith(wanted + ".") for name in _imported_modules(
        ast.parse(source), "gradlab.check"))


def test_the_scan_sees_every_kind_of_import():
    # the detector itself, on the forms an import of api can take
    for line in ("import gradlab.check.api", "from gradlab.check.api import gradcheck",
                 "from gradlab.check import api", "from . import api", "from .api import gradcheck",
                 "def f():\n    from gradlab.check.api import gradcheck"):
        assert _imports_api(line), line
    for line in ("from gradlab.check.running.engine import check_gradient", "from gradlab import gradcheck",
                 "import gradlab.check.apis"):
        assert not _imports_api(line), line
    assert "from gradlab.check.api import gradcheck" in _example_code(
        'def f():\n    """\n    >>> from gradlab.check.api import gradcheck\n    """\n')


@pytest.mark.parametrize("path", MODULES, ids=[p.relative_to(CHECK_DIR).as_posix() for p in MODULES])
def test_no_check_module_imports_the_public_api(path):
    source = path.read_text()
    assert not _imports_api(source), f"{path.name} imports gradlab.check.api: use gradlab.check.running.engine"
    assert not _imports_api(_example_code(source)), (
        f"a docstring example in {path.name} imports gradlab.check.api: use gradlab.check.running.engine")


def test_forward_and_second_order_run_the_engine():
    for module in (forward_mode, second_order, api):
        assert "gradlab.check.running.engine" in _imported_modules(ast.parse(inspect.getsource(module)), "gradlab.check")


def test_public_names_stay_where_they_were():
    assert set(api.__all__) <= set(dir(api))
    assert api.sample_indices is engine.sample_indices
    assert api.element_estimates is estimates.element_estimates
    assert api.reduction_estimates is estimates.reduction_estimates
    assert api.full_check_work is validation.full_check_work
    import gradlab
    assert gradlab.gradcheck is api.gradcheck


def _package_of(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts if parts[-1] == "__init__" else parts[:-1])


def _inside_imports(source: str, package: str) -> set[str]:
    """What an import in ``source`` takes from under the front door: a module below
    ``gradlab.check`` (``gradlab.check.running.engine``), or a name ``gradlab.check`` does not
    export (``gradlab.check.api``)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("gradlab.check."))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if base.startswith("gradlab.check."):
                found.add(base)
            elif base == "gradlab.check":
                found.update(f"gradlab.check.{a.name}" for a in node.names if a.name not in gradlab.check.__all__)
    return found


def _outside_imports(path: pathlib.Path) -> set[str]:
    source = path.read_text(encoding="utf-8")
    return _inside_imports(source, _package_of(path)) | _inside_imports(_example_code(source), _package_of(path))


def test_the_front_door_scan_sees_every_kind_of_import_of_the_inside():
    for line in ("import gradlab.check.api", "from gradlab.check.running.engine import check_gradient",
                 "from gradlab.check import running", "from gradlab.check import gradcheck, api",
                 "def f():\n    from gradlab.check.lab import settings", "from .check.verdicts import states"):
        assert _inside_imports(line, "gradlab"), line
    for line in ("import gradlab.check", "from gradlab.check import gradcheck, STATES", "from gradlab import gradcheck",
                 "import gradlab.checks.x", "from gradlab.check_layers import y"):
        assert not _inside_imports(line, "gradlab"), line
    example = 'def f():\n    """\n    >>> from gradlab.check.verdicts.states import STATES\n    """\n'
    assert _inside_imports(_example_code(example), "gradlab") == {"gradlab.check.verdicts.states"}


@pytest.mark.parametrize("path", OUTSIDE, ids=[p.relative_to(ROOT).as_posix() for p in OUTSIDE])
def test_nothing_outside_the_check_imports_its_inside(path):
    inside = _outside_imports(path)
    assert not inside, (f"{path.relative_to(ROOT)} imports {', '.join(sorted(inside))}: "
                        "import the names gradlab.check exports (gradlab/check/__init__.py) instead")


def test_every_name_the_front_door_exports_is_there_and_used_outside():
    for name in gradlab.check.__all__:
        assert getattr(gradlab.check, name) is not None, name
    used = set()
    for path in OUTSIDE:
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source + "\n" + _example_code(source))):
            if isinstance(node, ast.ImportFrom) and node.module == "gradlab.check":
                used.update(a.name for a in node.names)
    used.update(name for name, home in gradlab._HOME.items() if home == "gradlab.check")
    assert sorted(set(gradlab.check.__all__) - used) == []


def test_engine_and_wrapper_share_their_defaults():
    wrapper = inspect.signature(api.gradcheck).parameters
    inner = inspect.signature(engine.check_gradient).parameters
    shared = set(wrapper) & set(inner) - {"fn", "inputs"}
    assert shared >= {"mode", "samples", "seed", "scheme", "eps", "rtol", "atol", "reduction", "grad_outputs",
                      "numeric_float64", "numeric_fn", "taylor", "progress", "workers", "wrt"}
    assert {k: wrapper[k].default for k in shared} == {k: inner[k].default for k in shared}


def test_the_wrapper_returns_what_the_engine_returns():
    x = torch.tensor([0.3, -1.2, 2.0, 0.7], dtype=torch.float64)
    fn = lambda t: (t.sin() * t).sum()  # noqa: E731
    a = api.gradcheck(fn, x, mode="full", grad_outputs="ones")
    b = engine.check_gradient(fn, x, mode="full", grad_outputs="ones")
    assert a.verdict == b.verdict == "pass"
    # autograd's value is d/dt (t sin t) = sin t + t cos t, in both
    expected = (x.sin() + x * x.cos()).tolist()
    assert a.table["autograd"].tolist() == pytest.approx(expected, rel=1e-14)
    assert b.table["autograd"].tolist() == pytest.approx(expected, rel=1e-14)
