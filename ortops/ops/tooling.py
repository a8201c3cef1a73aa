"""What proves each op, for the tool layers (conformance, compare, bench): its conformance cases,
its one judge and its bench cases, beside its spec.

They run models (ortops' sessions, the built-ins, OpenVINO), so they import the core that loops
over :data:`ortops.ops.OPS`. That is why they are listed here, above the op list, and not in the
spec: nothing the core imports reaches them, and no import makes a cycle. Adding an op is one
folder, one line in :data:`ortops.ops.OPS` and one here (tests/ops/test_spec.py checks that the
two lists agree).
"""

from __future__ import annotations

from types import ModuleType
from typing import NamedTuple

from . import ARG_MAX, SCATTER_ELEMENTS_UPDATE, TOP_K, by_name
from .arg_max import bench as arg_max_bench, cases as arg_max_cases, judge as arg_max_judge
from .scatter_elements_update import bench as seu_bench, cases as seu_cases, judge as seu_judge
from .spec import OpSpec
from .top_k import bench as top_k_bench, cases as top_k_cases, judge as top_k_judge

__all__ = ["OpTooling", "TOOLING", "tooling"]


class OpTooling(NamedTuple):
    """One op and the layers that prove it; each tool layer states what it needs of them as a
    ``typing.Protocol``: :class:`ortops.conformance.contracts.Suite` (``cases``),
    :class:`ortops.conformance.contracts.OpJudge` with its OpenVINO and ncnn parts, and
    :class:`ortops.compare.audit.OpAudits` (``judge``), :class:`ortops.bench.cases.OpBench`
    (``bench``)."""

    op: OpSpec
    cases: ModuleType
    judge: ModuleType
    bench: ModuleType


#: Every op of :data:`ortops.ops.OPS`, in its order, with the layers that prove it.
TOOLING: tuple[OpTooling, ...] = (
    OpTooling(TOP_K, top_k_cases, top_k_judge, top_k_bench),
    OpTooling(SCATTER_ELEMENTS_UPDATE, seu_cases, seu_judge, seu_bench),
    OpTooling(ARG_MAX, arg_max_cases, arg_max_judge, arg_max_bench),
)


def tooling(op_type: str) -> OpTooling:
    """The :class:`OpTooling` of the op whose type is ``op_type`` (e.g. a case's ``op``); KeyError
    if none (:func:`ortops.ops.by_name`)."""
    op = by_name(op_type)
    return next(t for t in TOOLING if t.op is op)
