"""Measure when TopK's block-maxima prefilter beats ORT's TopK-11, and fit the rule the lowering reads.

For every cell of a grid (slice length n, k, batch, block scale c), three sessions on the same
float32 input (standard normal, the last axis, a constant k):

* ``built-in``: ORT's TopK-11 (``largest=1, sorted=1``) in a plain session;
* ``today``: ``ortops.InferenceSession(path="auto")`` with the prefilter off;
* ``prefilter``: the same with the prefilter forced on, B = ``prefilter.block_size`` under
  ``Rule(scale=c)`` (B = c * sqrt(n / k), moved to a nearby divisor of n when there is one).

Every session has spinning off (``session.intra_op.allow_spinning=0``, ``inter_op`` too). The
three run interleaved in a shuffled order, round after round; each round gives two ratios
(today / built-in, prefilter / built-in) and a cell's result is the median over its rounds.
The whole grid is walked ``--passes`` times (the machine is shared: another engineer's tests
come and go) and the medians are taken over the rounds of every pass.

The fit (``fit``): the scale c whose prefilter is fastest in the most cells where it wins at
all, then the thresholds ``min_n``, ``min_ratio`` and ``min_elements`` (prefilter only when
``n >= min_n``, ``n / k >= min_ratio`` and ``batch * n >= min_elements``) that minimise the summed log-ratio over the grid,
a slowdown counting ``LOSS_WEIGHT`` times (no regression is the first goal). Writes
``docs/topk_cost_model.json`` (grid, environment, every measurement, the fitted rule); the
rule goes into ``ortops/ops/prefilter.py`` by hand (``RULE``).

``--table`` instead times the bench's TopK cases (``ortops/ops/top_k/bench.py``) with the rule
as it is in ``prefilter.RULE``: ORT's TopK-11, ``ortops.InferenceSession(path="auto")``, and one
read of the input (ORT's ``ReduceMax`` over the whole tensor, and NumPy's ``max``), interleaved
the same way, and stores them under ``"table"`` in the same file (docs/performance.md's table).

Usage: ``python scripts/topk_cost_model.py [--quick] [--passes 2] [--rounds 15] [--table] [--out docs/topk_cost_model.json]``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
from onnx import TensorProto, numpy_helper

GRID = dict(
    n=[1000, 4096, 16384, 32000, 65536, 151936, 262144, 1_000_000],
    k=[1, 5, 10, 50, 100, 400],
    batch=[1, 8, 64],
    scale=[0.25, 0.5, 1, 2, 4, 8],
    max_elements=2_100_000,
)
QUICK = dict(n=[4096, 32000, 151936, 1_000_000], k=[5, 50], batch=[1, 8], scale=[1, 4], max_elements=2_100_000)
#: The candidate thresholds of the fit.
MIN_N = [1024, 2048, 4096, 8192, 16384, 32768, 65536]
MIN_RATIO = [8, 16, 32, 64, 128, 256, 512, 1024]
#: How much more a slowdown weighs than a speedup of the same ratio in the fit of the thresholds.
LOSS_WEIGHT = 2.0
MIN_ELEMENTS = [0, 16384, 65536, 131072, 262144, 524288, 1048576]


def options():
    import onnxruntime as ort

    o = ort.SessionOptions()
    o.add_session_config_entry("session.intra_op.allow_spinning", "0")
    o.add_session_config_entry("session.inter_op.allow_spinning", "0")
    o.log_severity_level = 3
    return o


def ortops_model(n: int, k: int, batch: int):
    """An ortops TopK (mode max, sort value) with a constant k and the static shape [batch, n]."""
    from ortops import builder
    from ortops.builder.common import set_static_shapes

    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value", stable=1)
    model.graph.initializer.append(numpy_helper.from_array(np.array([k], np.int64), "k"))
    del model.graph.input[1]
    return set_static_shapes(model, data=(batch, n))


def sessions(n: int, k: int, batch: int, scale: float):
    import onnxruntime as ort

    import ortops
    from ortops import builder
    from ortops.ops import prefilter

    built_in = builder.onnx_top_k_model(11, TensorProto.FLOAT, 2, axis=1, largest=1, sorted=1)
    model = ortops_model(n, k, batch)
    made = {"built-in": (ort.InferenceSession(built_in.SerializeToString(), options(),
                                              providers=["CPUExecutionProvider"]), True)}
    with mock.patch.object(prefilter, "RULE", prefilter.Rule(min_n=10 ** 18)):
        made["today"] = (ortops.InferenceSession(model, options(), path="auto"), False)
    rule = prefilter.Rule(scale=scale, min_n=1, min_ratio=0, min_elements=0)
    block = prefilter.block_size(n, k, batch, rule)
    with mock.patch.object(prefilter, "RULE", rule):
        made["prefilter"] = (ortops.InferenceSession(model, options(), path="auto"), False)
    return made, block


def measure(cell: dict, rounds: int, rng: np.random.Generator) -> dict:
    n, k, batch, scale = cell["n"], cell["k"], cell["batch"], cell["scale"]
    made, block = sessions(n, k, batch, scale)
    x = rng.standard_normal((batch, n), dtype=np.float32)
    feeds = {"built-in": {"X": x, "K": np.array([k], np.int64)}, "today": {"data": x}, "prefilter": {"data": x}}
    names = list(made)
    for name in names:  # warm-up
        for _ in range(2):
            made[name][0].run(None, feeds[name])
    times = {name: [] for name in names}
    for _ in range(rounds):
        random.shuffle(names)
        for name in names:
            session = made[name][0]
            start = time.perf_counter()
            session.run(None, feeds[name])
            times[name].append(time.perf_counter() - start)
    return dict(block=block, times={name: v for name, v in times.items()})


def cells(grid: dict) -> list[dict]:
    found = []
    for n in grid["n"]:
        for k in grid["k"]:
            if k * 4 > n:
                continue
            for batch in grid["batch"]:
                if batch * n > grid["max_elements"]:
                    continue
                for scale in grid["scale"]:
                    found.append(dict(n=n, k=k, batch=batch, scale=scale))
    return found


def summarise(rows: list[dict]) -> list[dict]:
    """Per cell: the medians of the per-round ratios and times over every pass."""
    by_cell: dict = {}
    for row in rows:
        key = (row["n"], row["k"], row["batch"], row["scale"])
        entry = by_cell.setdefault(key, dict(n=row["n"], k=row["k"], batch=row["batch"], scale=row["scale"],
                                             block=row["block"], built_in=[], today=[], prefilter=[]))
        entry["built_in"] += row["times"]["built-in"]
        entry["today"] += row["times"]["today"]
        entry["prefilter"] += row["times"]["prefilter"]
    out = []
    for entry in by_cell.values():
        b, t, p = (np.array(entry[name]) for name in ("built_in", "today", "prefilter"))
        out.append(dict(n=entry["n"], k=entry["k"], batch=entry["batch"], scale=entry["scale"], block=entry["block"],
                        built_in_ms=round(1e3 * float(np.median(b)), 4),
                        today_ratio=round(float(np.median(t / b)), 3),
                        prefilter_ratio=round(float(np.median(p / b)), 3), rounds=len(b)))
    return out


def fit(summary: list[dict]) -> dict:
    """The scale, then the thresholds (see the module's docstring)."""
    cells_: dict = {}
    for row in summary:
        cells_.setdefault((row["n"], row["k"], row["batch"]), []).append(row)
    wins: dict = {}
    for rows in cells_.values():
        best = min(rows, key=lambda r: r["prefilter_ratio"])
        if best["prefilter_ratio"] < best["today_ratio"]:
            wins[best["scale"]] = wins.get(best["scale"], 0) + 1
    # The scale with the smallest summed log-ratio over the cells where some scale wins.
    scales = sorted({row["scale"] for row in summary})
    winning = [key for key, rows in cells_.items()
               if min(r["prefilter_ratio"] for r in rows) < rows[0]["today_ratio"]]

    def cost_of_scale(scale):
        return sum(math.log(next(r["prefilter_ratio"] for r in cells_[key] if r["scale"] == scale)) for key in winning)

    scale = min(scales, key=cost_of_scale) if winning else scales[0]

    def uses(n, k, batch, min_n, min_ratio, min_elements):
        return n >= min_n and n / k >= min_ratio and n * batch >= min_elements

    def cost(*thresholds):
        total = 0.0
        for (n, k, batch), rows in cells_.items():
            row = next(r for r in rows if r["scale"] == scale)
            use = uses(n, k, batch, *thresholds)
            gain = math.log(row["prefilter_ratio"] if use else row["today_ratio"])
            total += gain if gain < 0 else LOSS_WEIGHT * gain  # a slowdown counts double
        return total

    # The most permissive thresholds among the best (ties: the smallest values).
    min_n, min_ratio, min_elements = min(((a, b, c) for a in MIN_N for b in MIN_RATIO for c in MIN_ELEMENTS),
                                         key=lambda t: cost(*t))
    predicted = []
    for (n, k, batch), rows in sorted(cells_.items()):
        row = next(r for r in rows if r["scale"] == scale)
        use = uses(n, k, batch, min_n, min_ratio, min_elements)
        predicted.append(dict(n=n, k=k, batch=batch, prefilter=use, block=row["block"] if use else None,
                              ratio=row["prefilter_ratio"] if use else row["today_ratio"],
                              best_ratio=min([r["prefilter_ratio"] for r in rows] + [row["today_ratio"]])))
    return dict(scale=scale, min_n=min_n, min_ratio=min_ratio, min_elements=min_elements, wins_by_scale=wins,
                chosen=predicted)


#: The cases of ``--table``: (shape, axis, k, sort).
TABLE = [((1, 1_000_000), 1, 10, "value"), ((1, 1_000_000), 1, 100, "value"), ((64, 32000), 1, 5, "value"),
         ((8, 151936), 1, 50, "value"), ((4, 262144), 1, 40, "value"),
         ((1, 1_000_000), 1, 10, "index"), ((1, 1_000_000), 1, 100, "index"), ((64, 32000), 1, 5, "index"),
         ((8, 151936), 1, 50, "index"),
         ((64, 32000), 1, 50, "value"), ((64, 32000), 1, 50, "index"), ((1, 3, 224, 224), 3, 10, "value"),
         ((1, 3, 224, 224), 3, 10, "index"), ((1000, 1000), 0, 1000, "value"), ((1, 8), 1, 3, "value"),
         ((1, 8), 1, 3, "index")]


def table(rounds: int, passes: int) -> list[dict]:
    """The bench's cases with the rule as it is: built-in, auto, one read (ReduceMax, NumPy max)."""
    import onnxruntime as ort
    from onnx import helper

    import ortops
    from ortops import builder
    from ortops.ops.top_k.bench import ortops_model

    rng = np.random.default_rng(0)
    times: dict = {}
    blocks = {}
    for p in range(passes):
        for shape, axis, k, sort in TABLE:
            params = dict(shape=shape, axis=axis, k=k, sort=sort)
            x = rng.standard_normal(shape, dtype=np.float32)
            built_in = builder.onnx_top_k_model(11, TensorProto.FLOAT, len(shape), axis=axis, largest=1, sorted=1)
            read = helper.make_model(helper.make_graph(
                [helper.make_node("ReduceMax", ["X"], ["Y"], keepdims=0)], "one_read",
                [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(shape))],
                [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [])]),
                opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
            auto = ortops.InferenceSession(ortops_model(params), options(), path="auto")
            blocks[(shape, axis, k, sort)] = any(n.op_type == "GatherND" for n in _nodes(auto.model.graph))
            calls = {
                "built-in": (lambda s=ort.InferenceSession(built_in.SerializeToString(), options(),
                                                            providers=["CPUExecutionProvider"]):
                             s.run(None, {"X": x, "K": np.array([k], np.int64)})),
                "auto": lambda s=auto: s.run(None, {"data": x}),
                "ReduceMax": (lambda s=ort.InferenceSession(read.SerializeToString(), options(),
                                                             providers=["CPUExecutionProvider"]):
                              s.run(None, {"X": x})),
                "numpy max": lambda: x.max(),
            }
            for call in calls.values():
                call(), call()
            names = list(calls)
            entry = times.setdefault((shape, axis, k, sort), {name: [] for name in names})
            for _ in range(rounds):
                random.shuffle(names)
                for name in names:
                    start = time.perf_counter()
                    calls[name]()
                    entry[name].append(time.perf_counter() - start)
            print(f"table pass {p + 1}/{passes} {shape} axis={axis} k={k} sort={sort}", file=sys.stderr, flush=True)
    out = []
    for (shape, axis, k, sort), entry in times.items():
        b = np.array(entry["built-in"])
        out.append(dict(shape=list(shape), axis=axis, k=k, sort=sort, prefilter=blocks[(shape, axis, k, sort)],
                        built_in_ms=round(1e3 * float(np.median(b)), 4),
                        auto_ratio=round(float(np.median(np.array(entry["auto"]) / b)), 3),
                        reduce_max_ms=round(1e3 * float(np.median(entry["ReduceMax"])), 4),
                        numpy_max_ms=round(1e3 * float(np.median(entry["numpy max"])), 4), rounds=len(b)))
    return out


