"""The ``ortops`` command line: ``ortops conformance`` (the main job) and ``ortops bench``."""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

__all__ = ["main"]


def _conformance(args: argparse.Namespace) -> int:
    from rich.console import Console

    from . import conformance
    from .bridge import register

    console = Console()
    openvino = "openvino" in (args.oracle or [])
    if openvino:
        from .conformance import openvino_oracle

        if not openvino_oracle.available():
            console.print("[red]--oracle openvino needs the OpenVINO runtime:[/] pip install 'ortops[openvino]'")
            return 2
    start = time.perf_counter()
    register()
    cases, notes = conformance.collect_cases(args.ops, args.sources)
    results = conformance.run(cases, progress=not args.no_progress, openvino=openvino)
    seconds = time.perf_counter() - start
    json_path, md_path = conformance.write_reports(results, pathlib.Path(args.out), notes, seconds)
    conformance.print_summary(results, console, notes)
    console.print(f"{len(results)} cases in {seconds:.1f} s. Report: {md_path} and {json_path}")
    return 1 if conformance.summary(results)["unexplained"] else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ortops", description="OpenVINO and ncnn op semantics in ONNX Runtime.")
    commands = parser.add_subparsers(dest="command", required=True)
    conf = commands.add_parser("conformance", help="run the conformance cases and write a report")
    conf.add_argument("--out", default="ortops-report", help="report directory (default: ./ortops-report)")
    conf.add_argument("--ops", nargs="+", choices=["TopK", "ScatterElementsUpdate", "ArgMax"],
                      help="only these ops (default: all)")
    conf.add_argument("--sources", nargs="+", choices=["seed-example", "onnx-backend-test", "generated", "real-model"],
                      help="only cases from these sources (default: all)")
    conf.add_argument("--oracle", action="append", choices=["onnxruntime", "openvino"],
                      help="oracles besides the reference (repeatable; onnxruntime always runs; "
                           "openvino needs the openvino extra)")
    conf.add_argument("--no-progress", action="store_true", help="no progress bar")
    conf.set_defaults(func=_conformance)
    commands.add_parser("bench", help="time ortops against ORT built-ins: same options as scripts/bench.py",
                        add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:  # the benchmark parses its own options (ortops bench --quick)
        from . import bench

        return bench.main(argv[1:])
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
