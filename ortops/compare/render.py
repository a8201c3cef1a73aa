"""``compare.json``, ``compare.md``, ``compare.html`` (one :class:`ortops.reporting.Document`) and the
terminal summary of ``ortops compare``."""

from __future__ import annotations

import json
import pathlib
import shutil

from ..reporting import (
    Bullets,
    Cell,
    Details,
    Document,
    Heading,
    PairSummary,
    Paragraph,
    Table,
    console,
    summary_blocks,
    write,
)
from . import groups

__all__ = ["STATUSES", "document", "print_summary", "write_reports"]

#: Verdicts of an output or a node, best first, as the report's colours show them.
STATUSES = ("agree", "explained", "unexplained")
_STATUS = {"match": "agree", "agree": "agree", "explained": "explained", "unexplained": "unexplained",
           "upstream": None, "missing": "unexplained", "skipped": None}

_HOW_TO_READ = (
    "Each runtime ran the model on the same inputs, in its own process. Every output is compared with the "
    "**baseline** runtime's: integers exactly, floats within `atol + rtol * |baseline|`, NaN equal to NaN. "
    "A difference is **explained** when ortops can show its cause in the data: for example equal values "
    "(**ties**) where the runtimes' specifications let each runtime pick a different one, NaN, whose order "
    "no specification fixes, or several scatter updates to one element; values within the tolerance but not "
    "equal, ranked differently, are **near-ties**. An output difference blamed on such a node is explained only "
    "when the node causes it: the baseline runtime, fed the other runtime's values at that node, must reproduce "
    "the other runtime's output (the causal check). A difference is **unexplained** otherwise: "
    "that is worth a bug report. The node audit looks inside the model: for each node whose result depends "
    "on such semantics (TopK, ArgMax, ArgMin, scatters with duplicate indices, ortops' own nodes) it "
    "captures the node's actual inputs and outputs in every runtime; an output difference is traced back to "
    "the first node where the runtimes split.")


def _num(value) -> Cell:
    if value is None:
        return Cell("")
    if isinstance(value, str):
        return Cell(value, sort=float("inf"))
    return Cell(f"{value:.3g}", sort=value)


def _pairs(report: dict) -> list[tuple[PairSummary, list[groups.NodeGroup]]]:
    """Per runtime pair, its outputs counted by verdict and its explained and unexplained nodes
    grouped by op and status."""
    base, pairs = report["baseline"], []
    for runtime in (r for r in report["summary"]["runtimes_ran"] if r != base):
        verdicts = [_STATUS[o["verdict"]] for o in report["outputs"] if o["runtime"] == runtime]
        nodes = [n for n in report["nodes"] if n["runtime"] == runtime and n["status"] in ("explained", "unexplained")]
        pairs.append((PairSummary(f"{runtime} vs {base}", {s: verdicts.count(s) for s in STATUSES}, unit="outputs"),
                      groups.group_nodes(nodes)))
    return pairs


def _group_lines(group: groups.NodeGroup) -> tuple[str, str]:
    """(the group's line, its worked example: the first node's evidence and reason)."""
    example = group.example
    reason = f" ({example['reason']})" if example.get("reason") else ""
    status = f" {group.status}" if group.topics else ""  # text() ends in the status where no topic
    return (f"{group.text()}{status}.",
            f"Worked example, {example['node']}: {example['detail']}{reason}")


def _stats(stats: dict | None) -> str:
    """``mean / median / quantile (q)`` of the absolute errors of a float output, else ``""``."""
    if not stats:
        return ""
    mean, median, quantile = (_num(stats[k]).text for k in ("mean_abs", "median_abs", "quantile_abs"))
    return f"{mean} / {median} / {quantile} (q={stats['quantile']:g})"


def _outputs_table(report: dict) -> Table:
    rows = []
    for o in report["outputs"]:
        c = o["comparison"] or {}
        worst = ("" if c.get("worst") is None else
                 f"{tuple(c['worst'])}: {c['worst_values'][0]} vs {c['worst_values'][1]}")
        rows.append([
            Cell(o["output"], code=True), o["runtime"], Cell(o["verdict"], status=_STATUS[o["verdict"]]),
            " / ".join(c.get("dtype", [])), " / ".join(str(tuple(s)) for s in c.get("shape", [])),
            Cell(str(c.get("mismatches", "")), sort=c.get("mismatches", 0)),
            Cell(f"{c['share']:.2%}" if "share" in c else "", sort=c.get("share", 0)),
            _num(c.get("max_abs")), _num(c.get("max_rel")), _stats(c.get("stats")), worst,
            _num(c.get("needed_atol")), _num(c.get("needed_rtol")),
            o["explanation"], Cell(o["node"] or "", code=bool(o["node"]))])
    return Table(["output", "runtime", "verdict", "dtype", "shape", "mismatches", "share", "max abs", "max rel",
                  "abs error mean / median / quantile", "worst (baseline vs runtime)", "atol needed", "rtol needed",
                  "explanation", "node"],
                 rows, id="outputs-table", interactive=True, filter_columns=("runtime", "verdict"),
                 caption=f"baseline: {report['baseline']}; tolerance atol={report['settings']['atol']:g}, "
                         f"rtol={report['settings']['rtol']:g}")


