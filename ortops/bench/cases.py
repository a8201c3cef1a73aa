"""The benchmark's configuration and cases: what each op is timed on (each op's own cases are
in ``ortops/ops/<op>/bench.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from ..ops import OPS as _SPECS
from ..ops.tooling import tooling
from ..timed_cases import Case, Target, dims

__all__ = ["OPS", "BUILT_INS", "Config", "CONFIGS", "Target", "Case", "OpBench", "dims", "op_bench", "matrix",
           "elements"]

#: The ops the benchmark times.
OPS = tuple(op.op_type for op in _SPECS)


@runtime_checkable
class OpBench(Protocol):
    """What ``ortops bench`` times for an op (``ortops/ops/<op>/bench.py``): ``p`` is a case's
    parameters (a dict); ``sessions`` has ``plain(model)`` and ``ortops(model)``, the timed
    sessions (:data:`ortops.bench.calls.SESSIONS`)."""

    BUILT_IN: str  # what the ``built-in`` row runs
    SCALING: str  # the scaling series
    REFERENCE_LIMITS: dict[str, int]  # mode -> the largest input the NumPy reference runs on
    TINY: dict  # the per-call overhead case

    def name(self, p: dict) -> str: ...
    def elements(self, p: dict) -> int: ...
    def inputs(self, p: dict, rng: np.random.Generator) -> dict[str, np.ndarray]: ...
    def cases(self, tiny: bool, have_openvino: bool, reference: Callable) -> list[Case]: ...
    def call(self, impl: str, p: dict, feed: dict, sessions: Any) -> Callable[[], Any] | None: ...
    def ortops_model(self, p: dict) -> Any: ...
    def ortops_feed(self, p: dict, feed: dict) -> dict: ...
    def scaling_params(self, n: int) -> dict: ...
    def memory_params(self, tiny: bool) -> dict: ...


def op_bench(op: str) -> OpBench:
    """The benchmark cases of ``op`` (``ortops/ops/<op>/bench.py``)."""
    return tooling(op).bench


#: What the ``built-in`` row of each op runs (a plain onnxruntime session).
BUILT_INS = {op: op_bench(op).BUILT_IN for op in OPS}


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


def _limits(mode: str) -> dict[str, int]:
    return {op: op_bench(op).REFERENCE_LIMITS[mode] for op in OPS}


CONFIGS = {
    "full": Config("full", rounds=15, sample_seconds=0.02, slow_seconds=0.1, slow_samples=5, very_slow_seconds=5.0,
                   scaling_sizes=(1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000),
                   scaling_rounds=7, reference_limits=_limits("full"), memory_runs=10, case_seconds=4.0),
    "quick": Config("quick", rounds=5, sample_seconds=0.004, slow_seconds=0.05, slow_samples=3, very_slow_seconds=0.5,
                    scaling_sizes=(1_000, 10_000, 100_000, 1_000_000, 10_000_000), scaling_rounds=3,
                    reference_limits=_limits("quick"), memory_runs=3, case_seconds=0.5),
    "smoke": Config("smoke", rounds=2, sample_seconds=0.001, slow_seconds=0.05, slow_samples=2, very_slow_seconds=1.0,
                    scaling_sizes=(1_000, 10_000), scaling_rounds=2, reference_limits=_limits("smoke"),
                    memory_runs=1, case_seconds=0.0, tiny_matrix=True),
}


def elements(op: str, p: dict) -> int:
    """The size of a case: elements of its main input."""
    return op_bench(op).elements(p)


#: The rows of every execution path (see ortops.bench.calls.PATHS).
_PATH_IMPLS = ("ortops PyOp", "ortops lowered", "lowered standalone")


def matrix(config: Config, ops, have_openvino: bool) -> list[Case]:
    """The cases of the benchmark, with the implementations and targets of each (``ops`` in the
    order of :data:`OPS`)."""
    cases: list[Case] = []
    for op in ops:
        limit = config.reference_limits[op]

        def reference(p, op=op, limit=limit) -> tuple[tuple[str, ...], list[str]]:
            if elements(op, p) <= limit:
                return ("reference",), []
            return (), [f"NumPy reference skipped above {limit:,} elements in --{config.mode} mode"]

        for case in op_bench(op).cases(config.tiny_matrix, have_openvino, reference):
            # Every execution path of the ortops node (ortops.bench.calls.PATHS) next to "ortops".
            at = case.impls.index("ortops") + 1
            case.impls = (*case.impls[:at], *_PATH_IMPLS, *case.impls[at:])
            cases.append(case)
    # Per-call overhead on tiny inputs, interleaved with the floor of any PyOp.
    for op in ops:
        p = op_bench(op).TINY
        case = Case(f"{op} overhead", op_bench(op).name(p), dict(p, op=op),
                    ("ortops", "built-in", "identity PyOp", "ORT Identity"))
        case.targets["ortops"] = [Target("≤1.5× identity PyOp", (case.id, "identity PyOp"), 1.5)]
        case.baselines["identity PyOp"] = "ORT Identity"
        cases.append(case)
    return cases
