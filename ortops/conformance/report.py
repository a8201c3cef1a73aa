"""The conformance report: ``report.json``, ``report.md`` and the terminal summary."""

from __future__ import annotations

import json
import pathlib
import platform
from collections import Counter
from typing import Sequence

from . import matrix
from .cases import SOURCES, STATUSES, Result

__all__ = ["summary", "write_reports", "print_summary"]


def summary(results: Sequence[Result]) -> dict[str, int]:
    counts = Counter(r.status for r in results)
    return {"total": len(results), **{s: counts.get(s, 0) for s in STATUSES}}


def _environment() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    env = {"python": platform.python_version(), "machine": platform.machine()}
    for package in ("onnx", "onnxruntime", "onnxruntime-extensions", "numpy", "rapidocr-onnxruntime", "openvino", "ncnn"):
        try:
            env[package] = version(package)
        except PackageNotFoundError:
            env[package] = "not installed"
    return env


def write_reports(results: Sequence[Result], out_dir: pathlib.Path, notes: Sequence[str] = (), seconds: float = 0.0):
    """Write ``report.json`` and ``report.md`` into ``out_dir`` (created if needed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    data = {
        "summary": summary(results),
        "environment": _environment(),
        "seconds": round(seconds, 2),
        "notes": list(notes),
        "cases": [r.to_json() for r in results],
    }
    (out_dir / "report.json").write_text(json.dumps(data, indent=1, default=str) + "\n")
    (out_dir / "report.md").write_text(_markdown(results, data))
    return out_dir / "report.json", out_dir / "report.md"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _real_model_finding(details: dict) -> str:
    """One line on what a real-model case's op found (per-character confidences, the most
    confident step and class, or the per-step candidates)."""
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
        return "top 5 over the whole tensor: " + ", ".join(
            f"step {m['step']} {m['character']!r}" for m in details["top5"])
    return f"per-step top-5 candidates over {details.get('steps', '?')} steps"


def _markdown(results: Sequence[Result], data: dict) -> str:
    s = data["summary"]
    lines = [
        "# ortops conformance report",
        "",
        f"{s['total']} cases: **{s['agree']} agree**, {s['explained']} explained, {s['skipped']} skipped, "
        f"**{s['unexplained']} unexplained**. Run time {data['seconds']} s.",
        "",
        "Environment: " + ", ".join(f"{k} {v}" for k, v in data["environment"].items()) + ".",
        "",
        "How to read it: each case runs ortops' op in ONNX Runtime and is judged by every oracle it has - the "
        "pure-NumPy reference (always), the built-in ONNX op it maps to, a spec's worked example or ONNX's own "
        "test vectors. `agree`: every oracle that could judge agrees. `explained`: a known divergence, with its "
        "reason. `skipped`: no oracle besides the reference could run (the reason says why). `unexplained`: a "
        "difference nobody has explained - a bug until shown otherwise.",
        "",
    ]
    for note in data["notes"]:
        lines.append(f"> Note: {note}")
    lines += ["", "## By op and source", "", "| op | source | " + " | ".join(STATUSES) + " |",
              "|---|---|" + "---|" * len(STATUSES)]
    groups = Counter((r.case.op, r.case.source, r.status) for r in results)
    for op in sorted({r.case.op for r in results}):
        for source in SOURCES:
            row = [groups.get((op, source, st), 0) for st in STATUSES]
            if any(row):
                lines.append(f"| {op} | {source} | " + " | ".join(map(str, row)) + " |")
    lines += [""] + matrix.markdown(results)
    explained = Counter((c.status, c.oracle, c.reason) for r in results for c in r.checks
                        if c.status in ("explained", "skipped"))
    if explained:
        lines += ["", "## Divergences and skips, with their reasons", "", "| checks | verdict | oracle | reason |",
                  "|---|---|---|---|"]
        lines += [f"| {n} | {st} | {_cell(oracle)} | {_cell(reason)} |" for (st, oracle, reason), n in explained.most_common()]
    real = [r for r in results if r.case.source == "real-model" and "rendered" in r.case.details]
    if real:
        lines += ["", "## Real model", "",
                  "The PP-OCRv4 recogniser reads a rendered line; its softmax [1, T, 6625] feeds ortops' ops.", "",
                  "| case | op | rendered | decoded | what the op found | status |", "|---|---|---|---|---|---|"]
        lines += [f"| {r.case.name} | {r.case.op} | `{r.case.details['rendered']}` | `{r.case.details.get('decoded', '')}` "
                  f"| {_cell(_real_model_finding(r.case.details))} | {r.status} |" for r in real]
        lines += ["", f"Font: {real[0].case.details.get('font', '?')}."]
    lines += ["", "## Cases", "", "| case | op | source | dtype | shape | status | reason |", "|---|---|---|---|---|---|---|"]
    for r in results:
        j = r.to_json()
        lines.append(f"| {j['name']} | {j['op']} | {j['source']} | {j['dtype']} | {j['shape']} | {j['status']} | "
                     f"{_cell(j['reason'])} |")
    return "\n".join(lines) + "\n"


def print_summary(results: Sequence[Result], console=None, notes: Sequence[str] = ()) -> None:
    """A short table on the terminal: counts per op and source, then any unexplained case."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    table = Table(title="ortops conformance")
    table.add_column("op")
    table.add_column("source")
    for status in STATUSES:
        table.add_column(status, justify="right")
    groups = Counter((r.case.op, r.case.source, r.status) for r in results)
    for op in sorted({r.case.op for r in results}):
        for source in SOURCES:
            row = [groups.get((op, source, st), 0) for st in STATUSES]
            if any(row):
                table.add_row(op, source, *map(str, row))
    s = summary(results)
    table.add_row("all", "", *(str(s[st]) for st in STATUSES), style="bold")
    console.print(table)
    for note in notes:
        console.print(f"[yellow]note:[/] {escape(note)}")
    for r in results:
        if r.status == "unexplained":
            console.print(f"[red]unexplained[/] {escape(f'{r.case.op} {r.case.name}: {r.reason}')}")
