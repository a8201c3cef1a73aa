"""The divergence matrix of ``report.md``: semantic topics against specs and runtimes.

Rows are topics. A case belongs to a topic because of what its inputs *are* (values tie,
NaN is present, an integer mean, an index out of range...), found by :func:`case_topics`.
The runtime columns (ORT built-in, OpenVINO runtime, ortops) are filled from the verdicts
the run observed on those cases; OpenVINO's own checks also carry the topic they were
explained under. The spec columns quote the op specifications (and ncnn's
algorithm, which cannot run here: the pip wheel has no ArgMax layer), since a spec is read,
not run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from .cases import Case, Check, Result, oracle_family

__all__ = ["ROWS", "COLUMNS", "case_topics", "matrix", "markdown"]

ROWS = ("ties", "nan", "integer-mean-rounding", "narrow-type-overflow", "uint64", "float16-bfloat16", "k-range",
        "out-of-range-indices", "ncnn-tie-rule")
COLUMNS = ("ONNX spec", "ORT built-in", "OpenVINO spec", "OpenVINO runtime", "ncnn", "ortops")

_SPEC = {
    "ties": ("TopK: the lower index wins ties (sorted or not)", "TopK-11: order kept only with stable=1; sort=none undefined",
             "ArgMax: partial_sort on (value, index), higher index first"),
    "nan": ("not specified", "not specified", "not specified (float comparison)"),
    "integer-mean-rounding": ("no mean reduction in ScatterElements", "ScatterElementsUpdate-12: mean rounds toward -inf",
                              "n/a"),
    "narrow-type-overflow": ("not specified", "not specified (mean: exact value, floored)", "n/a"),
    "uint64": ("TopK-11/24 allow uint64", "TopK/ScatterElementsUpdate: any numeric type", "float32 only"),
    "float16-bfloat16": ("TopK-11 allows float16; TopK-24 adds bfloat16", "any numeric type", "float32 only"),
    "k-range": ("K must be positive (k=0 accepted by the schema's shape inference)", "K in [1, shape[axis]], else undefined",
                "topk <= size not checked: undefined behaviour"),
    "out-of-range-indices": ("indices in [-s, s-1]; outside is an error", "indices in [-d, d-1]; outside raises",
                             "n/a"),
    "ncnn-tie-rule": ("ArgMax: first index unless select_last_index=1", "n/a", "higher index first"),
}


def _has_ties(data: np.ndarray) -> bool:
    flat = data.reshape(-1)
    return flat.size > 1 and np.unique(flat).size < flat.size


def case_topics(case: Case) -> set[str]:
    """The topics a case exercises, read off its inputs and attributes."""
    data = case.inputs.get("data")
    if data is None:
        return set()
    topics = set()
    dtype_name = case.details.get("dtype", str(data.dtype))
    has_nan = data.dtype.kind == "f" and bool(np.isnan(data).any())
    if has_nan:  # NaN cases are filed under "nan" only: their NaN order would hide the tie story
        topics.add("nan")
    if dtype_name == "uint64":
        topics.add("uint64")
    if dtype_name in ("float16", "bfloat16"):
        topics.add("float16-bfloat16")
    if case.op == "TopK":
        k, axis = int(np.asarray(case.inputs["k"]).reshape(-1)[0]), case.attrs["axis"]
        if data.ndim and -data.ndim <= axis < data.ndim and not 1 <= k <= data.shape[axis]:
            topics.add("k-range")
        elif data.size and not has_nan and _has_ties(data):
            topics.add("ties")
    elif case.op == "ArgMax":
        if not 1 <= case.attrs.get("topk", 1) <= data.size:
            topics.add("k-range")
        elif not has_nan and _has_ties(data):
            topics.add("ncnn-tie-rule")
    elif case.op == "ScatterElementsUpdate":
        reduction, integer = case.attrs.get("reduction", "none"), data.dtype.kind in "iu"
        if reduction == "mean" and integer:
            topics.add("integer-mean-rounding")
        if integer and data.dtype.itemsize <= 2 and reduction in ("sum", "prod", "mean"):
            topics.add("narrow-type-overflow")
        indices, axis = case.inputs["indices"], int(np.asarray(case.inputs["axis"]).reshape(-1)[0])
        if indices.size and data.ndim and -data.ndim <= axis < data.ndim:
            d = data.shape[axis]
            if int(indices.min()) < -d or int(indices.max()) > d - 1:
                topics.add("out-of-range-indices")
    return topics


def _summary(checks: list[Check], cases: int) -> str:
    if not checks:
        return f"not run ({cases} cases)" if cases else "no case in this run"
    counts = Counter(c.status for c in checks)
    parts = [f"{counts[s]} {s}" for s in ("agree", "explained", "skipped", "unexplained") if counts[s]]
    worst = next((c for s in ("unexplained", "explained", "skipped") for c in checks if c.status == s), None)
    text = ", ".join(parts)
    if worst is not None:
        reason = worst.reason if len(worst.reason) <= 140 else worst.reason[:137] + "..."
        text += f" — {reason}"
    return text


def matrix(results: Sequence[Result]) -> dict[str, dict[str, str]]:
    """{topic: {column: cell}} for every row of :data:`ROWS` (plus OpenVINO-only topics seen)."""
    from . import openvino_oracle

    by_topic: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        for topic in case_topics(r.case):
            by_topic[topic].append(r)
    openvino_topics: dict[str, list[Check]] = defaultdict(list)
    for r in results:
        for c in r.checks:
            if oracle_family(c.oracle) == "openvino":
                topic = openvino_oracle.topic_of(c)
                if topic and r not in by_topic[topic]:
                    openvino_topics[topic].append(c)
    rows = list(ROWS) + sorted(t for t in openvino_topics if t not in ROWS and t in openvino_oracle.TOPICS
                               and t not in ("invalid-input", "openvino-missing"))
    table = {}
    for topic in rows:
        cases = by_topic.get(topic, [])
        family = defaultdict(list)
        for r in cases:
            for c in r.checks:
                family[oracle_family(c.oracle)].append(c)
        onnx_spec, openvino_spec, ncnn = _SPEC.get(topic, ("", "", ""))
        ours = family["reference"] + family["ortops"]
        table[topic] = {
            "ONNX spec": onnx_spec,
            "ORT built-in": _summary(family["onnxruntime"], len(cases)),
            "OpenVINO spec": openvino_spec,
            "OpenVINO runtime": _summary(family["openvino"] + openvino_topics.get(topic, []), len(cases)),
            "ncnn": ncnn,
            "ortops": _summary(ours, len(cases)),
        }
    return table


def markdown(results: Sequence[Result]) -> list[str]:
    """The matrix as Markdown lines, with a legend."""
    table = matrix(results)
    lines = [
        "## Divergence matrix",
        "",
        "Rows: topics, found from each case's inputs. ORT built-in, OpenVINO runtime and ortops: the verdicts "
        "observed in this run on those cases (ortops: against the NumPy reference of the spec, and its own "
        "checks such as raising OpError), with the first non-agree reason. Spec columns quote the op specifications (OpenVINO's TopK-11 and ScatterElementsUpdate-12, ONNX's TopK, ScatterElements and ArgMax pages); ncnn is its algorithm "
        "(not run: the pip wheel has no ArgMax layer).",
        "",
        "| topic | " + " | ".join(COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    for topic, cells in table.items():
        lines.append(f"| {topic} | " + " | ".join(cells[c].replace("|", "\\|") for c in COLUMNS) + " |")
    return lines
