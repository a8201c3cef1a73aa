"""The conformance report: ``report.json``, ``report.md``, ``report.html`` and the console. One
:class:`ortops.reporting.Document` (:func:`document`) holds the totals, the summary per runtime
pair (:data:`PAIRS`), the divergence matrix (:mod:`.matrix`) and the cases that do not agree with
their concrete differences; the HTML page adds a table of all cases. Reading it:
docs/conformance.md.
"""

from __future__ import annotations

import json
import pathlib
import platform
from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from .. import reporting
from ..reporting import Cell, Document, Grid, Heading, PairSummary, Paragraph, Table, TopicCount
from ..arrays import jsonable, preview
from . import matrix
from ..reporting.document import STATUSES as SHOWN
from ..verdicts import SOURCES, STATUSES, Check
from .cases import Result, combine
from .lowering import OPENVINO as OPENVINO_PATH

__all__ = ["summary", "write_reports", "print_summary", "pair_summaries", "pair_of", "PAIRS", "document",
           "INLINE_INPUT_ITEMS"]

#: The runtime pairs of the summary, in order.
PAIRS = ("ortops vs the reference", "ortops vs ORT built-ins", "ortops vs OpenVINO", "ortops vs ONNX vectors",
         "ortops vs the seeds", "ortops vs other expected outputs", "ortops vs real ncnn",
         "lowered paths vs the reference", "standalone lowering in OpenVINO vs the reference")
#: Inputs with at most this many elements are printed whole in the non-agree table.
INLINE_INPUT_ITEMS = 32

_PAIR_NOTES = {
    "ortops vs OpenVINO": "not run: add --oracle openvino (needs the openvino extra)",
    "ortops vs ONNX vectors": "no case from onnx-backend-test in this run",
    "ortops vs the seeds": "no case from seed-example in this run",
    "ortops vs real ncnn": "not run: add --oracle ncnn (build it first: ortops install-oracle ncnn)",
    "standalone lowering in OpenVINO vs the reference": "not run: add --oracle openvino (needs the openvino extra)",
}


def summary(results: Sequence[Result]) -> dict[str, int]:
    """``{"total": n, "agree": n, "skipped": n, "explained": n, "unexplained": n}`` in cases."""
    counts = Counter(r.status for r in results)
    return {"total": len(results), **{s: counts.get(s, 0) for s in STATUSES}}


_FAMILY_PAIRS = {"reference": PAIRS[0], "ortops": PAIRS[0], "onnxruntime": PAIRS[1], "openvino": PAIRS[2],
                 "ncnn": PAIRS[6]}
_SOURCE_PAIRS = {"onnx-backend-test": PAIRS[3], "seed-example": PAIRS[4]}


def pair_of(check: Check, result: Result) -> str:
    """The runtime pair (one of :data:`PAIRS`) a check belongs to: its oracle family; a check
    against outputs written by someone else by the case's source."""
    if check.family == "lowered":
        return PAIRS[8] if check.oracle == OPENVINO_PATH else PAIRS[7]
    return _FAMILY_PAIRS.get(check.family) or _SOURCE_PAIRS.get(result.case.source, PAIRS[5])


def _pair_checks(results: Sequence[Result]) -> dict[str, list[tuple[Result, list[Check]]]]:
    by_pair: dict[str, list[tuple[Result, list[Check]]]] = {p: [] for p in PAIRS}
    for r in results:
        grouped: dict[str, list[Check]] = defaultdict(list)
        for c in r.checks:
            grouped[pair_of(c, r)].append(c)
        for pair, checks in grouped.items():
            by_pair[pair].append((r, checks))
    return by_pair


