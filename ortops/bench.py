"""``ortops bench``: time ortops' ops in ONNX Runtime against ORT's built-ins, OpenVINO and NumPy.

Usage::

    ortops bench [--quick | --smoke] [--out DIR] [--ops TopK ScatterElementsUpdate ArgMax] [--repeat N]
    python scripts/bench.py ...          # the same

``--quick`` runs the whole matrix with fewer rounds, fewer scaling points and the NumPy
reference on small inputs only (under 2 minutes on 2 cores); ``--smoke`` runs tiny shapes
to check the harness end to end (its numbers mean nothing). Output: a table on the terminal,
``DIR/bench.json`` (every sample, the machine, the versions), ``DIR/bench.txt`` (the tables)
and ``DIR/scaling.png`` (needs matplotlib: the ``bench`` extra).

What is timed
-------------
Every row is one implementation on one case, called the way a user calls it:

* ``ortops``: :class:`ortops.InferenceSession` on a model from :mod:`ortops.builder`;
* ``built-in``: a plain ``onnxruntime.InferenceSession`` of the standard-ONNX equivalent
  (:data:`BUILT_INS`): TopK-11 (``sorted=0`` for ``sort="none"``); ScatterElements-18
  ``add``, or the standard-op composition of
  :func:`ortops.builder.scatter_mean_composition` where no
  reduction maps; ``Reshape`` + ``ArgMax(select_last_index=1)``, or TopK-11 on the flattened
  tensor for ``topk > 1``. ArgMax ``topk=1`` cases also show ``select_last_index=0``: not
  equivalent (ties go to the lower index), but ORT's fast path;
* ``OpenVINO``: the runtime's own op (TopK-11 with ``stable`` 1 and 0 in the case's ``sort``
  mode; ScatterElementsUpdate-12), compiled for ``"CPU"``, when ``openvino`` imports;
* ``NumPy reference``: :mod:`ortops.reference`, only up to a size limit (a note says so);
* ``identity PyOp``: a trivial PyOp through ortops' installed bridge hook, the floor of the
  per-call cost of any PyOp (its ratio is against ORT's own ``Identity``).

Method
------
Each case builds its sessions and inputs, checks that every implementation's first output
matches the built-in's (as a multiset of values: shapes equal, sorted values close), then
warms each implementation up. A *sample* is the mean time of a batch of calls sized to last
about ``sample_seconds`` (one call for slow implementations). Samples are taken in rounds
that interleave the implementations (A B C, then C B A, ...), so drift from other processes
on the machine hits all of them alike; the table shows the median, the interquartile range
as a share of it, and ``ratio`` = median / the built-in's median of the same case. The
garbage collector is off while a sample runs. Implementations slower than
``slow_seconds`` per call get at most ``slow_samples`` samples (one beyond
``very_slow_seconds``: OpenVINO's stable TopK and its float mean); cheap cases get more rounds
within a time budget. ``bench.json`` keeps every sample, the minimum and the load average
at the start of each case: on a shared machine, read the medians with the spread.

Peak memory is measured in child processes, one per implementation, so that two
implementations never share a high-water mark; see :func:`_memory_child`.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = ["main", "build_parser", "Config", "CONFIGS", "OPS", "BUILT_INS"]

OPS = ("TopK", "ScatterElementsUpdate", "ArgMax")
TOP_K_SORTS = ("value", "index", "none")
BENCH_DOMAIN = "ortops_bench"  # the private domain of the identity PyOp
#: What the ``built-in`` row of each op runs (a plain onnxruntime session).
BUILT_INS = {
    "TopK": "TopK-11, largest=1, sorted=1 (sorted=0 for sort=none)",
    "ScatterElementsUpdate": "ScatterElements-18 reduction=add for sum; for mean and use_init_val=0, "
                             "the standard-op composition an exporter would emit (scatter_mean_composition)",
    "ArgMax": "Reshape(-1) + ArgMax(axis=0, keepdims=1, select_last_index=1) for topk=1; "
              "TopK-11 on the flattened tensor for topk>1 (lower index first among ties)",
}


# --------------------------------------------------------------------------------------------
# Configuration


@dataclass(frozen=True)
class Config:
    """How much to measure. ``reference_limits``: the largest input (elements of ``data``; of
    ``updates`` for ScatterElementsUpdate) the NumPy reference runs on."""

    mode: str
    rounds: int
    sample_seconds: float
    slow_seconds: float
    slow_samples: int
    very_slow_seconds: float  # implementations slower than this per call get one sample
    scaling_sizes: tuple[int, ...]
    scaling_rounds: int
    reference_limits: dict[str, int]
    memory_runs: int
    case_seconds: float  # cheap cases get more rounds (up to 4x) while they fit in this budget
    tiny_matrix: bool = False


CONFIGS = {
    "full": Config("full", rounds=15, sample_seconds=0.02, slow_seconds=0.1, slow_samples=5, very_slow_seconds=5.0,
                   scaling_sizes=(1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000),
                   scaling_rounds=7,
                   reference_limits={"TopK": 2_100_000, "ArgMax": 2_100_000, "ScatterElementsUpdate": 1_100_000},
                   memory_runs=10, case_seconds=4.0),
    "quick": Config("quick", rounds=5, sample_seconds=0.004, slow_seconds=0.05, slow_samples=3, very_slow_seconds=0.5,
                    scaling_sizes=(1_000, 10_000, 100_000, 1_000_000, 10_000_000), scaling_rounds=3,
                    reference_limits={"TopK": 200_000, "ArgMax": 200_000, "ScatterElementsUpdate": 100_000},
                    memory_runs=3, case_seconds=0.5),
    "smoke": Config("smoke", rounds=2, sample_seconds=0.001, slow_seconds=0.05, slow_samples=2, very_slow_seconds=1.0,
                    scaling_sizes=(1_000, 10_000), scaling_rounds=2,
                    reference_limits={"TopK": 10_000, "ArgMax": 10_000, "ScatterElementsUpdate": 10_000},
                    memory_runs=1, case_seconds=0.0, tiny_matrix=True),
}


# --------------------------------------------------------------------------------------------
# Cases: what each op is timed on


@dataclass(frozen=True)
class Target:
    """A goal shown on one row: ``median(row) / median(against) <= limit``."""

    text: str
    against: tuple[str, str]  # (case id, implementation) of the denominator
    limit: float
    speedup: bool = False  # show as "N× faster" (limit < 1)


@dataclass
class Case:
    op: str
    name: str
    params: dict
    impls: tuple[str, ...]
    load_average: float | None = None  # 1-minute load average when the case started
    seconds: float | None = None  # how long the case took, set-up included
    targets: dict[str, list[Target]] = field(default_factory=dict)  # implementation -> targets
    baselines: dict[str, str] = field(default_factory=dict)  # implementation -> its ratio's denominator
    notes: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.op} {self.name}"


def _dims(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _top_k_name(p) -> str:
    return f"{_dims(p['shape'])} axis={p['axis']} k={p['k']} sort={p['sort']}"


def _scatter_name(p) -> str:
    init = "" if p["use_init_val"] else " use_init_val=0"
    return f"{_dims(p['data_shape'])} <- {_dims(p['updates_shape'])} {p['reduction']}{init}"


def _arg_max_name(p) -> str:
    return f"{_dims(p['shape'])} topk={p['topk']}"


def _elements(op: str, p: dict) -> int:
    shape = p["updates_shape"] if op == "ScatterElementsUpdate" else p["shape"]
    return int(np.prod(shape))


def _matrix(config: Config, ops, have_openvino: bool) -> list[Case]:
    """The cases of the benchmark, with the implementations and targets of each."""
    tiny = config.tiny_matrix
    ov_top_k = ("openvino stable=1", "openvino stable=0") if have_openvino else ()
    cases: list[Case] = []

    def reference(op, p) -> tuple[tuple[str, ...], list[str]]:
        limit = config.reference_limits[op]
        if _elements(op, p) <= limit:
            return ("reference",), []
        return (), [f"NumPy reference skipped above {limit:,} elements in --{config.mode} mode"]

    if "TopK" in ops:
        shapes = ([((2, 640), 1, 5), ((1, 8), 1, 3)] if tiny else
                  [((64, 32000), 1, 50), ((1, 3, 224, 224), 3, 10), ((1, 1_000_000), 1, 100),
                   ((1000, 1000), 0, 1000), ((1, 8), 1, 3)])
        big = shapes[0]
        ov_big_id = f"TopK {_top_k_name(dict(shape=big[0], axis=big[1], k=big[2], sort='value'))}"
        for shape, axis, k in shapes:
            for sort in TOP_K_SORTS:
                p = dict(shape=shape, axis=axis, k=k, sort=sort)
                ov = tuple(i for i in ov_top_k if not (sort == "none" and i.endswith("stable=1")))
                ref, notes = reference("TopK", p)
                if sort == "none" and have_openvino:
                    notes.append("OpenVINO TopK-11 refuses stable=1 with sort=none")
                case = Case("TopK", _top_k_name(p), p, ("ortops", "built-in", *ov, *ref), notes=notes)
                targets = case.targets.setdefault("ortops", [])
                if shape != (1, 8):
                    targets.append(Target("≤1.5× built-in", (case.id, "built-in"), 1.5))
                if (shape, axis, k) == big and have_openvino:
                    targets.append(Target("≥10× faster than OpenVINO stable=1 sort=value",
                                          (ov_big_id, "openvino stable=1"), 0.1, speedup=True))
                cases.append(case)
    if "ScatterElementsUpdate" in ops:
        shapes = [((8, 16), (32, 16))] if tiny else [((1000, 256), (4000, 256)), ((100_000, 16), (400_000, 16))]
        for data_shape, updates_shape in shapes:
            for reduction, use_init_val in (("sum", 1), ("mean", 1), ("sum", 0)):
                p = dict(data_shape=data_shape, updates_shape=updates_shape, reduction=reduction,
                         use_init_val=use_init_val)
                ref, notes = reference("ScatterElementsUpdate", p)
                ov = ("openvino",) if have_openvino else ()
                case = Case("ScatterElementsUpdate", _scatter_name(p), p, ("ortops", "built-in", *ov, *ref),
                            notes=notes)
                if (reduction, use_init_val) == ("sum", 1):
                    case.targets["ortops"] = [Target("≤1.2× built-in", (case.id, "built-in"), 1.2)]
                cases.append(case)
    if "ArgMax" in ops:
        shapes = [(1, 1000)] if tiny else [(1, 1_000_000), (64, 32000)]
        for shape in shapes:
            for topk in (1, 3) if tiny else (1, 100):
                p = dict(shape=shape, topk=topk)
                ref, notes = reference("ArgMax", p)
                extra = ("built-in select_last_index=0",) if topk == 1 else ()
                case = Case("ArgMax", _arg_max_name(p), p, ("ortops", "built-in", *extra, *ref), notes=notes)
                if topk == 1:
                    case.targets["ortops"] = [Target("≤1.0× built-in", (case.id, "built-in"), 1.0)]
                cases.append(case)
    # Per-call overhead on tiny inputs, interleaved with the floor of any PyOp.
    tiny_params = {
        "TopK": dict(shape=(1, 8), axis=1, k=3, sort="value"),
        "ScatterElementsUpdate": dict(data_shape=(2, 4), updates_shape=(4, 4), reduction="sum", use_init_val=1),
        "ArgMax": dict(shape=(1, 8), topk=1),
    }
    names = {"TopK": _top_k_name, "ScatterElementsUpdate": _scatter_name, "ArgMax": _arg_max_name}
    for op in ops:
        p = tiny_params[op]
        case = Case(f"{op} overhead", names[op](p), dict(p, op=op),
                    ("ortops", "built-in", "identity PyOp", "ORT Identity"))
        case.targets["ortops"] = [Target("≤1.5× identity PyOp", (case.id, "identity PyOp"), 1.5)]
        case.baselines["identity PyOp"] = "ORT Identity"
        cases.append(case)
    return cases


# --------------------------------------------------------------------------------------------
# Inputs, sessions and calls


def _inputs(op: str, p: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded float32 inputs, generated in float32 (no float64 temporaries to skew peak RSS)."""
    rng = np.random.default_rng(seed)
    if op in ("TopK", "ArgMax"):
        return {"data": rng.standard_normal(p["shape"], dtype=np.float32)}
    data_shape, updates_shape = p["data_shape"], p["updates_shape"]
    return {
        "data": rng.standard_normal(data_shape, dtype=np.float32),
        "indices": rng.integers(0, data_shape[0], updates_shape, dtype=np.int64),
        "updates": rng.standard_normal(updates_shape, dtype=np.float32),
    }


