"""``python -m gradlab``: the engine from a terminal, a notebook or CI (entry point: ``gradlab.cli.main``)."""