def _nodes_table(report: dict) -> Table:
    rows = [[Cell(n["node"], code=True), Cell(n["op"], code=True), n["runtime"],
             Cell(n["status"], status=_STATUS.get(n["status"])), n["topic"] or "", n["detail"], n["reason"]]
            for n in report["nodes"]]
    return Table(["node", "op", "runtime", "status", "topic", "what the data shows", "known divergence"], rows,
                 id="nodes-table", interactive=True, filter_columns=("runtime", "status", "topic"))


def _runtimes_table(report: dict) -> Table:
    rows = []
    for r in report["runtimes"]:
        status = {"ok": "agree", "missing": None}.get(r["status"], r.get("verdict"))
        note = r["detail"] if r["status"] != "ok" else ""
        if r.get("explanation"):
            note = f"{note} -- {r['verdict']}: {r['explanation']}"
        rows.append([r["name"], Cell(r["status"], status=status), r["version"], _settings(r),
                     _num(r["seconds"]), note])
    return Table(["runtime", "status", "version", "settings", "seconds", "detail"], rows, id="runtimes-table")


def _settings(runtime: dict) -> str:
    """``precision=f32``: a runtime row's settings."""
    return ", ".join(f"{k}={v}" for k, v in runtime["settings"].items())


def _inputs_table(report: dict) -> Table:
    rows = [[Cell(i["name"], code=True), i["dtype"], str(tuple(i["shape"])), i["source"],
             "" if i.get("min") is None else f"{i['min']} .. {i['max']}", i.get("distinct", "")]
            for i in report["inputs"]]
    return Table(["input", "dtype", "shape", "source", "range", "distinct values"], rows, id="inputs-table")


def document(report: dict) -> Document:
    """The report as a :class:`ortops.reporting.Document` (Markdown and HTML read the same blocks)."""
    model = pathlib.Path(report["model"]["path"]).name
    summary = report["summary"]
    doc = Document(f"ortops compare: {model}")
    doc.add(Paragraph(f"**{summary['verdict']}** (exit status {summary['exit_status']}). "
                      f"Model `{report['model']['path']}`, {report['model']['nodes']} nodes, "
                      f"{len(report['audited'])} audited. Baseline: `{report['baseline']}`. "
                      f"OpenVINO precision: `{report['settings']['openvino_precision']}`."),
            Paragraph(_HOW_TO_READ))
    pairs = _pairs(report)
    doc.add(Heading("Summary"), *summary_blocks([pair for pair, _ in pairs], STATUSES, id="summary-table"))
    for pair, found in pairs:
        if found:
            doc.add(Paragraph(f"**{pair.name}**, audited nodes that differ (every node: the node audit table below):"),
                    Bullets([" ".join(_group_lines(g)) for g in found]))
    doc.add(Heading("Runtimes"), _runtimes_table(report))
    doc.add(Heading("Inputs"), _inputs_table(report))
    doc.add(Heading("Outputs"), _outputs_table(report))
    doc.add(Heading("Node audit"), _nodes_table(report) if report["nodes"] else Paragraph(
        "No node of this model is audited (no TopK, ArgMax, ArgMin, scatter or ortops node), or fewer than two "
        "runtimes ran." if not report["audited"] else "Fewer than two runtimes ran: nothing to audit."))
    if report.get("lifted") or report.get("unobserved"):  # audited nodes inside subgraphs
        doc.add(Heading("Subgraphs"))
        if report.get("lifted"):
            doc.add(Paragraph("Inlined for the audit (the branch each If took for these inputs): " + ", ".join(
                f"`{x['node']}` {x['branch']}" for x in report["lifted"]) + "."))
        if report.get("unobserved"):
            doc.add(Table(["node", "op", "where", "why it is not audited"],
                          [[Cell(u["node"], code=True), Cell(u["op"], code=True), u["where"], u["reason"]]
                           for u in report["unobserved"]], id="unobserved-table",
                          caption="audited op types inside subgraphs whose values the runtimes do not return"))
    if report["settings"].get("trace"):
        rows = [[Cell(t["name"], code=True), Cell(t["op"], code=True), t["runtime"], t["detail"]]
                for t in report["trace"]]
        doc.add(Heading("Trace: where the runtimes split"), Table(
            ["node", "op", "runtime", "what differs"], rows, id="trace-table", interactive=True,
            filter_columns=("runtime", "op"),
            caption="every node whose inputs agree within tolerance and one of whose outputs does not")
            if rows else Paragraph("No node's outputs differ beyond tolerance where its inputs agree."))
    unexplained = [o for o in report["outputs"] if o["verdict"] == "unexplained"]
    if unexplained:
        doc.add(Heading("Unexplained differences"))
        for o in unexplained:
            doc.add(Details(f"{o['output']} in {o['runtime']}", [Paragraph(o["explanation"]),
                                                                 Paragraph((o["comparison"] or {}).get("detail", ""))],
                            status="unexplained"))
    return doc