def _plain_session(model):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _identity(x):
    """The identity PyOp's body: float32 in, the same float32 array out. It cannot raise."""
    return x


_identity_registered = False


def _identity_session():
    """An ortops session of one identity PyOp in domain :data:`BENCH_DOMAIN`.

    The op is registered after ``ortops.register()``, so its calls go through ortops' hook
    like ortops' ops do; the hook hands a PyOp it does not own to the library's own hook,
    which converts the output with ``tolist()`` (negligible on the 8 elements it is timed on).
    The body cannot raise: the bridge hands it a float32 array (the only registered input
    type) and it returns that array, matching the declared float32 output.
    """
    global _identity_registered
    import onnx
    from onnx import TensorProto, helper
    from onnxruntime_extensions import PyCustomOpDef, onnx_op

    import ortops

    if not _identity_registered:
        ortops.register()
        onnx_op(op_type=f"{BENCH_DOMAIN}::Identity", inputs=[PyCustomOpDef.dt_float],
                outputs=[PyCustomOpDef.dt_float])(_identity)
        _identity_registered = True
    node = helper.make_node("Identity", ["data"], ["output"], domain=BENCH_DOMAIN, name="identity_pyop")
    graph = helper.make_graph([node], "identity_pyop",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["d0", "d1"])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["d0", "d1"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(BENCH_DOMAIN, 1)],
                              ir_version=ortops.builder.IR_VERSION)
    onnx.checker.check_model(model)
    return ortops.InferenceSession(model)


