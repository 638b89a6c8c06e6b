"""Every runnable example in the docstrings of gradlab and of the test harness runs and prints what it says."""

import doctest
import importlib
import pkgutil

import pytest

import gradlab
import harness

MODULES = sorted(m.name for m in pkgutil.walk_packages(gradlab.__path__, "gradlab.") if m.name != "gradlab.__main__")
MODULES += sorted(m.name for m in pkgutil.walk_packages(harness.__path__, "harness."))


def test_the_walk_finds_the_engine():
    assert {"gradlab.numerics.dtypes", "gradlab.check.api", "gradlab.ui.presets"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (run python -m doctest -v)"