def write_reports(report: dict, out) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """Write ``compare.json``, ``compare.md`` and ``compare.html`` into ``out`` (created if needed)."""
    md_path, html_path = write(document(report), out, "compare",
                               {"compare.json": json.dumps(report, indent=1, allow_nan=False, default=str) + "\n"})
    return pathlib.Path(out) / "compare.json", md_path, html_path


def _output_lines(report: dict, row: dict) -> tuple[str, str]:
    """One output that differs: ``output out (openvino): explained, 8 of 320 elements differ`` and,
    indented, its cause (the cut nodes and whether the causal check passed) or its explanation."""
    c = row["comparison"] or {}
    differ = f", {c['mismatches']} of {groups.count(c['size'], 'element')} differ" if c.get("mismatches") else ""
    head = f"output {row['output']} ({row['runtime']}): {row['verdict']}{differ}"
    check, cause = row.get("causal") or {}, row["explanation"]
    if (cut := check.get("cut")) and (check["status"] == "passed" or check.get("trace")):
        topics = ", ".join(sorted({n["topic"] for n in report["nodes"] if n["runtime"] == row["runtime"]
                                   and n["node"] in cut and n["topic"]}))
        who = cut[0] if len(cut) == 1 else f"{groups.count(len(cut), 'node')} ({groups.span(cut)})"
        cause = (f"by {who}: {topics}; causal check passed" if check["status"] == "passed" else
                 f"not caused by {who} ({topics}): fed their values, {check['runtime']} still differs, first at "
                 f"{check['trace']['node']} ({check['trace']['op']})")
    return head, f"  {cause}"


def print_summary(report: dict, out, width: int | None = None) -> None:
    """The terminal summary: runtimes, per-pair counts of outputs, the audited nodes that differ
    grouped by op (one worked example each), and every output that differs. Every line but a
    runtime that did not run (its whole reason) fits in ``width`` columns (default: the terminal's, ``COLUMNS`` first; 100 off a terminal, as in a pipe
    or a CI log); the full lists and texts are in compare.json, compare.md and compare.html."""
    width = width or shutil.get_terminal_size((100, 24)).columns

    def line(text: str) -> None:
        console.print_line(out, groups.fit(text, width))

    for r in report["runtimes"]:
        text = f"runtime {r['name']}: {r['status']} in {r['seconds']:.1f} s"
        if r["version"]:
            text += f" ({', '.join(filter(None, [r['version'], _settings(r)]))})"
        if r["status"] != "ok":
            text += f": {r['detail']}"
        if r.get("explanation"):
            text += f" [{r['verdict']}: {r['explanation']}]"
        if r["status"] == "ok":
            line(text)
        else:  # its whole reason, which ends in what to do (e.g. the extra to install)
            console.print_line(out, text)
    pairs = _pairs(report)
    for pair, _ in pairs:
        line(console.pair_line("compare", pair, STATUSES))
    if report.get("lifted") or report.get("unobserved"):
        line(f"compare subgraphs: {groups.count(len(report.get('lifted', [])), 'If node')} inlined, "
             f"{groups.count(len(report.get('unobserved', [])), 'audited node')} not observed (listed in compare.md)")
    for pair, found in pairs:
        for group in found:
            head, example = _group_lines(group)
            line(f"{pair.name}: {head}")
            line(f"  {example}")
        if found:
            line("  every node: the node audit table of compare.md and compare.html")
    for o in (o for o in report["outputs"] if o["verdict"] != "match"):
        for text in _output_lines(report, o):
            line(text)
    line(f"{report['summary']['verdict']} (exit status {report['summary']['exit_status']})")