def _ort_identity_session():
    from onnx import TensorProto, helper

    from . import builder

    node = helper.make_node("Identity", ["data"], ["output"], name="identity")
    return _plain_session(builder.make_model([node], [("data", TensorProto.FLOAT, [None, None])],
                                             [("output", TensorProto.FLOAT, [None, None])], onnx_opset=13))


def _openvino_core():
    import openvino as ov

    return ov.Core()


def _openvino_top_k(p: dict, stable: bool):
    import openvino as ov
    from openvino import opset11

    data = opset11.parameter(list(p["shape"]), ov.Type.f32, name="data")
    node = opset11.topk(data, opset11.constant(np.int64(p["k"])), p["axis"], "max", p["sort"], "i32", stable)
    compiled = _openvino_core().compile_model(ov.Model([node.output(0), node.output(1)], [data]), "CPU")
    return compiled.create_infer_request()


def _openvino_scatter(p: dict):
    import openvino as ov
    from openvino import opset12

    data = opset12.parameter(list(p["data_shape"]), ov.Type.f32, name="data")
    indices = opset12.parameter(list(p["updates_shape"]), ov.Type.i64, name="indices")
    updates = opset12.parameter(list(p["updates_shape"]), ov.Type.f32, name="updates")
    node = opset12.scatter_elements_update(data, indices, updates, opset12.constant(np.int64(0)),
                                           p["reduction"], bool(p["use_init_val"]))
    compiled = _openvino_core().compile_model(ov.Model([node.output(0)], [data, indices, updates]), "CPU")
    return compiled.create_infer_request()