def _nodes(graph):
    from ortops.graph import graphs

    return [n for g in graphs(graph) for n in g.node]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--refit", action="store_true", help="fit the rule again to the stored measurements")
    parser.add_argument("--table", action="store_true", help="time the bench's cases with the rule as it is")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "topk_cost_model.json"))
    args = parser.parse_args(argv)
    import onnxruntime as ort

    if args.refit:
        stored = json.loads(Path(args.out).read_text())
        stored["fitted"] = fit(stored["summary"])
        Path(args.out).write_text(json.dumps(stored, indent=1) + "\n")
        print(json.dumps({k: v for k, v in stored["fitted"].items() if k != "chosen"}))
        return 0
    if args.table:
        stored = json.loads(Path(args.out).read_text()) if Path(args.out).exists() else {}
        stored["table"] = dict(passes=args.passes, rounds=args.rounds, onnxruntime=ort.__version__,
                               load_average=round(os.getloadavg()[0], 2), rows=table(args.rounds, args.passes))
        Path(args.out).write_text(json.dumps(stored, indent=1) + "\n")
        for row in stored["table"]["rows"]:
            print(row)
        return 0
    grid = QUICK if args.quick else GRID
    rng = np.random.default_rng(0)
    rows = []
    start = time.time()
    for p in range(args.passes):
        todo = cells(grid)
        random.Random(p).shuffle(todo)  # another order each pass: drifting load spreads over the grid
        for i, cell in enumerate(todo):
            result = measure(cell, args.rounds, rng)
            rows.append(dict(cell, **result, load=os.getloadavg()[0]))
            print(f"pass {p + 1}/{args.passes} cell {i + 1}/{len(todo)} {cell} B={result['block']}", file=sys.stderr,
                  flush=True)
    summary = summarise(rows)
    rule = fit(summary)
    Path(args.out).write_text(json.dumps(dict(
        grid=grid, passes=args.passes, rounds=args.rounds, seconds=round(time.time() - start),
        environment=dict(onnxruntime=ort.__version__, numpy=np.__version__, cpus=os.cpu_count(),
                         machine=platform.machine(), python=platform.python_version(),
                         load_average_range=[round(min(r["load"] for r in rows), 2),
                                             round(max(r["load"] for r in rows), 2)]),
        fitted=rule, summary=summary), indent=1) + "\n")
    print(json.dumps({k: v for k, v in rule.items() if k != "chosen"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
