"""The check's structure: one engine that the public API, forward mode and second order use.

``gradlab/check/api.py`` is the public face (a thin wrapper, as torch's gradcheck is);
nothing inside ``gradlab/check`` imports back from it, in code or in a docstring's example,
so the engine never depends on its wrapper.
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