def _make_call(op: str, impl: str, p: dict, inputs: dict[str, np.ndarray]) -> Callable[[], Any]:
    """A zero-argument function running ``impl`` on ``inputs`` once and returning its outputs."""
    from onnx import TensorProto

    import ortops
    from . import builder, reference
    # The ScatterElementsUpdate and ArgMax model builders, from their modules (the package's
    # ``scatter_elements_update``/``arg_max`` names are the node builders).
    from .builder import arg_max_model, onnx_arg_max_equivalent_model
    from .builder import (
        onnx_scatter_elements_model,
        scatter_elements_update_model,
        scatter_mean_composition,
    )

    if op.endswith(" overhead"):
        op = p["op"]
        if impl == "identity PyOp":
            session, feed = _identity_session(), {"data": inputs["data"].reshape(1, -1)}
            return lambda: session.run(None, feed)
        if impl == "ORT Identity":
            session, feed = _ort_identity_session(), {"data": inputs["data"].reshape(1, -1)}
            return lambda: session.run(None, feed)

    if op == "TopK":
        x, k = inputs["data"], np.array([p["k"]], np.int64)
        rank, axis, sort = len(p["shape"]), p["axis"], p["sort"]
        if impl == "ortops":
            model = builder.top_k_model(TensorProto.FLOAT, rank, axis=axis, mode="max", sort=sort,
                                        stable=0 if sort == "none" else 1)
            session, feed = ortops.InferenceSession(model), {"data": x, "k": k}
            return lambda: session.run(None, feed)
        if impl == "built-in":
            model = builder.onnx_top_k_model(11, TensorProto.FLOAT, rank, axis=axis, largest=1,
                                             sorted=0 if sort == "none" else 1)
            session, feed = _plain_session(model), {"X": x, "K": k}
            return lambda: session.run(None, feed)
        if impl.startswith("openvino"):
            request = _openvino_top_k(p, stable=impl.endswith("stable=1"))
            return lambda: request.infer([x])
        if impl == "reference":
            return lambda: reference.top_k(x, p["k"], axis=axis, mode="max", sort=sort, stable=1)

    if op == "ScatterElementsUpdate":
        rank, reduction, use_init_val = len(p["data_shape"]), p["reduction"], p["use_init_val"]
        if impl == "ortops":
            model = scatter_elements_update_model(TensorProto.FLOAT, rank, reduction=reduction,
                                                  use_init_val=use_init_val)
            session = ortops.InferenceSession(model)
            feed = dict(inputs, axis=np.array([0], np.int64))
            return lambda: session.run(None, feed)
        if impl == "built-in":
            if (reduction, use_init_val) == ("sum", 1):
                model = onnx_scatter_elements_model(18, TensorProto.FLOAT, rank, axis=0, reduction="add")
            else:
                model = scatter_mean_composition(TensorProto.FLOAT, rank, axis=0, reduction=reduction,
                                                 use_init_val=use_init_val)
            session = _plain_session(model)
            return lambda: session.run(None, inputs)
        if impl == "openvino":
            request = _openvino_scatter(p)
            ordered = [inputs["data"], inputs["indices"], inputs["updates"]]
            return lambda: request.infer(ordered)
        if impl == "reference":
            return lambda: reference.scatter_elements_update(inputs["data"], inputs["indices"], inputs["updates"], 0,
                                                             reduction=reduction, use_init_val=use_init_val)

    if op == "ArgMax":
        rank, topk = len(p["shape"]), p["topk"]
        if impl == "ortops":
            session = ortops.InferenceSession(arg_max_model(rank, topk=topk))
            return lambda: session.run(None, inputs)
        if impl == "built-in":
            # topk=1: Reshape + ArgMax(select_last_index=1), ncnn's tie rule; topk>1: TopK-11
            # on the flattened tensor (the naive mapping: lower index first among ties).
            model = onnx_arg_max_equivalent_model(rank, topk=topk, exact_ties=topk == 1)
            session = _plain_session(model)
            return lambda: session.run(None, inputs)
        if impl == "built-in select_last_index=0":
            # Not equivalent (ties go to the lower index), shown for ORT's fast ArgMax path.
            model = onnx_arg_max_equivalent_model(rank, topk=1)
            for node in model.graph.node:
                for attr in node.attribute:
                    if node.op_type == "ArgMax" and attr.name == "select_last_index":
                        attr.i = 0
            session = _plain_session(model)
            return lambda: session.run(None, inputs)
        if impl == "reference":
            return lambda: reference.arg_max(inputs["data"], topk=topk)

    raise ValueError(f"no implementation {impl!r} for {op}")


