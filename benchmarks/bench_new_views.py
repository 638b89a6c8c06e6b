"""What one new view costs the server: a lab's view with one control changed, as a class asks for it.

A student of a changing class (``load_test.py --changing``, :data:`benchmarks.class_links.CHANGED_CONTROL`)
opens a page's preset with one control changed: a view no one has computed. Its CPU, split three ways:

- **compute**: the lab's ``view(settings)`` (a pool worker runs it);
- **pickle**: the View's round trip (the worker pickles it, the server process unpickles it);
- **figures**: each chart the page draws of a new view, built as the page builds it
  (:func:`gradlab.ui.figures.prepare_figure`), made readable and shown at the page's step as
  ``show_figure`` does, then what ``st.plotly_chart`` does: ``plotly.io.to_json`` and the md5 of
  that text in its element id.

Each lab is one row of :data:`LABS`: a preset's values (from the preset registry) with its changed
control drawn afresh, how the settings are made of them, and which charts the page draws. Medians of
``time.process_time`` (every thread of the process) over interleaved repeats; warm caches, as in a
worker that has served a class for a while, since the first call of each lab is thrown away.

``--against DIR`` runs the same rows on DIR's code (``git archive <rev> | tar -x -C DIR``) in a
second process, alternating with this tree's, and prints the ratio this/DIR.

Run: ``python -m benchmarks.bench_new_views [--labs explorer grid] [--repeats 15] [--against /tmp/base39]``.
A script, not a test: it prints numbers; they mean most on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("compute", "pickle", "figures")


# ------------------------------------------------------------------ the labs (run in the measured tree)


def _explorer(values: dict) -> tuple[Any, list]:
    from gradlab.labs.explorer import ChartOptions, explorer_settings, fitted_steps, main_chart, view
    from gradlab.labs.explorer.defaults import DEFAULTS, STEP_DEFAULT
    from gradlab.teaching.catalogue import CATALOGUE

    dtypes, schemes = tuple(values["dtypes"]), tuple(values["schemes"])
    eps = fitted_steps(dtypes, schemes)[:2] if values.get("eps_auto", True) else values["eps_range"]
    settings = explorer_settings(values["fn"], CATALOGUE[values["fn"]].expression, values["x"], dtypes, schemes,
                                 *eps, values.get("points", DEFAULTS["points"]))
    shown = view(settings)

    def charts(v) -> list:
        drawn = main_chart(v, ChartOptions())
        return [(drawn.chart, STEP_DEFAULT if drawn.step_slider else None)]
    return shown, charts


def _grid(values: dict) -> tuple[Any, list]:
    from gradlab.labs.grid import CATALOGUE, GridSettings, at_step, view, view_of

    settings = GridSettings(dtype=values["dtype"], x=float(values["x"]), h=float(values["h"]),
                            expression=CATALOGUE[values["fn"]].expression)
    shown = view(view_of(settings))

    def charts(v) -> list:
        v = at_step(v, settings.h)
        return [(v.charts["grid"], settings.h), (v.charts["secant"], None)]
    return shown, charts


def _summed(values: dict) -> tuple[Any, list]:
    from gradlab.labs.summed.loss import SummedLossSettings
    from gradlab.labs.summed.page_view import view

    shape = tuple(int(d) for d in values["shape"].split("x"))
    shown = view(SummedLossSettings(shape=shape, dtype=values["dtype"], reduction=values["reduction"],
                                    h=float(values["h"])))
    return shown, lambda v: [(v.charts["differences"], None), (v.charts["errors"], None)]


def _gradcheck(values: dict) -> tuple[Any, list]:
    """A function's check draws its eps sweep (a second view) under the answer; a model's, the layer chart."""
    from gradlab.labs.gradcheck.controls import FUNCTION, function_settings, layer_settings
    from gradlab.labs.gradcheck.page_view import eps_sweep_view, function_view, layer_view, marked

    if values["check"] != FUNCTION:
        settings = layer_settings(values["stack"], values["input"], dtype=values["dtype"], mode=values["mode"],
                                  seed=values["seed"], calls=values["calls"])
        return layer_view(settings), lambda v: [(v.charts["layers"], None)]
    from gradlab.check import sweep_settings_for

    settings = function_settings(values)
    shown = function_view(settings)
    sweep = marked(eps_sweep_view(sweep_settings_for(settings)), shown.step)
    return (shown, sweep), lambda v: [(v[1].charts["eps sweep"], None)]  # the values tab's table is open


def _network(values: dict) -> tuple[Any, list]:
    from gradlab.labs.network.engine import NetworkSettings
    from gradlab.labs.network.page_view import view

    settings = NetworkSettings(int(values["inputs"]), tuple(int(h) for h in str(values["hidden"]).split(",")),
                               values["act"], values["dtype"], int(values["seed"]), int(values["idx"]),
                               float(values["dx"]), *map(float, values["range"]))
    return view(settings), lambda v: [(v.charts["step error"], None), (v.charts["staircase"], None)]


def _roundoff(values: dict) -> tuple[Any, list]:
    from gradlab.labs.roundoff.page_view import view
    from gradlab.labs.roundoff.settings import RoundoffSettings

    settings = RoundoffSettings(values["a"], values["b"], values["dtype"], values["dist"], float(values["low"]),
                                float(values["high"]), seed=int(values["seed"]))
    return view(settings), lambda v: [(v.charts[name], None) for name in ("errors", "distance", "by x")]


def _backward(values: dict) -> tuple[Any, list]:
    from gradlab.labs.backward.engine import VJPSettings
    from gradlab.labs.backward.page_view import view

    vector = tuple(float(v) for v in values["v"].split(","))
    return view(VJPSettings(v=vector)), lambda v: [(v.charts[name], None) for name in
                                                   ("grad", "jacobian a", "jacobian b", "jacobian c")]


@dataclass(frozen=True)
class Lab:
    """One row: the page (its presets and changed control) and how a tree computes and draws its view."""

    page: str
    run: Callable[[dict], tuple[Any, Callable[[Any], list]]]  # values -> (View, View -> [(Chart, step)])


#: lab -> its row; another lab is one more row.
LABS: dict[str, Lab] = {
    "explorer": Lab("explorer", _explorer),
    "grid": Lab("grid", _grid),
    "summed": Lab("summed", _summed),
    "gradcheck": Lab("gradcheck", _gradcheck),
    "network": Lab("network", _network),
    "roundoff": Lab("roundoff", _roundoff),
    "backward": Lab("backward", _backward),
}


def _drawn(chart, step) -> bytes:
    """The chart as the page sends it: its dict, readable, at its step, then st.plotly_chart's JSON and id hash."""
    import hashlib

    import plotly.io as pio

    from gradlab.figures.layout import readable
    from gradlab.figures.step_slider import with_step
    from gradlab.ui.figures import prepare_figure

    spec = readable(prepare_figure(chart.build, *chart.args, **chart.kwargs).to_dict())
    if step is not None:
        spec = with_step(spec, step)
    from gradlab.ui.compat import PreparedFigure

    text = pio.to_json(PreparedFigure(spec), validate=False)
    hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()
    return text.encode()


