"""Conformance cases and verdicts, as data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..reporting.difference import Difference, jsonable

__all__ = ["Case", "Check", "Result", "STATUSES", "SOURCES", "ORACLE_FAMILIES", "combine", "oracle_family"]

#: Verdicts, from best to worst.
STATUSES = ("agree", "skipped", "explained", "unexplained")
#: Where a case comes from (its ``source`` field).
SOURCES = ("seed-example", "onnx-backend-test", "generated", "real-model")


#: Who judges: the NumPy reference of the spec, ORT's built-in ops, the OpenVINO runtime,
#: outputs written by someone else (spec examples, ONNX's vectors), ortops' own checks, the
#: lowered paths (guarded and standalone) against the reference, and the real ncnn runtime
#: (``--oracle ncnn``).
ORACLE_FAMILIES = ("reference", "onnxruntime", "openvino", "expected", "ortops", "lowered", "ncnn")


def oracle_family(oracle: str) -> str:
    """The family of an oracle name, e.g. ``"onnxruntime TopK-11"`` -> ``"onnxruntime"``."""
    if oracle == "reference":
        return "reference"
    if oracle.startswith("lowered"):
        return "lowered"
    if oracle.startswith("openvino"):
        return "openvino"
    if oracle == "ncnn":
        return "ncnn"
    if oracle.startswith("onnxruntime") or "inside the OCR graph" in oracle:
        return "onnxruntime"
    if oracle in ("ortops", "index dtype", "output dtype"):
        return "ortops"
    return "expected"


@dataclass
class Case:
    """One conformance case: an op, named inputs with explicit dtypes, attributes, a source.

    ``expected`` holds outputs written by someone else (a spec's worked example, ONNX's
    backend test vectors), keyed by output name; ``expected_from`` names that oracle. ``onnx_versions`` lists the standard versions to run side by side.
    ``details`` carries what the report should show (e.g. the decoded OCR text).
    """

    name: str
    op: str
    source: str
    inputs: dict[str, np.ndarray]
    attrs: dict[str, Any]
    expected: dict[str, np.ndarray] | None = None
    expected_from: str = ""
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
    difference as data (:class:`ortops.reporting.Difference`: what each side returned, the
    first differing position). Without a ``detail``, the difference's one-line description
    becomes it. The runner gives every non-agree check a difference
    (:func:`ortops.conformance.compare.complete_differences`).
    """

    oracle: str
    status: str
    reason: str = ""
    detail: str = ""
    topic: str | None = None
    difference: Difference | None = None

    def __post_init__(self):
        if self.difference is not None and not self.detail:
            self.detail = self.difference.describe()
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {STATUSES}")
        if self.status != "agree" and not self.reason:
            raise ValueError(f"a {self.status!r} verdict from {self.oracle} needs a reason")


@dataclass
class Result:
    case: Case
    checks: list[Check]
    seconds: float

    @property
    def status(self) -> str:
        return combine(self.checks)[0]

    @property
    def reason(self) -> str:
        return combine(self.checks)[1]

    def oracles(self) -> dict[str, tuple[str, str]]:
        """Each oracle family that judged the case: (status, reason)."""
        families: dict[str, list[Check]] = {}
        for check in self.checks:
            families.setdefault(oracle_family(check.oracle), []).append(check)
        verdicts = {}
        for family, checks in families.items():
            status, reason = combine([Check("reference", "agree"), *checks]) if family != "reference" else combine(checks)
            verdicts[family] = (status, reason)
        return verdicts

    def to_json(self) -> dict[str, Any]:
        """The case and its verdicts as JSON-ready data (``report.json``'s ``cases`` items)."""
        c = self.case
        data = c.inputs.get("data", next(iter(c.inputs.values())))
        return {
            "name": c.name,
            "op": c.op,
            "source": c.source,
            "status": self.status,
            "reason": self.reason,
            "dtype": c.dtype,
            "shape": list(data.shape),
            "attributes": {k: (v.item() if isinstance(v, np.generic) else v) for k, v in c.attrs.items()},
            "oracles": {family: status for family, (status, _) in self.oracles().items()},
            "oracle_reasons": {family: reason for family, (status, reason) in self.oracles().items() if reason},
            "checks": [{"oracle": k.oracle, "family": oracle_family(k.oracle), "status": k.status,
                        "reason": k.reason, "detail": k.detail, "topic": k.topic,
                        "difference": k.difference.to_json() if k.difference else None} for k in self.checks],
            "details": jsonable(c.details),
            "seconds": round(self.seconds, 4),
        }


def combine(checks: list[Check]) -> tuple[str, str]:
    """A case's status and reason from its checks.

    unexplained if any check is; else explained if any is; else agree if some oracle other
    than the reference agreed; else skipped (only the reference could judge).
    """
    for status in ("unexplained", "explained"):
        hits = [c for c in checks if c.status == status]
        if hits:
            return status, "; ".join(f"{c.oracle}: {c.reason}" for c in hits)
    others = [c for c in checks if c.oracle != "reference"]
    if any(c.status == "agree" for c in others) or not others:
        return "agree", ""
    return "skipped", "; ".join(f"{c.oracle}: {c.reason}" for c in others if c.status == "skipped")