def _first_output(outputs) -> np.ndarray:
    if isinstance(outputs, np.ndarray):
        return outputs
    return np.asarray(outputs[0])


def _same_values(got: np.ndarray, expected: np.ndarray) -> bool:
    """Same shape and, as multisets, close values (order differs between sort modes)."""
    if got.shape != expected.shape:
        return False
    return bool(np.allclose(np.sort(got, axis=None), np.sort(expected, axis=None), rtol=1e-4, atol=1e-4))


# --------------------------------------------------------------------------------------------
# Timing


@dataclass
class Timing:
    samples: list[float]
    calls_per_sample: int

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """Interquartile range as a share of the median (0 with fewer than 4 samples)."""
        if len(self.samples) < 4:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples, n=4)
        return (q3 - q1) / self.median


def _sample(call: Callable[[], Any], n: int) -> float:
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(n):
            call()
        return (time.perf_counter() - start) / n
    finally:
        if gc_was_enabled:
            gc.enable()


def _time_interleaved(calls: dict[str, Callable[[], Any]], config: Config, rounds: int, *,
                      adaptive: bool, called: bool) -> dict[str, Timing]:
    """Warm up, size each implementation's batch, then take interleaved rounds of samples.

    ``called``: every call has run once already (its lazy set-up is done). With
    ``adaptive``, a case whose round is cheap gets more rounds (up to 4x ``rounds``) while
    they fit in ``config.case_seconds``.
    """
    estimate: dict[str, float] = {}
    first_samples: dict[str, float] = {}
    for name, call in calls.items():
        if not called:
            call()  # lazy set-up inside the implementation
        first = _sample(call, 1)
        if first > config.slow_seconds:  # slow: one call per sample, and this one counts
            estimate[name] = first_samples[name] = first
            continue
        warm = max(1, int(config.sample_seconds / max(first, 1e-7)))
        estimate[name] = _sample(call, warm)
    counts = {name: max(1, round(config.sample_seconds / max(t, 1e-7))) for name, t in estimate.items()}
    slow = {name for name, t in estimate.items() if t > config.slow_seconds}
    if adaptive:
        per_round = sum(counts[name] * t for name, t in estimate.items() if name not in slow)
        rounds = max(rounds, min(4 * rounds, int(config.case_seconds / max(per_round, 1e-9))))
    timings = {name: Timing([first_samples[name]] if name in first_samples else [], counts[name]) for name in calls}
    limit = {name: 1 if estimate[name] > config.very_slow_seconds else config.slow_samples for name in slow}
    names = list(calls)
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            if name in slow and len(timings[name].samples) >= limit[name]:
                continue
            timings[name].samples.append(_sample(calls[name], counts[name]))
    return timings


# --------------------------------------------------------------------------------------------
# Running the matrix


@dataclass
class Row:
    case: Case
    impl: str
    timing: Timing
    ratio: float | None = None
    verdicts: list[tuple[Target, float | None, bool | None]] = field(default_factory=list)
    mismatch: bool = False


def _run_case(case: Case, config: Config, rounds: int, adaptive: bool) -> list[Row]:
    case.load_average = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    start = time.perf_counter()
    inputs = _inputs(case.params.get("op", case.op), case.params)
    calls = {impl: _make_call(case.op, impl, case.params, inputs) for impl in case.impls}
    expected = _first_output(calls["built-in"]())
    mismatched = set()
    for impl, call in calls.items():  # the first call of each: a check, and the lazy set-up
        if impl == "built-in":
            continue
        output = _first_output(call())
        if impl in ("identity PyOp", "ORT Identity"):
            continue
        if not _same_values(output, expected):
            mismatched.add(impl)
            case.notes.append(f"{impl}: first output differs from the built-in's (shape or values)")
    timings = _time_interleaved(calls, config, rounds, adaptive=adaptive, called=True)
    case.seconds = time.perf_counter() - start
    return [Row(case, impl, timings[impl], mismatch=impl in mismatched) for impl in case.impls]


def _judge(rows: list[Row]) -> None:
    """Ratios against each row's baseline, and the targets' verdicts."""
    medians = {(row.case.id, row.impl): row.timing.median for row in rows if row.timing}
    for row in rows:
        if row.timing is None:
            continue
        baseline = medians.get((row.case.id, row.case.baselines.get(row.impl, "built-in")))
        row.ratio = row.timing.median / baseline if baseline else None
        for target in row.case.targets.get(row.impl, []):
            against = medians.get(target.against)
            value = row.timing.median / against if against else None
            row.verdicts.append((target, value, None if value is None else value <= target.limit))


# --------------------------------------------------------------------------------------------
# Scaling


_SCALING_OPS = {
    "TopK": "TopK [N/1000, 1000] axis=1 k=50 sort=value vs TopK-11",
    "ScatterElementsUpdate": "ScatterElementsUpdate sum [N/64, 16] <- [N/16, 16] vs ScatterElements-18 add",
    "ArgMax": "ArgMax [1, N] topk=1 vs Reshape+ArgMax",
}


