"""The divergence matrix of ``report.md``: semantic topics against specs and runtimes.

Rows are topics. A case belongs to a topic because of what its inputs *are* (values tie,
NaN is present, an integer mean, an index out of range...), found by :func:`case_topics`.
The runtime columns (ORT built-in, OpenVINO runtime, ortops) are filled from the verdicts
the run observed on those cases; OpenVINO's own checks also carry the topic they were
explained under. The spec columns quote the op specifications, since a spec is read, not run.
The ncnn column holds the verdicts of the real ncnn runtime where ``--oracle ncnn`` judged a
case of the topic (its checks carry their topics too), else ncnn's algorithm as read from its
source (the pip wheel has no ArgMax layer: ``ortops install-oracle ncnn`` builds one).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence


from .. import divergences
from .cases import Case, Check, Result, oracle_family
from .compare import has_nan
from .runner import suite

__all__ = ["ROWS", "COLUMNS", "case_topics", "matrix", "markdown"]

#: The matrix's rows (:data:`ortops.divergences.MATRIX_ROWS`).
ROWS = divergences.MATRIX_ROWS
COLUMNS = ("ONNX spec", "ORT built-in", "OpenVINO spec", "OpenVINO runtime", "ncnn", "ortops")


def case_topics(case: Case) -> set[str]:
    """The topics a case exercises, read off its inputs and attributes: the dtype topics here,
    the op's own (ties, k range, integer mean, ...) from its suite's ``topics``."""
    data = case.inputs.get("data")
    if data is None:
        return set()
    topics = set()
    dtype_name = case.details.get("dtype", str(data.dtype))
    if has_nan(data):  # NaN cases are filed under "nan" only: their NaN order would hide the tie story
        topics.add("nan")
    if dtype_name == "uint64":
        topics.add("uint64")
    if dtype_name in ("float16", "bfloat16"):
        topics.add("float16-bfloat16")
    return topics | suite(case.op).topics(case)


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
    ncnn_topics: dict[str, list[Check]] = defaultdict(list)  # the real ncnn's checks, by their own topic
    for r in results:
        for c in r.checks:
            if oracle_family(c.oracle) == "openvino":
                topic = openvino_oracle.topic_of(c)
                if topic and r not in by_topic[topic]:
                    openvino_topics[topic].append(c)
            if oracle_family(c.oracle) == "ncnn" and c.topic in openvino_oracle.TOPICS and r not in by_topic[c.topic]:
                ncnn_topics[c.topic].append(c)
    extra = set(openvino_topics) | set(ncnn_topics)
    rows = list(ROWS) + sorted(t for t in extra if t not in ROWS and t in openvino_oracle.TOPICS
                               and t not in ("invalid-input", "openvino-missing", "ncnn-missing"))
    table = {}
    for topic in rows:
        cases = by_topic.get(topic, [])
        family = defaultdict(list)
        for r in cases:
            for c in r.checks:
                family[oracle_family(c.oracle)].append(c)
        row = divergences.topic(topic)
        onnx_spec, openvino_spec, ncnn = row.onnx_spec, row.openvino_spec, row.ncnn
        ours = family["reference"] + family["ortops"]
        # a real ncnn check explained under another topic counts in that topic's row only
        observed = [c for c in family["ncnn"] if c.topic in (None, topic)] + ncnn_topics.get(topic, [])
        table[topic] = {
            "ONNX spec": onnx_spec,
            "ORT built-in": _summary(family["onnxruntime"], len(cases)),
            "OpenVINO spec": openvino_spec,
            "OpenVINO runtime": _summary(family["openvino"] + openvino_topics.get(topic, []), len(cases)),
            "ncnn": _summary(observed, len(cases)) if observed else ncnn,
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
        "checks such as raising OpError), with the first non-agree reason. Spec columns quote the op specifications (OpenVINO's TopK-11 and ScatterElementsUpdate-12, ONNX's TopK, ScatterElements and ArgMax pages); ncnn: "
        + ("the verdicts of the real ncnn runtime (--oracle ncnn) where it judged a case of the topic, else its algorithm."
           if any(oracle_family(c.oracle) == "ncnn" for r in results for c in r.checks)
           else "its algorithm (not run: the pip wheel has no ArgMax layer; ortops install-oracle ncnn builds one "
                "for --oracle ncnn)."),
        "",
        "| topic | " + " | ".join(COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    for topic, cells in table.items():
        lines.append(f"| {topic} | " + " | ".join(cells[c].replace("|", "\\|") for c in COLUMNS) + " |")
    return lines