def pair_summaries(results: Sequence[Result]) -> list[PairSummary]:
    """One :class:`ortops.reporting.PairSummary` per pair of :data:`PAIRS` (pairs without a
    case are kept only when a note says why): counts in cases, then each (status, topic,
    reason) of the explained and skipped cases with how many cases it covers. A case counts
    once per pair; its topics may be several."""
    out = []
    for pair, items in _pair_checks(results).items():
        counts: Counter = Counter()
        cases: dict[tuple[str, str, str], set[tuple[str, str]]] = defaultdict(set)  # key -> (name, op)
        for r, checks in items:
            status = combine(checks, alone=pair != PAIRS[0])[0]
            counts[status] += 1
            for c in checks:
                if status != "agree" and c.status == status:
                    topic = c.topic or ("not comparable" if status == "skipped" else "no topic")
                    cases[(status, topic, c.reason)].add((r.case.name, r.case.op))
        if not items and pair not in _PAIR_NOTES:
            continue
        order = ("unexplained", "explained", "skipped")
        lines = [TopicCount(topic, len(named), reason, status, ", ".join(sorted({op for _, op in named})))
                 for (status, topic, reason), named in
                 sorted(cases.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1], -len(kv[1])))]
        out.append(PairSummary(pair, {s: counts.get(s, 0) for s in STATUSES}, lines,
                               note="" if items else _PAIR_NOTES[pair]))
    return out


def _environment() -> dict[str, str]:
    packages = ("onnx", "onnxruntime", "onnxruntime-extensions", "numpy", "rapidocr-onnxruntime", "openvino", "ncnn")
    return {"python": platform.python_version(), "machine": platform.machine(),
            **{p: reporting.version(p) or "not installed" for p in packages}}


def _inputs_text(result: Result) -> str:
    """The case's inputs: whole when small (:data:`INLINE_INPUT_ITEMS`), else dtype and shape."""
    parts = []
    for name, array in result.case.inputs.items():
        array = np.asarray(array)
        dtype = result.case.dtype if name == "data" else str(array.dtype)
        if array.size <= INLINE_INPUT_ITEMS:
            parts.append(f"{name} ({dtype}) = {preview(array)}")
        else:
            parts.append(f"{name}: {dtype} {list(array.shape)}")
    return "; ".join(parts)


def _attributes(result: Result) -> str:
    return ", ".join(f"{k}={v}" for k, v in jsonable(result.case.attrs).items())


def _non_agree_rows(results: Sequence[Result]) -> list[list[Cell]]:
    rows = []
    for r in results:
        if r.status == "agree":
            continue
        for c in r.checks:
            if c.status == "agree":
                continue
            d = c.difference
            first = "" if d is None else d.first_position + (
                f": {d.left} {d.left_at} vs {d.right} {d.right_at}" if d.first_index is not None else "")
            rows.append([Cell(r.case.name, code=True), Cell(r.case.op), Cell(r.case.dtype),
                         Cell(c.status, status=c.status), Cell(c.oracle), Cell(c.topic or ""),
                         Cell(c.reason if not c.topic or c.status == "unexplained" else f"see `{c.topic}` above"),
                         Cell(_inputs_text(r)), Cell(_attributes(r)),
                         Cell("" if d is None else (d.output or "outcome")), Cell(first),
                         Cell("" if d is None else f"{d.left}: {d.left_value}"),
                         Cell("" if d is None else f"{d.right}: {d.right_value}")])
    return rows


NON_AGREE_COLUMNS = ("case", "op", "dtype", "verdict", "oracle", "topic", "reason", "input", "attributes",
                     "output", "first difference", "first side returned", "second side returned")


def _by_source(results: Sequence[Result]) -> list[list]:
    """Per op and source with a case: how many cases got each verdict."""
    groups = Counter((r.case.op, r.case.source, r.status) for r in results)
    return [[op, source, *[groups.get((op, source, st), 0) for st in SHOWN]]
            for op in sorted({r.case.op for r in results}) for source in SOURCES
            if any(groups.get((op, source, st)) for st in SHOWN)]


def _grid(results: Sequence[Result]) -> Grid:
    rows = []
    for topic, cells in matrix.matrix(results).items():
        row = [Cell(topic)]
        for column in matrix.COLUMNS:
            value = cells[column]
            row.append(Cell(value) if isinstance(value, str) else Cell(value.text(), status=value.status))
        rows.append(row)
    legend = [("agree", "every case of the row agrees"), ("explained", "some case differs for a known reason"),
              ("skipped", "some case could not be compared"), ("unexplained", "some case differs, unexplained"),
              ("none", "no case")]
    return Grid(["topic", *matrix.COLUMNS], rows, id="matrix", legend=legend)