def _scaling_params(op: str, n: int) -> dict:
    if op == "TopK":
        return dict(shape=(max(1, round(n / 1000)), 1000), axis=1, k=50, sort="value")
    if op == "ScatterElementsUpdate":
        rows = max(1, round(n / 16))
        return dict(data_shape=(max(1, rows // 4), 16), updates_shape=(rows, 16), reduction="sum", use_init_val=1)
    return dict(shape=(1, n), topk=1)


def _run_scaling(ops, config: Config, rounds: int, adaptive: bool, status) -> dict[str, list[dict]]:
    series: dict[str, list[dict]] = {}
    for op in ops:
        points = []
        for n in config.scaling_sizes:
            p = _scaling_params(op, n)
            status(f"scaling {op} N={n:,}")
            impls = ["ortops", "built-in"]
            if _elements(op, p) <= config.reference_limits[op]:
                impls.append("reference")
            inputs = _inputs(op, p)
            calls = {impl: _make_call(op, impl, p, inputs) for impl in impls}
            timings = _time_interleaved(calls, config, rounds, adaptive=adaptive, called=False)
            points.append({
                "elements": _elements(op, p), "params": _jsonable(p),
                **{impl: {"median_s": t.median, "samples_s": t.samples} for impl, t in timings.items()},
            })
            del calls, inputs
        series[op] = points
    return series


def _plot_scaling(series: dict[str, list[dict]], path: pathlib.Path, title: str) -> str | None:
    """Write the log-log plot; return a note instead when matplotlib is missing."""
    if importlib.util.find_spec("matplotlib") is None:
        return "matplotlib is not installed (pip install 'ortops[bench]'): scaling.png not written"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    fig, axes = plt.subplots(2, len(series), figsize=(5 * len(series), 7.5), squeeze=False,
                             gridspec_kw={"height_ratios": [2, 1]})
    styles = {"ortops": ("C0", "o", "-"), "built-in": ("C1", "s", "-"), "reference": ("C2", "^", "--")}
    for col, (op, points) in enumerate(series.items()):
        top, bottom = axes[0][col], axes[1][col]
        for impl, (color, marker, line) in styles.items():
            xs = [pt["elements"] for pt in points if impl in pt]
            ys = [pt[impl]["median_s"] * 1e3 for pt in points if impl in pt]
            if xs:
                label = {"reference": "NumPy reference"}.get(impl, impl)
                top.plot(xs, ys, color=color, marker=marker, linestyle=line, label=label)
        top.set(xscale="log", yscale="log", ylabel="median time per call (ms)", title=_SCALING_OPS[op])
        top.title.set_fontsize(9)
        top.grid(True, which="both", alpha=0.3)
        top.legend(fontsize=8)
        xs = [pt["elements"] for pt in points]
        ratios = [pt["ortops"]["median_s"] / pt["built-in"]["median_s"] for pt in points]
        bottom.plot(xs, ratios, color="C0", marker="o")
        bottom.axhline(1.0, color="C1", linewidth=1)
        bottom.set(xscale="log", yscale="log", xlabel="elements N", ylabel="ortops / built-in")
        bottom.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}×"))
        bottom.yaxis.set_minor_formatter(ticker.NullFormatter())
        bottom.grid(True, which="both", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


# --------------------------------------------------------------------------------------------
# Peak memory, in child processes


def _memory_params(op: str, tiny: bool) -> dict:
    if op == "TopK":
        return dict(shape=(2, 640) if tiny else (64, 32000), axis=1, k=5 if tiny else 50, sort="value")
    if op == "ScatterElementsUpdate":
        return dict(data_shape=(8, 16) if tiny else (100_000, 16), updates_shape=(32, 16) if tiny else (400_000, 16),
                    reduction="sum", use_init_val=1)
    return dict(shape=(1, 1000) if tiny else (64, 32000), topk=3 if tiny else 100)


def _proc_status_kib(field_name: str) -> int | None:
    """A ``/proc/self/status`` field in KiB (``VmHWM``, ``VmRSS``), None off Linux."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss() -> bool:
    """Reset this process's ``VmHWM`` to its current RSS (Linux >= 4.0); False if impossible."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def _memory_child(argv: list[str]) -> int:
    """Child process: build one implementation, run it, print its peak RSS as JSON (KiB).

    Linux keeps ``ru_maxrss`` across ``exec``: a child started by a large parent reports at
    least the parent's peak. So where ``/proc/self/status`` exists the peak is ``VmHWM``,
    which belongs to the new process image, and it is reset after set-up, so that
    ``run_peak - rss_before_run`` is the memory the calls themselves need. Elsewhere the
    peak is ``ru_maxrss``.
    """
    import resource

    op, impl, params, runs = argv[0], argv[1], json.loads(argv[2]), int(argv[3])
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    call = _make_call(op, impl, params, _inputs(op, params))
    ru_scale = 1 if sys.platform != "darwin" else 1 / 1024  # ru_maxrss: KiB on Linux, bytes on macOS
    setup_peak = _proc_status_kib("VmHWM")
    source = "VmHWM"
    if setup_peak is None:
        setup_peak, source = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * ru_scale, "ru_maxrss"
    rss_before_run = _proc_status_kib("VmRSS") or setup_peak
    reset = source == "VmHWM" and _reset_peak_rss()
    for _ in range(runs):
        call()
    run_peak = _proc_status_kib("VmHWM") if source == "VmHWM" else \
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * ru_scale
    print(json.dumps({
        "peak_kib": max(setup_peak, run_peak), "setup_peak_kib": setup_peak, "rss_before_run_kib": rss_before_run,
        "run_peak_kib": run_peak, "delta_kib": run_peak - (rss_before_run if reset else setup_peak),
        "source": source, "peak_reset_after_setup": reset,
        "ru_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * ru_scale,
    }))
    return 0


def _run_memory(ops, config: Config, status) -> list[dict]:
    results = []
    for op in ops:
        p = _memory_params(op, config.tiny_matrix)
        entry = {"op": op, "case": {"TopK": _top_k_name, "ScatterElementsUpdate": _scatter_name,
                                    "ArgMax": _arg_max_name}[op](p), "params": _jsonable(p), "runs": config.memory_runs}
        for impl in ("ortops", "built-in"):
            status(f"peak memory {op} {impl}")
            code = "import sys; from ortops.bench import _memory_child; sys.exit(_memory_child(sys.argv[1:]))"
            proc = subprocess.run([sys.executable, "-c", code, op, impl, json.dumps(_jsonable(p)),
                                   str(config.memory_runs)], capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                entry[impl] = {"error": (proc.stderr.strip().splitlines() or ["exit " + str(proc.returncode)])[-1]}
                continue
            entry[impl] = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(entry)
    return results


# --------------------------------------------------------------------------------------------
# Output


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _machine() -> dict:
    cpu_model = None
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": cpu_model or platform.processor() or None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {d: _version(d) for d in ("ortops", "numpy", "onnx", "onnxruntime", "onnxruntime-extensions",
                                              "openvino", "matplotlib")},
    }


def _seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _target_text(target: Target, value: float | None, ok: bool | None) -> str:
    if ok is None:
        return f"– {target.text} (n/a)"
    mark = "[green]✓[/]" if ok else "[red]✗[/]"
    if target.speedup:
        return f"{mark} {target.text}: {1 / value:.0f}×"
    if target.against[1] != "built-in":
        return f"{mark} {target.text}: {value:.2f}×"
    return f"{mark} {target.text}"


_IMPL_LABELS = {
    "reference": "NumPy reference",
    "openvino": "OpenVINO",
    "openvino stable=1": "OpenVINO stable=1",
    "openvino stable=0": "OpenVINO stable=0",
    "built-in select_last_index=0": "ORT ArgMax select_last_index=0 (ties differ)",
}


def _print_tables(rows: list[Row], memory: list[dict], console) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="Median time per call; ratio = median / the built-in's median in the same case "
                        "(identity PyOp: / ORT Identity's)", title_justify="left")
    for name, justify in (("case", "left"), ("impl", "left"), ("median", "right"), ("iqr", "right"),
                          ("n", "right"), ("ratio", "right"), ("target", "left")):
        table.add_column(name, justify=justify, no_wrap=name in ("median", "ratio", "impl"))
    previous = None
    for row in rows:
        if previous is not None and row.case is not previous:
            table.add_section()
        first = row.case is not previous
        previous = row.case
        t = row.timing
        impl = _IMPL_LABELS.get(row.impl, row.impl) + (" [red]⚠ differs[/]" if row.mismatch else "")
        table.add_row(
            f"[bold]{row.case.op}[/] {escape(row.case.name)}" if first else "", impl,
            _seconds(t.median), f"{t.spread:.0%}" if len(t.samples) >= 4 else "", str(len(t.samples)),
            "" if row.ratio is None else f"{row.ratio:.2f}×",
            "  ".join(_target_text(*v) for v in row.verdicts),
        )
    console.print(table)
    if memory:
        mem = Table(title="Peak RSS in child processes (Δ = peak while running − RSS before running: "
                          "what the calls need beyond the session and inputs)",
                    title_justify="left")
        for name in ("case", "runs", "ortops peak", "ortops Δ", "built-in peak", "built-in Δ", "ratio", "Δ ratio"):
            mem.add_column(name, justify="left" if name == "case" else "right")
        for entry in memory:
            cells = []
            for impl in ("ortops", "built-in"):
                m = entry.get(impl, {})
                if "peak_kib" in m:
                    cells += [f"{m['peak_kib'] / 1024:.0f} MiB", f"{max(m['delta_kib'], 0) / 1024:.1f} MiB"]
                else:
                    cells += [escape(m.get("error", "?")[:40]), ""]
            o, b = entry.get("ortops", {}), entry.get("built-in", {})
            ratio = delta_ratio = ""
            if "peak_kib" in o and "peak_kib" in b:
                ratio = f"{o['peak_kib'] / b['peak_kib']:.2f}×"
                if b["delta_kib"] > 0:
                    delta_ratio = f"{max(o['delta_kib'], 0) / b['delta_kib']:.2f}×"
            mem.add_row(f"[bold]{entry['op']}[/] {escape(entry['case'])}", str(entry["runs"]), *cells, ratio, delta_ratio)
        console.print(mem)


