"""``ortops bench``: time ortops' ops in ONNX Runtime, on every execution path, against ORT's
built-ins (:data:`BUILT_INS`), OpenVINO and the NumPy references; also session creation and the
OCR recogniser with the ops appended (:mod:`.creation`), peak memory (:mod:`.memory`) and scaling
(:mod:`.plot`). Writes ``DIR/bench.json`` (every sample, the machine, the versions),
``DIR/bench.txt`` and ``DIR/scaling.png`` (the ``bench`` extra). What is timed and the method
(interleaved rounds, medians, the spread): docs/performance.md. What each op is timed on:
``ortops/ops/<op>/bench.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import platform
import sys
import time

from ..reporting import write_files
from ..reporting.console import is_plain, make_console
from . import creation
from .cases import BUILT_INS, CONFIGS, OPS, Config, matrix, op_bench
from .memory import run_memory
from .plot import plot_scaling, run_scaling
from .report import jsonable, machine, print_tables, row_json, version
from .timing import Row, judge, run_case

__all__ = ["main", "build_parser", "Config", "CONFIGS", "OPS", "BUILT_INS"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ortops bench",
                                     description="Time ortops' ops in ONNX Runtime against ORT's built-ins, "
                                                 "OpenVINO and the NumPy references.")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer rounds and scaling points (< 2 min on 2 cores)")
    size.add_argument("--smoke", action="store_true", help="tiny shapes: checks the harness, measures nothing")
    parser.add_argument("--out", default="bench-out", help="output directory (default: ./bench-out)")
    parser.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS), help="only these ops (default: all)")
    parser.add_argument("--repeat", type=int, metavar="N",
                        help="rounds of interleaved samples per case, exactly, where a call is cheap (default: 15, "
                             "5 with --quick; cheap cases then get up to 4x more within a time budget); a slow "
                             "implementation keeps its few samples")
    return parser


def main(argv: list[str] | None = None) -> int:
    """``ortops bench`` and ``scripts/bench.py``; returns the exit status (0 unless it fails)."""
    from rich.markup import escape

    import ortops

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:  # ``ortops bench -- --quick``: argparse.REMAINDER keeps the separator
        argv = argv[1:]
    parser = build_parser()
    args = parser.parse_args(argv)
    config = CONFIGS["smoke" if args.smoke else "quick" if args.quick else "full"]
    rounds = args.repeat or config.rounds
    if rounds < 1:
        parser.error("--repeat must be at least 1")  # exits 2, as for any usage error
    ops = [op for op in OPS if op in args.ops]
    out = pathlib.Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # an existing file, or a folder that cannot be made
        parser.error(f"--out {out} cannot be written: {exc}")
    console = make_console(plain=False, record=True, width=150 if is_plain() else None)
    start = time.perf_counter()
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None

    ortops.register()
    have_openvino = importlib.util.find_spec("openvino") is not None
    notes = [] if have_openvino else ["openvino is not installed (pip install 'ortops[openvino]'): no OpenVINO rows"]
    cases = matrix(config, ops, have_openvino)
    rows: list[Row] = []
    with console.status("") as spinner:
        def status(text: str) -> None:
            spinner.update(f"[dim]{text}[/] ({time.perf_counter() - start:.0f} s)")

        phases = {}
        for case in cases:
            status(case.id)
            rows += run_case(case, config, rounds, adaptive=args.repeat is None)
        judge(rows)
        phases["matrix"] = time.perf_counter() - start
        scaling = run_scaling(ops, config, min(rounds, config.scaling_rounds), args.repeat is None, status)
        phases["scaling"] = time.perf_counter() - start - phases["matrix"]
        memory = run_memory(ops, config, status)
        phases["memory"] = time.perf_counter() - start - phases["matrix"] - phases["scaling"]
        status("session creation")
        creation_rows = creation.run_creation(3 if config.mode == "smoke" else 10)
        status("in-model: the OCR recogniser with TopK and ArgMax appended")
        in_model = creation.run_in_model(config, rounds)
        if not in_model:
            notes.append("no in-model case: the ocr extra is not installed (pip install 'ortops[ocr]')")
        phases["creation and in-model"] = time.perf_counter() - start - sum(phases.values())

    title = (f"ortops bench --{config.mode}: {platform.platform()}, {os.cpu_count()} CPUs, "
             f"onnxruntime {version('onnxruntime')}")
    plot_note = plot_scaling(scaling, out / "scaling.png", title) if scaling else "no scaling series"
    if plot_note:
        notes.append(plot_note)
    seconds = time.perf_counter() - start
    print_tables(rows, memory, console)
    creation.print_extra(creation_rows, in_model, console)
    for op in ops:
        console.print(f"[dim]built-in {op}:[/] {escape(BUILT_INS[op])}")
    case_notes: dict[str, list[str]] = {}
    for case in cases:
        for note in case.notes:
            case_notes.setdefault(note, []).append(case.id)
    for note in notes:
        console.print(f"[dim]note:[/] {escape(note)}")
    for note, ids in case_notes.items():
        console.print(f"[dim]note:[/] {escape(note)}: " + escape(ids[0] if len(ids) == 1 else f"{len(ids)} cases"))
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    report = {
        "machine": machine(),
        "config": dict(jsonable(vars(config)), rounds=rounds, ops=ops),
        "load_average": {"start": load_before, "end": load_after},
        "seconds": seconds,
        "phase_seconds": phases,
        "rows": [row_json(row) for row in rows],
        "scaling": {"description": {op: op_bench(op).SCALING for op in OPS}, "series": scaling},
        "memory": memory,
        "session_creation": creation_rows,
        "in_model": in_model,
        "built_ins": {op: BUILT_INS[op] for op in ops},
        "notes": notes,
        "case_notes": case_notes,
    }
    files = [out / "bench.json", out / "bench.txt"] + ([out / "scaling.png"] if not plot_note else [])
    load = f" (load average {load_before[0]:.1f} -> {load_after[0]:.1f})" if load_before and load_after else ""
    console.print(f"{len(rows)} rows in {seconds:.0f} s{load}. Wrote {', '.join(str(f) for f in files)}")
    try:
        write_files({out / "bench.json": json.dumps(report, indent=1) + "\n", out / "bench.txt": console.export_text()})
    except OSError as exc:  # e.g. a full disk: nothing half-written is left
        print(f"ortops bench: --out {out} cannot be written: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
