"""Known divergences, as data: one table of topics and one of divergences, each row with its
reason, the runtime it is about and the versions it was observed with.

Each op's own rows live in its folder (``ortops/ops/<op>/divergences.py``, reached through
``OpSpec.divergences``); this module holds the topics and the rows about every op, and collects
the rest. The divergence matrix of ``report.md`` (:mod:`ortops.conformance.matrix`), the OpenVINO oracle
(:mod:`ortops.conformance.openvino_oracle`) and the op judges read these rows; a verdict carries
its topic as a field (``Check.topic``), never inside a string. A row is something that was run
and seen with the versions it names: a newer release may change it, and the conformance run
observes it anew on every case (an explained verdict becomes agree, never a failure).
"""

from __future__ import annotations

from typing import NamedTuple

from .ops import OPS
from .ops.spec import NCNN_OBSERVED, OPENVINO_OBSERVED, Divergence

__all__ = ["Topic", "Divergence", "OPENVINO_OBSERVED", "NCNN_OBSERVED", "TOPICS", "MATRIX_ROWS", "DIVERGENCES", "ERROR_TOPICS", "topic", "divergence",
           "reason"]


class Topic(NamedTuple):
    """A semantic topic: what it is, and what each spec says (the matrix's spec columns)."""

    key: str
    what: str
    onnx_spec: str = ""
    openvino_spec: str = ""
    ncnn: str = ""
    in_matrix: bool = False  # a row of the divergence matrix even when no case hit it


TOPICS: tuple[Topic, ...] = (
    Topic('ties', 'equal values: which of them is selected or first where the spec leaves it open',
          'TopK: the lower index wins ties (sorted or not)', 'TopK-11: order kept only with stable=1; sort=none undefined', 'ArgMax: partial_sort on (value, index), higher index first', True),
    Topic('nan', 'NaN ordering and propagation, implementation-defined in the specs',
          'not specified', 'not specified', 'not specified (float comparison)', True),
    Topic('integer-mean-rounding', "OpenVINO CPU's integer mean truncates toward zero; the spec (and ortops) floor",
          'no mean reduction in ScatterElements', 'ScatterElementsUpdate-12: mean rounds toward -inf', 'n/a', True),
    Topic('narrow-type-overflow', 'OpenVINO CPU accumulates integer sums for the mean in the element type, which overflows',
          'not specified', 'not specified (mean: exact value, floored)', 'n/a', True),
    Topic('uint64', "uint64 data, which OpenVINO's CPU plugin computes in int32",
          'TopK-11/24 allow uint64', 'TopK/ScatterElementsUpdate: any numeric type', 'float32 only', True),
    Topic('float16-bfloat16', 'float16/bfloat16 data: types the PyOp bridge cannot carry or NumPy lacks',
          'TopK-11 allows float16; TopK-24 adds bfloat16', 'any numeric type', 'float32 only', True),
    Topic('k-range', 'k or topk outside [1, size] (undefined in the specs; ortops raises OpError)',
          "K must be positive (k=0 accepted by the schema's shape inference)", 'K in [1, shape[axis]], else undefined', 'topk <= size not checked: undefined behaviour', True),
    Topic('out-of-range-indices', 'an index outside [-d, d-1] (ortops raises OpError)',
          'indices in [-s, s-1]; outside is an error', 'indices in [-d, d-1]; outside raises', 'n/a', True),
    Topic('ncnn-tie-rule', "ncnn ArgMax's higher-index-first rule among equal values",
          'ArgMax: first index unless select_last_index=1', 'n/a', 'higher index first', True),
    Topic('float64-precision', "float64 data, which OpenVINO's CPU plugin computes in float32",
          'double is an allowed type of TopK, ScatterElements and ArgMax', 'TopK-11, ScatterElementsUpdate-12: any numeric type (f64 included)', 'float32 only', False),
    Topic('int32-narrowing', "int64 and uint32 data, which OpenVINO's CPU plugin computes in int32 (wrapping)",
          'int64 and uint32 are allowed types of TopK, ScatterElements and ArgMax', 'any numeric type (i64, u32 included)', 'float32 only', False),
    Topic('float-accumulation', 'float32 sums/products of several updates: the precision of the accumulation',
          'ScatterElements: accumulation order and precision not specified', 'ScatterElementsUpdate-12: not specified', 'n/a', False),
    Topic('float-index-precision', "a flat index above 2**24 cannot be exact in ncnn ArgMax's float32 output",
          'ArgMax: int64 indices', 'n/a', 'indices written as float32 (exact up to 2**24)', False),
    Topic('near-ties', "values within the tolerance but not equal, ranked differently: the runtimes' inputs differ "
          "by less than the tolerance and each runtime's selection is exact for its own input",
          '', '', '', False),
    Topic('invalid-input', 'an input ortops rejects with OpError for another reason (shape, rank, axis, dtype)',
          '', '', '', False),
    Topic('openvino-missing', 'the openvino package is not installed',
          '', '', '', False),
    Topic('ncnn-missing', "the real ncnn runtime with ortops' layers is not installed (ortops install-oracle ncnn)",
          '', '', '', False),
)
_BY_KEY = {t.key: t for t in TOPICS}
#: The topics the divergence matrix always shows, in order.
MATRIX_ROWS: tuple[str, ...] = tuple(t.key for t in TOPICS if t.in_matrix)