def _row_json(row: Row) -> dict:
    t = row.timing
    return {
        "op": row.case.op, "case": row.case.name, "params": _jsonable(row.case.params), "impl": row.impl,
        "median_s": t.median, "min_s": min(t.samples), "iqr_share": t.spread, "samples_s": t.samples,
        "calls_per_sample": t.calls_per_sample, "load_average": row.case.load_average,
        "case_seconds": row.case.seconds,
        "ratio": row.ratio, "ratio_vs": row.case.baselines.get(row.impl, "built-in"), "output_mismatch": row.mismatch,
        "targets": [{"text": tg.text, "against": list(tg.against), "limit": tg.limit, "value": v, "ok": ok}
                    for tg, v, ok in row.verdicts],
    }


# --------------------------------------------------------------------------------------------
# Entry point


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ortops bench",
                                     description="Time ortops' ops in ONNX Runtime against ORT's built-ins, "
                                                 "OpenVINO and the NumPy references.")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer rounds and scaling points (< 2 min on 2 cores)")
    size.add_argument("--smoke", action="store_true", help="tiny shapes: checks the harness, measures nothing")
    parser.add_argument("--out", default="bench-out", help="output directory (default: ./bench-out)")
    parser.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS), help="only these ops (default: all)")
    parser.add_argument("--repeat", type=int, metavar="N",
                        help="rounds of interleaved samples per case, exactly (default: 15, 5 with --quick; "
                             "cheap cases then get up to 4x more within a time budget)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """``ortops bench`` and ``scripts/bench.py``; returns the exit status (0 unless it fails)."""
    from rich.console import Console
    from rich.markup import escape

    import ortops

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:  # ``ortops bench -- --quick``: argparse.REMAINDER keeps the separator
        argv = argv[1:]
    args = build_parser().parse_args(argv)
    config = CONFIGS["smoke" if args.smoke else "quick" if args.quick else "full"]
    rounds = args.repeat or config.rounds
    if rounds < 1:
        raise SystemExit("--repeat must be at least 1")
    ops = [op for op in OPS if op in args.ops]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    console = Console(record=True, width=None if sys.stdout.isatty() else 150)
    start = time.perf_counter()
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None

    ortops.register()
    have_openvino = importlib.util.find_spec("openvino") is not None
    notes = [] if have_openvino else ["openvino is not installed (pip install 'ortops[openvino]'): no OpenVINO rows"]
    cases = _matrix(config, ops, have_openvino)
    rows: list[Row] = []
    with console.status("") as spinner:
        def status(text: str) -> None:
            spinner.update(f"[dim]{text}[/] ({time.perf_counter() - start:.0f} s)")

        phases = {}
        for case in cases:
            status(case.id)
            rows += _run_case(case, config, rounds, adaptive=args.repeat is None)
        _judge(rows)
        phases["matrix"] = time.perf_counter() - start
        scaling = _run_scaling(ops, config, min(rounds, config.scaling_rounds), args.repeat is None, status)
        phases["scaling"] = time.perf_counter() - start - phases["matrix"]
        memory = _run_memory(ops, config, status)
        phases["memory"] = time.perf_counter() - start - phases["matrix"] - phases["scaling"]

    title = (f"ortops bench --{config.mode}: {platform.platform()}, {os.cpu_count()} CPUs, "
             f"onnxruntime {_version('onnxruntime')}")
    plot_note = _plot_scaling(scaling, out / "scaling.png", title) if scaling else "no scaling series"
    if plot_note:
        notes.append(plot_note)
    seconds = time.perf_counter() - start
    _print_tables(rows, memory, console)
    for op in ops:
        console.print(f"[dim]built-in {op}:[/] {escape(BUILT_INS[op])}")
    case_notes: dict[str, list[str]] = {}
    for case in cases:
        for note in case.notes:
            case_notes.setdefault(note, []).append(case.id)
    for note in notes:
        console.print(f"[dim]note:[/] {escape(note)}")
    for note, ids in case_notes.items():
        console.print(f"[dim]note:[/] {escape(note)}: " + escape(ids[0] if len(ids) == 1 else f"{len(ids)} cases"))
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    report = {
        "machine": _machine(),
        "config": dict(_jsonable(vars(config)), rounds=rounds, ops=ops),
        "load_average": {"start": load_before, "end": load_after},
        "seconds": seconds,
        "phase_seconds": phases,
        "rows": [_row_json(row) for row in rows],
        "scaling": {"description": _SCALING_OPS, "series": scaling},
        "memory": memory,
        "built_ins": {op: BUILT_INS[op] for op in ops},
        "notes": notes,
        "case_notes": case_notes,
    }
    (out / "bench.json").write_text(json.dumps(report, indent=1) + "\n")
    files = [out / "bench.json", out / "bench.txt"] + ([out / "scaling.png"] if not plot_note else [])
    load = f" (load average {load_before[0]:.1f} -> {load_after[0]:.1f})" if load_before and load_after else ""
    console.print(f"{len(rows)} rows in {seconds:.0f} s{load}. Wrote {', '.join(str(f) for f in files)}")
    console.save_text(str(out / "bench.txt"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
