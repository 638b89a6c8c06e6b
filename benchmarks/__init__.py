"""GradLab's benchmarks: scripts that measure, run from the repository root as modules
(``python -m benchmarks.bench_sweep``); what to run and its targets are in ``benchmarks/README.md``,
what they measured in ``benchmarks/RESULTS.md``. The server and websocket harness they share with
the tests is the top-level ``harness`` package."""
