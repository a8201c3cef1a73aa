"""The divergence matrix of the report: topics (:data:`ortops.divergences.TOPICS`) against specs and
runtimes, counted in cases.

A case belongs to a row by what its inputs are (:func:`case_topics`: ties, NaN, a dtype, ...) or
by a topic one of its checks was judged under (:func:`row_topics`), so every runtime column of a
row counts the same cases. A runtime cell combines each case's checks of its oracle families into
one verdict and quotes only the reasons judged under the row's own topic (others: "2 explained
under `nan`"). Spec columns quote the divergence table; the ncnn column counts real ncnn's
verdicts when ``--oracle ncnn`` judged the row, else quotes ncnn's algorithm.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Sequence

from .. import divergences
from ..reporting.document import STATUSES
from ..verdicts import STATUSES as SEVERITY
from ..verdicts import Case
from .cases import Result, combine
from ..arrays import has_nan
from .runner import judge_of

__all__ = ["ROWS", "COLUMNS", "RUNTIME_COLUMNS", "SPEC_COLUMNS", "Cell", "case_topics", "row_topics", "matrix"]

#: The rows every matrix shows (:data:`ortops.divergences.MATRIX_ROWS`); other topics are
#: added when a case of the run hits them.
ROWS = divergences.MATRIX_ROWS
COLUMNS = ("ONNX spec", "ORT built-in", "OpenVINO spec", "OpenVINO runtime", "ncnn", "ortops")
#: runtime column -> the oracle families it combines (:attr:`ortops.verdicts.Check.family`).
RUNTIME_COLUMNS = {"ORT built-in": ("onnxruntime",), "OpenVINO runtime": ("openvino",),
                   "ortops": ("reference", "ortops")}
SPEC_COLUMNS = {"ONNX spec": "onnx_spec", "OpenVINO spec": "openvino_spec", "ncnn": "ncnn"}
#: Topics that say something about the run, not about semantics: never a row.
_NOT_ROWS = ("openvino-missing", "ncnn-missing")
#: dtype -> topic, read off the data the user's model carries.
_DTYPE_TOPICS = {"uint64": "uint64", "float16": "float16-bfloat16", "bfloat16": "float16-bfloat16",
                 "float64": "float64-precision", "int64": "int32-narrowing", "uint32": "int32-narrowing"}


def case_topics(case: Case) -> set[str]:
    """The topics a case exercises, read off its inputs and attributes: the dtype topics here,
    the op's own (ties, k range, integer mean, ...) from its judge's ``topics``."""
    data = case.inputs.get("data")
    if data is None:
        return set()
    topics = set()
    if has_nan(data):  # NaN cases are filed under "nan" only: their NaN order would hide the tie story
        topics.add("nan")
    if case.dtype in _DTYPE_TOPICS:
        topics.add(_DTYPE_TOPICS[case.dtype])
    return topics | judge_of(case.op).topics(case)


def row_topics(result: Result) -> set[str]:
    """The matrix rows a judged case counts in: :func:`case_topics` and every topic one of its
    checks was judged under."""
    found = case_topics(result.case) | {c.topic for c in result.checks if c.topic}
    return {t for t in found if t not in _NOT_ROWS}


@dataclass
class Cell:
    """One runtime cell: how many of the row's cases got each verdict from that runtime, the
    reasons of the verdicts judged under the row's own topic (status, cases, reason), and the
    cases whose verdict was judged under another topic (topic -> status -> cases)."""

    cases: int = 0
    counts: Counter = field(default_factory=Counter)
    reasons: list[tuple[str, int, str]] = field(default_factory=list)
    elsewhere: dict[str, Counter] = field(default_factory=dict)
    note: str = ""

    @property
    def judged(self) -> int:
        return sum(self.counts.values())

    @property
    def status(self) -> str:
        """The worst verdict counted (colours the cell), or ``"none"``."""
        return next((s for s in reversed(SEVERITY) if self.counts.get(s)), "none")

    def text(self) -> str:
        if not self.cases:
            return "no case in this run"
        if not self.judged:
            return f"not run on these {self.cases} cases" + (f" ({self.note})" if self.note else "")
        parts = [", ".join(f"{self.counts[s]} {s}" for s in STATUSES if self.counts.get(s)) or "not judged"]
        if self.judged < self.cases:
            parts[0] += f" ({self.cases - self.judged} of {self.cases} cases not judged)"
        parts += [f"{status} ({n}): {reason}" for status, n, reason in self.reasons]
        for topic, counts in sorted(self.elsewhere.items()):
            what = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts.get(s))
            parts.append(f"{what} under {topic}" if topic != "-" else
                         f"{what}, not comparable (no topic: see the summary per pair)")
        return "\n".join(parts)


def _cell(topic: str, results: Sequence[Result], families: tuple[str, ...]) -> Cell:
    cell = Cell(cases=len(results))
    reasons: Counter = Counter()
    for r in results:
        checks = [c for c in r.checks if c.family in families]
        if not checks:
            continue
        status = combine(checks, alone="reference" not in families)[0]
        cell.counts[status] += 1
        if status == "agree":
            continue
        responsible = [c for c in checks if c.status == status]
        own = [c for c in responsible if c.topic == topic]
        if own or status == "unexplained":
            for reason in dict.fromkeys(c.reason for c in (own or responsible)):
                reasons[(status, reason)] += 1
        else:
            for other in dict.fromkeys(c.topic or "-" for c in responsible):
                cell.elsewhere.setdefault(other, Counter())[status] += 1
    cell.reasons = [(status, n, reason) for (status, reason), n in
                    sorted(reasons.items(), key=lambda item: (STATUSES.index(item[0][0]), -item[1]))]
    return cell


def matrix(results: Sequence[Result]) -> dict[str, dict[str, Cell | str]]:
    """{topic: {column: cell}}: the rows of :data:`ROWS`, then any other topic a case hit.

    Spec columns are strings (the topic's row of the divergence table); runtime columns are
    :class:`Cell` objects (``cell.text()`` for the text, ``cell.status`` for the colour).
    """
    by_topic: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        for topic in row_topics(r):
            by_topic[topic].append(r)
    known = [t.key for t in divergences.TOPICS]
    rows = list(ROWS) + [t for t in known if t in by_topic and t not in ROWS]
    ran = {c.family for r in results for c in r.checks}
    table = {}
    for topic in rows:
        row = divergences.topic(topic)
        cells: dict[str, Cell | str] = {}
        for column in COLUMNS:
            # ncnn is a runtime column where the real ncnn judged the row's cases, else a spec column
            observed = _cell(topic, by_topic.get(topic, []), ("ncnn",)) if column == "ncnn" and "ncnn" in ran else None
            if observed is not None and observed.judged:
                cells[column] = observed
            elif column in SPEC_COLUMNS:
                cells[column] = getattr(row, SPEC_COLUMNS[column]) or "not a spec question"
            else:
                cells[column] = _cell(topic, by_topic.get(topic, []), RUNTIME_COLUMNS[column])
                if column == "OpenVINO runtime" and "openvino" not in ran:
                    cells[column].note = "add --oracle openvino"
        table[topic] = cells
    return table
