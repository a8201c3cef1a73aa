"""The benchmark's output: the tables on the terminal and in ``bench.txt``, and ``bench.json``."""

from __future__ import annotations

import os
import pathlib
import platform

from ..arrays import jsonable
from ..reporting import version
from .calls import path_of

__all__ = ["jsonable", "version", "machine", "print_tables", "row_json"]


def machine() -> dict:
    try:
        cpuinfo = pathlib.Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        cpuinfo = []
    cpu_model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), None)
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": cpu_model or platform.processor() or None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {d: version(d) for d in ("ortops", "numpy", "onnx", "onnxruntime", "onnxruntime-extensions",
                                              "openvino", "matplotlib")},
    }


def _seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _target_text(target, value: float | None, ok: bool | None) -> str:
    if ok is None:
        return f"– {target.text} (n/a)"
    mark = "[green]✓[/]" if ok else "[red]✗[/]"
    if target.speedup:
        return f"{mark} {target.text}: {1 / value:.0f}×"
    if target.against[1] != "built-in":
        return f"{mark} {target.text}: {value:.2f}×"
    return f"{mark} {target.text}"


_IMPL_LABELS = {
    "reference": "NumPy reference",
    "openvino": "OpenVINO",
    "openvino stable=1": "OpenVINO stable=1",
    "openvino stable=0": "OpenVINO stable=0",
    "built-in select_last_index=0": "ORT ArgMax select_last_index=0 (ties differ)",
}


def print_tables(rows: list, memory: list[dict], console) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="Median time per call; ratio = median / the built-in's median in the same case "
                        "(identity PyOp: / ORT Identity's)", title_justify="left")
    for name, justify in (("case", "left"), ("impl", "left"), ("path", "left"), ("median", "right"), ("iqr", "right"),
                          ("n", "right"), ("ratio", "right"), ("target", "left")):
        table.add_column(name, justify=justify, no_wrap=name in ("median", "ratio", "impl"))
    for i, row in enumerate(rows):
        first = i == 0 or row.case is not rows[i - 1].case
        if first and i:
            table.add_section()
        t = row.timing
        impl = _IMPL_LABELS.get(row.impl, row.impl) + (" [red]⚠ differs[/]" if row.mismatch else "")
        table.add_row(
            f"[bold]{row.case.op}[/] {escape(row.case.name)}" if first else "", impl, path_of(row.impl),
            _seconds(t.median), f"{t.spread:.0%}" if len(t.samples) >= 4 else "", str(len(t.samples)),
            "" if row.ratio is None else f"{row.ratio:.2f}×",
            "  ".join(_target_text(*v) for v in row.verdicts),
        )
    console.print(table)
    if memory:
        mem = Table(title="Peak RSS in child processes (Δ = peak while running − RSS before running: "
                          "what the calls need beyond the session and inputs)",
                    title_justify="left")
        for name in ("case", "runs", "ortops peak", "ortops Δ", "built-in peak", "built-in Δ", "ratio", "Δ ratio"):
            mem.add_column(name, justify="left" if name == "case" else "right")
        for entry in memory:
            cells = []
            for impl in ("ortops", "built-in"):
                m = entry.get(impl, {})
                if "peak_kib" in m:
                    cells += [f"{m['peak_kib'] / 1024:.0f} MiB", f"{max(m['delta_kib'], 0) / 1024:.1f} MiB"]
                else:
                    cells += [escape(m.get("error", "?")[:40]), ""]
            o, b = entry.get("ortops", {}), entry.get("built-in", {})
            ratio = delta_ratio = ""
            if "peak_kib" in o and "peak_kib" in b:
                ratio = f"{o['peak_kib'] / b['peak_kib']:.2f}×"
                if b["delta_kib"] > 0:
                    delta_ratio = f"{max(o['delta_kib'], 0) / b['delta_kib']:.2f}×"
            mem.add_row(f"[bold]{entry['op']}[/] {escape(entry['case'])}", str(entry["runs"]), *cells, ratio, delta_ratio)
        console.print(mem)


def row_json(row) -> dict:
    t = row.timing
    return {
        "op": row.case.op, "case": row.case.name, "params": jsonable(row.case.params), "impl": row.impl,
        "path": path_of(row.impl),
        "median_s": t.median, "min_s": min(t.samples), "iqr_share": t.spread, "samples_s": t.samples,
        "calls_per_sample": t.calls_per_sample, "load_average": row.case.load_average,
        "case_seconds": row.case.seconds,
        "ratio": row.ratio, "ratio_vs": row.case.baselines.get(row.impl, "built-in"), "output_mismatch": row.mismatch,
        "targets": [{"text": tg.text, "against": list(tg.against), "limit": tg.limit, "value": v, "ok": ok}
                    for tg, v, ok in row.verdicts],
    }