def measure(lab: str, values: dict) -> dict[str, float]:
    """One new view of ``lab`` at ``values``: CPU seconds per part, and the bytes pickled and sent."""
    import pickle
    import time

    clock = time.process_time
    t0 = clock()
    shown, charts = LABS[lab].run(values)
    t1 = clock()
    data = pickle.dumps(shown, protocol=pickle.HIGHEST_PROTOCOL)
    shown = pickle.loads(data)
    t2 = clock()
    sent = sum(len(_drawn(chart, step)) for chart, step in charts(shown))
    t3 = clock()
    return {"compute": t1 - t0, "pickle": t2 - t1, "figures": t3 - t2, "pickled": len(data), "json": sent}


def serve() -> None:
    """Answer one JSON request per line on stdin (``{"lab", "values"}``) with :func:`measure`'s JSON."""
    try:
        import torch

        torch.set_num_threads(1)  # as a pool worker runs (gradlab.server.worker)
    except ImportError:
        pass
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps(measure(request["lab"], request["values"])), flush=True)


# ------------------------------------------------------------------ the driver (this tree's benchmarks)


def _moves(lab: str, rng: random.Random) -> dict:
    """A preset of ``lab``'s page with its changed control drawn afresh (``class_links._NEW_VALUE``)."""
    from benchmarks.class_links import _NEW_VALUE, CHANGED_CONTROL, _page_default
    from gradlab.teaching.presets import presets_for

    preset = rng.choice(presets_for(LABS[lab].page))
    key = CHANGED_CONTROL[LABS[lab].page]
    values = dict(preset.values)
    values[key] = _NEW_VALUE[key](values[key] if key in values else _page_default(LABS[lab].page, key), rng)
    return values


class Tree:
    """A process running :func:`serve` on one tree's code."""

    def __init__(self, root: Path):
        env = {**os.environ, "PYTHONPATH": str(root), "STREAMLIT_LOG_LEVEL": "error"}
        self.name = str(root)
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve"], cwd=root, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def measure(self, lab: str, values: dict) -> dict[str, float]:
        self.process.stdin.write(json.dumps({"lab": lab, "values": values}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} stopped on {lab} {values}")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def _median_row(samples: list[dict]) -> dict[str, float]:
    row = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    row["total"] = statistics.median(sum(s[p] for p in PARTS) for s in samples)
    return row


def _print_row(lab: str, tree: str, row: dict, base: dict | None = None) -> None:
    ms = "  ".join(f"{p} {row[p] * 1e3:6.1f}" for p in (*PARTS, "total"))
    ratio = f"  x{row['total'] / base['total']:.2f}" if base else ""
    print(f"{lab:9} {tree:6} {ms} ms  pickled {row['pickled'] / 1e3:6.0f} kB  json {row['json'] / 1e3:6.0f} kB{ratio}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labs", nargs="*", default=list(LABS), choices=list(LABS))
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--against", type=Path, help="another tree (git archive of a revision) to compare with")
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve()
        return
    trees = {"this": Tree(ROOT)}
    if args.against:
        trees["before"] = Tree(args.against.resolve())
    rng = random.Random(args.seed)
    samples: dict[tuple[str, str], list] = {(lab, t): [] for lab in args.labs for t in trees}
    try:
        for lab in args.labs:  # warm: imports and first-call caches, as in a worker that has served a while
            values = _moves(lab, rng)
            for tree in trees.values():
                tree.measure(lab, values)
        for repeat in range(args.repeats):
            for lab in args.labs:
                values = _moves(lab, rng)
                order = list(trees.items()) if repeat % 2 == 0 else list(trees.items())[::-1]
                for name, tree in order:
                    samples[lab, name].append(tree.measure(lab, values))
    finally:
        for tree in trees.values():
            tree.close()
    print(f"CPU of one new view (median of {args.repeats}, ms); load average {os.getloadavg()[0]:.2f}")
    for lab in args.labs:
        rows = {name: _median_row(samples[lab, name]) for name in trees}
        if "before" in rows:
            _print_row(lab, "before", rows["before"])
        _print_row(lab, "this", rows["this"], rows.get("before"))


if __name__ == "__main__":
    main()
