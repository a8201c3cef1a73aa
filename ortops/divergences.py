"""Known divergences, as data: one table of topics and one of divergences, each row with its
reason, the runtime it is about and the versions it was observed with.

The divergence matrix of ``report.md`` (:mod:`ortops.conformance.matrix`), the OpenVINO oracle
(:mod:`ortops.conformance.openvino_oracle`) and the op suites read these rows; a verdict carries
its topic as a field (``Check.topic``), never inside a string. A row is something that was run
and seen with the versions it names: a newer release may change it, and the conformance run
observes it anew on every case (an explained verdict becomes agree, never a failure).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Topic", "Divergence", "TOPICS", "MATRIX_ROWS", "DIVERGENCES", "ERROR_TOPICS", "topic", "divergence",
           "reason"]


class Topic(NamedTuple):
    """A semantic topic: what it is, and what each spec says (the matrix's spec columns)."""

    key: str
    what: str
    onnx_spec: str = ""
    openvino_spec: str = ""
    ncnn: str = ""
    in_matrix: bool = False  # a row of the divergence matrix even when no case hit it


class Divergence(NamedTuple):
    """One known divergence: a runtime's behaviour on a topic, and why it is not a bug of ortops.

    ``op`` is an op type, or None for every op; ``runtime`` is ``"openvino"`` (the CPU plugin),
    ``"openvino-onnx"`` (OpenVINO running standard ONNX ops through its ONNX frontend),
    ``"onnxruntime"`` (its built-in ops), ``"onnx"`` (ONNX's own test vectors) or ``"ncnn"``;
    ``observed_with`` names the versions it was seen with.
    """

    topic: str
    op: str | None
    runtime: str
    reason: str
    observed_with: tuple[str, ...]


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

_OPENVINO = ("openvino 2026.4.1",)
_NCNN = ("ncnn 1.0.20261020",)

DIVERGENCES: tuple[Divergence, ...] = (
    Divergence('ties', 'TopK', "openvino",
               "OpenVINO CPU's TopK with sort='index' does not keep the lowest-index equal values at the k boundary, even with stable=1 (its spec's 'stable' only promises the relative order of equal elements); ortops selects as sort='value', stable=1 does, then orders by index",
               _OPENVINO),
    Divergence('nan', None, "openvino",
               "NaN order is implementation-defined (OpenVINO and ncnn specs); OpenVINO CPU does not rank NaN above +inf as ortops does (TopK's output is not even sorted; max/min reductions skip NaN updates)",
               _OPENVINO),
    Divergence('integer-mean-rounding', 'ScatterElementsUpdate', "openvino",
               "OpenVINO CPU's integer mean truncates toward zero; its spec and ortops round toward negative infinity (floor)",
               _OPENVINO),
    Divergence('narrow-type-overflow', 'ScatterElementsUpdate', "openvino",
               "OpenVINO CPU accumulates the integer mean's sum in the element type and wraps around (and truncates); ortops computes the exact sum and floors, as the spec says",
               _OPENVINO),
    Divergence('uint64', None, "openvino",
               "OpenVINO's CPU plugin computes uint64 data in int32: values wrap to their low 32 bits, read as signed; ortops is exact over the full uint64 range",
               _OPENVINO),
    Divergence('int32-narrowing', None, "openvino",
               "OpenVINO's CPU plugin computes int64 and uint32 data in int32: values wrap to their low 32 bits, read as signed; ortops is exact in the element type",
               _OPENVINO),
    Divergence('float64-precision', None, "openvino",
               "OpenVINO's CPU plugin computes float64 in float32 (inputs rounded to float32, results widened back); ortops computes in float64",
               _OPENVINO),
    Divergence('float-accumulation', 'ScatterElementsUpdate', "openvino",
               'OpenVINO CPU accumulates float32 sums/products in float32, one rounding per update; ortops accumulates in float64 and rounds once',
               _OPENVINO),
    Divergence('float16-bfloat16', 'ScatterElementsUpdate', "openvino",
               'OpenVINO computes float16 sums/products in float16; ortops in float64, rounded once',
               _OPENVINO),
    # OpenVINO running standard ONNX read by its ONNX frontend: the standalone lowering (ortops.lower).
    Divergence('ties', None, "openvino-onnx",
               "OpenVINO's ONNX frontend reads ONNX TopK as its TopK-11 with stable=false: among equal values it does not put the lower index first, which ONNX TopK specifies and the standalone lowering relies on (ONNX Runtime does); OpenVINO returns another valid selection (the same values, other indices among equal ones)",
               _OPENVINO),
    Divergence('float-index-precision', 'ArgMax', "openvino-onnx",
               "OpenVINO let the standalone model's check of the selected flat index (at most 2**24, what float32 holds exactly) pass for 2**24 + 1 and returned it as float32 rounds it (2**24); ortops raises OpError",
               _OPENVINO),
    # ONNX Runtime's built-in ops and standard-op compositions, as the op suites observe them.
    Divergence('nan', 'TopK', 'onnxruntime',
               'NaN order is implementation-defined (ONNX and OpenVINO specs); ortops ranks NaN above +inf in every mode',
               ('onnxruntime 1.31.1',)),
    Divergence('ties', 'ScatterElementsUpdate', 'onnxruntime',
               "reduction='none' with several updates for one target: the order is undefined in both specs (ortops: the last update in row-major order of indices wins)",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('float-accumulation', 'ScatterElementsUpdate', 'onnxruntime',
               'ORT accumulates float32 in float32, update by update (reproduced by a float32 simulation); ortops accumulates in float64 and rounds once, as the reference does',
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('nan', 'ScatterElementsUpdate', 'onnxruntime',
               "ORT's min/max keep `a < b ? a : b` (`a > b ? a : b`), so a NaN survives or vanishes by operand order (reproduced by a simulation); the spec's min/max propagate NaN, as ortops does",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('integer-mean-rounding', 'ScatterElementsUpdate', 'onnxruntime',
               "ONNX Div truncates integers toward zero; the spec's integer mean rounds toward -inf: a naive exporter's mean is one too high where a sum is negative and not a multiple of its count",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('narrow-type-overflow', 'ScatterElementsUpdate', 'onnxruntime',
               "the composition sums integers in int64 (uint64), which wrap where the exact sums leave that range; ortops' integer mean is exact",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('nan', 'ArgMax', 'onnxruntime',
               "ORT's ArgMax/TopK do not order NaN: ortops (its documented choice) ranks NaN above +inf, the higher index first among NaNs",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('ncnn-tie-rule', 'ArgMax', 'onnxruntime',
               "ncnn's tie rule: higher index first; ONNX TopK lower index first",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    # The real ncnn runtime (ortops install-oracle ncnn), fed without padding.
    Divergence('nan', 'ArgMax', 'ncnn',
               "ncnn's std::partial_sort of (value, index) pairs with std::greater has no consistent order with NaN (no strict weak order): where a NaN ranks depends on where it sits ([nan,1,inf,-inf,2,-0.0,0.0,3] topk=1 gave inf at index 2; topk=8 put NaN last); ortops' documented order ranks NaN above +inf, the higher index first among NaNs",
               _NCNN),
    Divergence('k-range', 'ArgMax', 'ncnn',
               "ncnn checks neither topk against the element count nor an empty input: it reads past the data and returns stray values, or breaks its heap and aborts ('double free or corruption'), or segfaults; ortops raises OpError",
               _NCNN),
    Divergence('float-index-precision', 'ArgMax', 'ncnn',
               "ncnn writes flat indices as float32: an index above 2**24 comes back silently rounded (2**24 + 1 as 2**24); ortops raises OpError",
               _NCNN),
    Divergence('ncnn-tie-rule', 'ArgMax', 'onnx',
               "ncnn's tie rule: the last of equal maxima; this ONNX vector has select_last_index=0 (the first)",
               ('onnx 1.23.2',)),
)

#: ``OpError.kind`` -> the topic of a case ortops rejects (any other kind: ``"invalid-input"``).
ERROR_TOPICS = {"k_range": "k-range", "index_range": "out-of-range-indices", "precision": "float-index-precision"}


def topic(key: str) -> Topic:
    """The topic ``key``; KeyError for an unknown one."""
    return _BY_KEY[key]


def divergence(topic_key: str, runtime: str, op: str | None = None) -> Divergence:
    """The row for ``topic_key`` and ``runtime`` (an op's own row first, then the one for every op)."""
    for row in DIVERGENCES:
        if row.topic == topic_key and row.runtime == runtime and row.op in (op, None):
            return row
    raise KeyError(f"no known divergence {topic_key!r} of {runtime} for {op or 'any op'}")


def reason(topic_key: str, runtime: str, op: str | None = None) -> str:
    """The reason of :func:`divergence`, as the report shows it."""
    return divergence(topic_key, runtime, op).reason