def _real_model_finding(details: dict) -> str:
    for key, label in (("mean_confidence_per_char", "mean confidence per character"),
                       ("peak_confidence_per_char", "peak confidence per character")):
        if key in details:
            pairs = details[key]
            low = min(pairs, key=lambda p: p[1])
            return f"{label}: lowest {low[0]!r} {low[1]:.4f} of {len(pairs)}"
    if "most_confident" in details:
        m = details["most_confident"]
        return f"most confident: step {m['step']}, class {m['class']} ({m['character']!r}), p={m['value']:.5f}"
    if "top5" in details:
        return "top 5 over the whole tensor: " + ", ".join(f"step {m['step']} {m['character']!r}"
                                                          for m in details["top5"])
    return f"per-step top-5 candidates over {details.get('steps', '?')} steps"


def document(results: Sequence[Result], data: dict) -> Document:
    """The report as a :class:`ortops.reporting.Document` (``data``: report.json's top level)."""
    s = data["summary"]
    doc = Document("ortops conformance report")
    doc.add(Paragraph(f"{s['total']} cases: **{s['agree']} agree**, {s['explained']} explained, {s['skipped']} "
                      f"skipped, **{s['unexplained']} unexplained**. Run time {data['seconds']} s."),
            Paragraph("Environment: " + ", ".join(f"{k} {v}" for k, v in data["environment"].items()) + "."),
            Paragraph("How to read it: each case runs ortops' op in ONNX Runtime and is judged by every oracle it "
                      "has: the pure-NumPy reference of the spec (always), the built-in ONNX ops it maps to, "
                      "OpenVINO (with `--oracle openvino`), a spec's worked example or ONNX's own test vectors. "
                      "`agree`: every oracle that could judge agrees. `explained`: a known divergence, with its "
                      "reason. `skipped`: an oracle could not run (the reason says why). `unexplained`: a "
                      "difference nobody has explained, a bug until shown otherwise. Every count below is in "
                      "cases. `report.json` lists every case with all its checks."))
    for note in data["notes"]:
        doc.add(Paragraph(f"Note: {note}"))
    doc.add(Heading("Summary per runtime pair"),
            Paragraph("Each case counts once per pair, with the worst verdict of that pair's checks (a case "
                      "agrees with a pair when one of its checks agrees and none differs). Under each pair: the "
                      "topics of its explained and skipped cases, with how many cases and why (a case may count "
                      "under several topics)."),
            *reporting.summary_blocks(pair_summaries(results)))
    doc.add(Heading("Divergence matrix"),
            Paragraph("Rows: topics, found from each case's inputs (values tie, NaN, a dtype, an integer mean, an "
                      "index or k out of range...) and from the topics its checks were judged under. ORT built-in, "
                      "OpenVINO runtime and ortops: how many of the row's **cases** got each verdict in this run "
                      "(ortops: against the NumPy reference of the spec, and its own checks such as raising "
                      "OpError), then the reasons of the verdicts judged under the row's own topic; cases "
                      "judged under another topic are counted under it. Spec columns quote the op "
                      "specifications (OpenVINO's TopK-11 and ScatterElementsUpdate-12, ONNX's TopK, "
                      "ScatterElements and ArgMax); ncnn is its algorithm (not run: the pip wheel has no ArgMax "
                      "layer)."),
            _grid(results))
    rows = _non_agree_rows(results)
    doc.add(Heading("Cases that do not agree"),
            Paragraph(f"{sum(r.status != 'agree' for r in results)} cases, one row per check that does not agree. "
                      f"Inputs of at most {INLINE_INPUT_ITEMS} elements are shown whole; `first difference` is "
                      "the first differing position in C order and the two elements there; the two `returned` "
                      "columns name each side (ortops first, unless two other oracles were compared) and print "
                      "the compared output, or the outcome (an OpError, a missing kernel)."),
            Table(list(NON_AGREE_COLUMNS), rows, id="non-agree", interactive=True,
                  filter_columns=["op", "dtype", "verdict", "topic"]))
    doc.add(Heading("By op and source"), Table(["op", "source", *SHOWN], _by_source(results), id="by-source"))
    real = [r for r in results if r.case.source == "real-model" and "rendered" in r.case.details]
    if real:
        doc.add(Heading("Real model"),
                Paragraph("The PP-OCRv4 recogniser reads a rendered line; its softmax [1, T, 6625] feeds ortops' "
                          f"ops. Font: {real[0].case.details.get('font', '?')}."),
                Table(["case", "op", "rendered", "decoded", "what the op found", "status"],
                      [[Cell(r.case.name, code=True), r.case.op, Cell(r.case.details["rendered"], code=True),
                        Cell(r.case.details.get("decoded", ""), code=True), _real_model_finding(r.case.details),
                        Cell(r.status, status=r.status)] for r in real], id="real-model"))
    return doc


