"""The verdicts judges hand to the tool layers, as data: a conformance :class:`Case` and an
oracle's :class:`Check` on it, the concrete :class:`Difference` between two answers, and for
``ortops compare``'s node audit the :class:`Capture` of one node's tensors, the
:class:`Finding` on it and an op type's :class:`Audit`. Op folders and tool layers share these; they import nothing of either.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
import onnx

from . import arrays

__all__ = ["Case", "Check", "verdict", "Difference", "difference", "Finding", "Capture", "Audit", "STATUSES", "SOURCES", "ORACLE_FAMILIES", "oracle_family"]

#: Verdicts, from best to worst.
STATUSES = ("agree", "skipped", "explained", "unexplained")
#: Where a case comes from (its ``source`` field).
SOURCES = ("seed-example", "onnx-backend-test", "generated", "real-model")



@dataclass(frozen=True)
class Difference:
    """What two sides (``left``, ``right``: who, e.g. ``"ortops"``) returned for one output, and where
    they first differ.

    ``output`` is ``""`` for a difference of outcome (:meth:`outcome`: one side raised); the
    ``*_value`` fields are what each side returned, printed (:func:`ortops.arrays.preview`), or the
    outcome; ``first_index`` is the first differing position in C order (None when the shapes
    differ or for an outcome) and ``left_at``/``right_at`` the elements there; ``mismatches`` of
    ``size`` elements differ; ``max_abs_diff`` is the largest absolute difference where they differ
    (None when not finite); ``rtol``/``atol`` the tolerance :meth:`of` compared with (0: exact).
    """

    output: str
    left: str
    right: str
    left_value: str
    right_value: str
    first_index: tuple[int, ...] | None = None
    left_at: str | None = None
    right_at: str | None = None
    mismatches: int | None = None
    size: int | None = None
    left_shape: tuple[int, ...] | None = None
    right_shape: tuple[int, ...] | None = None
    note: str = ""
    max_abs_diff: float | None = None
    rtol: float = 0.0
    atol: float = 0.0

    @classmethod
    def of(cls, output: str, left: str, left_array: Any, right: str, right_array: Any, note: str = "", *,
           rtol: float = 0.0, atol: float = 0.0) -> "Difference":
        """The difference between two arrays (shapes may differ; NaN equals NaN). With ``rtol``
        or ``atol``, numbers within ``atol + rtol * |right|`` of each other count as equal."""
        a, b = np.asarray(left_array), np.asarray(right_array)
        first = left_at = right_at = mismatches = biggest = None
        if a.shape == b.shape:
            equal = arrays.equal(a, b)
            numeric = a.dtype.kind in "iufb" and b.dtype.kind in "iufb"
            if numeric and (rtol or atol):
                with np.errstate(all="ignore"):
                    equal |= np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol)
            differ = np.argwhere(~equal)
            mismatches = int(len(differ))
            if mismatches:
                first = tuple(int(i) for i in differ[0])
                left_at, right_at = arrays.preview(a[first]), arrays.preview(b[first])
                if numeric:
                    with np.errstate(all="ignore"):
                        gap = np.abs(a[~equal].astype(np.float64) - b[~equal].astype(np.float64)).max()
                    biggest = float(gap) if np.isfinite(gap) else None
        return cls(output, left, right, arrays.preview(a), arrays.preview(b), first, left_at, right_at, mismatches,
                   int(a.size) if a.shape == b.shape else None, tuple(a.shape), tuple(b.shape), note, biggest,
                   float(rtol), float(atol))

    @classmethod
    def outcome(cls, left: str, left_value: Any, right: str, right_value: Any, note: str = "") -> "Difference":
        """A difference of outcome: e.g. one side raised an error, the other returned arrays."""
        return cls("", left, right, arrays.preview(left_value), arrays.preview(right_value), note=note)

    @property
    def first_position(self) -> str:
        """The first differing position as text (``"(0, 3)"``), or what stands for it."""
        if self.first_index is not None:
            return str(self.first_index)
        if self.left_shape is not None and self.left_shape != self.right_shape:
            return f"shapes differ: {self.left_shape} vs {self.right_shape}"
        if self.output and self.mismatches == 0:
            return "no element differs"
        return "n/a (outcome)"

    def describe(self) -> str:
        """One line: ``indices: 2 of 6 differ, first at (3,): ortops 5 vs ORT 10``."""
        if not self.output:
            text = f"{self.left}: {self.left_value}; {self.right}: {self.right_value}"
        elif self.first_index is None:
            text = (f"{self.output}: {self.first_position}; {self.left}: {self.left_value}; "
                    f"{self.right}: {self.right_value}")
        else:
            text = (f"{self.output}: {self.mismatches} of {self.size} differ, first at {self.first_index}: "
                    f"{self.left} {self.left_at} vs {self.right} {self.right_at}")
        return f"{text} ({self.note})" if self.note else text

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples as lists)."""
        return arrays.jsonable(asdict(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Difference":
        """The inverse of :meth:`to_json`."""
        fields = dict(data)
        for key in ("first_index", "left_shape", "right_shape"):
            if fields.get(key) is not None:
                fields[key] = tuple(fields[key])
        return cls(**fields)


#: Who judges: the NumPy reference of the spec, ORT's built-in ops, the OpenVINO runtime,
#: outputs written by someone else (spec examples, ONNX's vectors), ortops' own checks, the
#: lowered paths (guarded and standalone) against the reference, and the real ncnn runtime
#: (``--oracle ncnn``).
ORACLE_FAMILIES = ("reference", "onnxruntime", "openvino", "expected", "ortops", "lowered", "ncnn")


def oracle_family(oracle: str) -> str:
    """The family of an oracle name, e.g. ``"onnxruntime TopK-11"`` -> ``"onnxruntime"`` (a
    :class:`Check` whose name does not say it carries its ``family``)."""
    if oracle in ("reference", "ncnn"):
        return oracle
    if oracle in ("ortops", "index dtype", "output dtype"):
        return "ortops"
    return next((f for f in ("lowered", "openvino", "onnxruntime") if oracle.startswith(f)), "expected")


def difference(output: str, got, want, *, right: str, left: str = "ortops", note: str = "") -> Difference:
    """The concrete difference between ``got`` (returned by ``left``) and ``want`` (by
    ``right``) for the output named ``output``, as data (:class:`Difference`)."""
    return Difference.of(output, left, got, right, want, note)




@dataclass
class Case:
    """One conformance case: an op, named inputs with explicit dtypes, attributes, a source.

    ``expected`` holds outputs written by someone else (a spec's worked example, ONNX's
    backend test vectors), keyed by output name; ``expected_from`` names that oracle and
    ``expected_family`` is its family (``"onnxruntime"`` for ORT's own nodes in a real model). ``onnx_versions`` lists the standard versions to run side by side.
    ``details`` carries what the report should show (e.g. the decoded OCR text).
    """

    name: str
    op: str
    source: str
    inputs: dict[str, np.ndarray]
    attrs: dict[str, Any]
    expected: dict[str, np.ndarray] | None = None
    expected_from: str = ""
    expected_family: str = "expected"
    onnx_versions: tuple[int, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def dtype(self) -> str:
        """The element type of the data the user's model carries: ``details["dtype"]`` when the
        case carries it in another type (bfloat16 data travels as float32 into a Cast), else
        the dtype of the ``data`` input (or the first input)."""
        data = self.inputs.get("data", next(iter(self.inputs.values())))
        return str(self.details.get("dtype", data.dtype))


@dataclass
class Check:
    """One oracle's verdict on a case: ``agree``, ``explained``, ``unexplained`` or ``skipped``.

    ``reason`` is the general cause (for an explained check, the divergence table's reason);
    ``detail`` what was observed in this case, as text; ``topic`` the divergence topic
    (:data:`ortops.divergences.TOPICS`) it was judged under; ``difference`` the concrete
    difference as data (:class:`Difference`: what each side returned, the
    first differing position). Without a ``detail``, the difference's one-line description
    becomes it. The runner gives every non-agree check a difference
    (:func:`ortops.conformance.runner.complete_differences`). ``family`` is the oracle's
    family (:data:`ORACLE_FAMILIES`), by default :func:`oracle_family` of its name.
    """

    oracle: str
    status: str
    reason: str = ""
    detail: str = ""
    topic: str | None = None
    difference: Difference | None = None
    family: str = ""

    def __post_init__(self):
        self.family = self.family or oracle_family(self.oracle)
        if self.difference is not None and not self.detail:
            self.detail = self.difference.describe()
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {STATUSES}")
        if self.status != "agree" and not self.reason:
            raise ValueError(f"a {self.status!r} verdict from {self.oracle} needs a reason")

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``checks`` of ``report.json`` and of a saved case)."""
        return {"oracle": self.oracle, "family": self.family, "status": self.status, "reason": self.reason,
                "detail": self.detail, "topic": self.topic,
                "difference": self.difference.to_json() if self.difference else None}


def verdict(oracle: str, status: str, topic: str | None, reason: str = "", detail: str = "",
            difference: Difference | None = None) -> Check:
    """A :class:`Check` by ``oracle`` with its topic, in the order a judge thinks of them."""
    return Check(oracle, status, reason, detail, topic=topic, difference=difference)


class Finding(NamedTuple):
    """Why two runtimes differ at a node: ``topic`` is a key of :data:`ortops.divergences.TOPICS`
    (None: no known topic), ``explained`` whether the data shows that topic causing the difference."""

    topic: str | None
    explained: bool
    detail: str


class Capture(NamedTuple):
    """One node's actual tensors: its inputs (as the baseline runtime computed them; None for an
    omitted optional input), and its outputs in the baseline and in the other runtime.

    ``other_inputs`` are the other runtime's inputs when they differ from the baseline's (within
    the tolerance ``atol``/``rtol``, else the node is not classified), None when bit-identical.
    """

    node: onnx.NodeProto
    inputs: Sequence[np.ndarray | None]
    base: Sequence[np.ndarray]
    other: Sequence[np.ndarray]
    base_runtime: str
    other_runtime: str
    other_inputs: Sequence[np.ndarray | None] | None = None  # None: bit-identical to ``inputs``
    atol: float = 0.0
    rtol: float = 0.0


class Audit(NamedTuple):
    """How one op type is audited.

    classify(capture) -> Finding : why the outputs differ (called only when they do, on equal inputs).
    applies(node) -> bool : whether this node's semantics can split runtimes (default: always).
    precheck(node, inputs) -> Finding or None : a problem visible in the inputs alone (k outside
        its range, an out-of-range index), used to explain a runtime that failed or crashed.
    """

    classify: Callable[[Capture], Finding]
    applies: Callable[[onnx.NodeProto], bool] | None = None
    precheck: Callable[[onnx.NodeProto, Sequence[np.ndarray | None]], Finding | None] | None = None