#: The rows about every op; each op's own rows are in its folder (``OpSpec.divergences``).
_COMMON: tuple[Divergence, ...] = (
    Divergence('nan', None, "openvino",
               "NaN order is implementation-defined (OpenVINO and ncnn specs); OpenVINO CPU does not rank NaN above +inf as ortops does (TopK's output is not even sorted; max/min reductions skip NaN updates)",
               OPENVINO_OBSERVED),
    Divergence('uint64', None, "openvino",
               "OpenVINO's CPU plugin computes uint64 data in int32: values wrap to their low 32 bits, read as signed; ortops is exact over the full uint64 range",
               OPENVINO_OBSERVED),
    Divergence('int32-narrowing', None, "openvino",
               "OpenVINO's CPU plugin computes int64 and uint32 data in int32: values wrap to their low 32 bits, read as signed; ortops is exact in the element type",
               OPENVINO_OBSERVED),
    Divergence('float64-precision', None, "openvino",
               "OpenVINO's CPU plugin computes float64 in float32 (inputs rounded to float32, results widened back); ortops computes in float64",
               OPENVINO_OBSERVED),
    Divergence('ties', None, "openvino-onnx",
               "OpenVINO's ONNX frontend reads ONNX TopK as its TopK-11 with stable=false: among equal values it does not put the lower index first, which ONNX TopK specifies and the standalone lowering relies on (ONNX Runtime does); OpenVINO returns another valid selection (the same values, other indices among equal ones)",
               OPENVINO_OBSERVED),
)
#: Every known divergence: the rows about every op, then each op's own.
DIVERGENCES: tuple[Divergence, ...] = _COMMON + tuple(row for op in OPS for row in op.divergences)

#: ``OpError.kind`` -> the topic of a case ortops rejects (any other kind: ``"invalid-input"``).
ERROR_TOPICS = {"k_range": "k-range", "index_range": "out-of-range-indices", "precision": "float-index-precision"}


def topic(key: str) -> Topic:
    """The topic ``key``; KeyError for an unknown one."""
    return _BY_KEY[key]


def divergence(topic_key: str, runtime: str, op: str | None = None) -> Divergence:
    """The row for ``topic_key`` and ``runtime`` (an op's own row first, then the one for every op)."""
    rows = [r for r in DIVERGENCES if r.topic == topic_key and r.runtime == runtime and r.op in (op, None)]
    if rows:
        return min(rows, key=lambda row: row.op is None)
    raise KeyError(f"no known divergence {topic_key!r} of {runtime} for {op or 'any op'}")


def reason(topic_key: str, runtime: str, op: str | None = None, default: str | None = None) -> str:
    """The reason of :func:`divergence`, as the report shows it; ``default`` where there is no row
    (KeyError without one)."""
    try:
        return divergence(topic_key, runtime, op).reason
    except KeyError:
        if default is None:
            raise
        return default