def _all_cases_table(results: Sequence[Result]) -> Table:
    rows = [[Cell(r.case.name, code=True), r.case.op, r.case.source, r.case.dtype,
             Cell(str(list(np.shape(r.case.inputs.get("data", next(iter(r.case.inputs.values()))))))),
             *[Cell(v, status=v) for v in (r.oracles().get(f, ("", ""))[0] for f in
                                           ("reference", "onnxruntime", "openvino", "expected"))],
             Cell(r.status, status=r.status), Cell(round(r.seconds, 4), sort=r.seconds)] for r in results]
    return Table(["case", "op", "source", "dtype", "shape", "reference", "ORT", "OpenVINO", "expected", "status",
                  "seconds"], rows, id="all-cases", interactive=True,
                 filter_columns=["op", "source", "dtype", "status"])


def write_reports(results: Sequence[Result], out_dir: pathlib.Path, notes: Sequence[str] = (), seconds: float = 0.0):
    """Write ``report.json``, ``report.md`` and ``report.html`` into ``out_dir`` (created if
    needed); returns the paths of report.json and report.md."""
    out_dir = pathlib.Path(out_dir)
    data = {
        "summary": summary(results),
        "pairs": [{"pair": p.name, **p.counts, "cases": p.total, "note": p.note,
                   "topics": [{"topic": t.topic, "ops": t.scope.split(", "), "status": t.status, "cases": t.count,
                               "reason": t.reason}
                              for t in p.topics]} for p in pair_summaries(results)],
        "environment": _environment(),
        "seconds": round(seconds, 2),
        "notes": list(notes),
        "cases": [r.to_json() for r in results],
    }
    doc = document(results, data)
    page = Document(doc.title, [*doc.blocks, Heading("All cases"),
                                Paragraph("Every case of the run with each oracle family's verdict (sortable, "
                                          "filterable)."), _all_cases_table(results)])
    reporting.write_files({out_dir / "report.json": json.dumps(data, indent=1, default=str) + "\n",
                           out_dir / "report.md": reporting.markdown.render(doc),
                           out_dir / "report.html": reporting.html.render(page)})
    return out_dir / "report.json", out_dir / "report.md"


def print_summary(results: Sequence[Result], console=None, notes: Sequence[str] = ()) -> None:
    """The console summary: counts per op and source, the per-pair summary, then every
    unexplained case. On a pipe or in a CI log (:func:`ortops.reporting.console.is_plain`),
    plain whole lines: ``conformance total=... agree=...`` is the line to grep."""
    out = reporting.console
    console = console or out.make_console()
    rows = _by_source(results)
    s = summary(results)
    rows.append(["all", "", *(s[st] for st in SHOWN)])
    out.print_table(console, Table(["op", "source", *SHOWN], rows), title="ortops conformance")
    out.print_pairs(console, "conformance", pair_summaries(results))
    for note in notes:
        out.print_line(console, f"note: {note}")
    for r in results:
        if r.status == "unexplained":
            out.print_line(console, f"unexplained {r.case.op} {r.case.name}: {r.reason}")
    out.print_line(console, "conformance " + " ".join(f"{k}={s[k]}" for k in ("total", *SHOWN)))
