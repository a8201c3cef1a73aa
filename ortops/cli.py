"""The ``ortops`` command line: ``ortops conformance`` (the main job), ``ortops bench`` and
``ortops install-oracle ncnn`` (build the real ncnn runtime for ``--oracle ncnn``)."""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

__all__ = ["main"]


#: Exit statuses of ``ortops conformance`` (also in the README).
EXIT_OK, EXIT_UNEXPLAINED, EXIT_USAGE = 0, 1, 2

#: Packages whose versions decide what the runtimes do; ``ortops --version`` names them.
RUNTIME_PACKAGES = ("onnx", "onnxruntime", "onnxruntime-extensions", "numpy", "openvino", "ncnn")


def _versions() -> str:
    from importlib import metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return f"ortops {version('ortops')} (" + ", ".join(f"{n} {version(n)}" for n in RUNTIME_PACKAGES) + ")"


def _unique(values):
    """``values`` without repeats, in their first order (``--ops TopK TopK`` runs TopK once)."""
    return None if values is None else list(dict.fromkeys(values))


def _usage_error(console, message: str) -> int:
    from rich.markup import escape

    console.print(f"[red]ortops conformance:[/] {escape(message)}")
    return EXIT_USAGE


def _conformance(args: argparse.Namespace) -> int:
    from rich.console import Console

    from . import conformance
    from .bridge import register

    # On a pipe (a CI log) the terminal width means nothing: never wrap or cut a line there.
    console = Console() if sys.stdout.isatty() else Console(width=400, soft_wrap=True)
    out = pathlib.Path(args.out)
    if out.exists() and not out.is_dir():
        return _usage_error(console, f"--out {out} is an existing file; give a directory for the reports")
    if args.min_cases is not None and args.min_cases < 1:
        return _usage_error(console, f"--min-cases {args.min_cases} must be at least 1")
    oracles = _unique(args.oracle or [])
    openvino = "openvino" in oracles
    if openvino:
        from .conformance import openvino_oracle

        if not openvino_oracle.available():
            return _usage_error(console, "--oracle openvino needs the OpenVINO runtime: pip install 'ortops[openvino]'")
    ncnn = "ncnn" in oracles
    if ncnn:
        from .conformance import ncnn_oracle

        missing = ncnn_oracle.unavailable()
        if missing:
            return _usage_error(console, f"--oracle ncnn needs the real ncnn runtime built for ortops ({missing}): "
                                         "build it with: ortops install-oracle ncnn")
    start = time.perf_counter()
    register()
    cases, notes = conformance.collect_cases(_unique(args.ops), _unique(args.sources))
    needed = args.min_cases or 1
    if len(cases) < needed:
        why = "; ".join(notes) or "no suite has cases from the chosen --ops and --sources"
        return _usage_error(console, f"{len(cases)} cases to judge, fewer than the {needed} required "
                                     f"({'--min-cases' if args.min_cases else 'a run must judge at least one'}): {why}")
    results = conformance.run(cases, progress=not args.no_progress, openvino=openvino, ncnn=ncnn)
    seconds = time.perf_counter() - start
    json_path, md_path = conformance.write_reports(results, out, notes, seconds)
    conformance.print_summary(results, console, notes)
    console.print(f"{len(results)} cases in {seconds:.1f} s. Report: {md_path} and {json_path}", highlight=False)
    return EXIT_UNEXPLAINED if conformance.summary(results)["unexplained"] else EXIT_OK


def _install_oracle(args: argparse.Namespace) -> int:
    from .interop import ncnn_build

    def log(line: str) -> None:
        print(line, flush=True)

    try:
        ncnn_build.install(sdist=args.sdist, build_dir=args.build_dir, jobs=args.jobs, log=log)
    except ncnn_build.MissingTools as exc:
        print(f"ortops install-oracle: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ncnn_build.BuildError as exc:
        print(f"ortops install-oracle: {exc}", file=sys.stderr)
        return EXIT_UNEXPLAINED
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ortops", description="OpenVINO and ncnn op semantics in ONNX Runtime.",
        epilog="Exit statuses of 'ortops conformance': 0 no case unexplained, 1 some case unexplained, "
               "2 usage or environment error (bad option, --out is a file, a missing extra, too few cases).")
    parser.add_argument("--version", action="version", version=_versions())
    commands = parser.add_subparsers(dest="command", required=True)
    conf = commands.add_parser(
        "conformance", help="run the conformance cases and write a report",
        epilog="Exit status: 0 no case unexplained, 1 some case unexplained, 2 usage or environment error.")
    conf.add_argument("--out", default="ortops-report", help="report directory (default: ./ortops-report)")
    conf.add_argument("--ops", nargs="+", choices=["TopK", "ScatterElementsUpdate", "ArgMax"],
                      help="only these ops (default: all)")
    conf.add_argument("--sources", nargs="+", choices=["seed-example", "onnx-backend-test", "generated", "real-model"],
                      help="only cases from these sources (default: all)")
    conf.add_argument("--oracle", action="append", choices=["onnxruntime", "openvino", "ncnn"],
                      help="oracles besides the reference (repeatable; onnxruntime always runs; "
                           "openvino needs the openvino extra; ncnn needs 'ortops install-oracle ncnn')")
    conf.add_argument("--min-cases", type=int, metavar="N",
                      help="exit 2 unless at least N cases are judged (default: 1; a run that judges nothing fails)")
    conf.add_argument("--no-progress", action="store_true", help="no progress bar")
    conf.set_defaults(func=_conformance)
    oracle = commands.add_parser(
        "install-oracle", help="build a runtime the conformance run can use as an oracle (ncnn: from its source package)",
        description="Build the real ncnn runtime with its ArgMax layer from ncnn's source package on PyPI "
                    "(ncnn 1.0.20261020) and install it into this Python environment, for "
                    "'ortops conformance --oracle ncnn'. Needs cmake, a C++ compiler, ninja or make, and "
                    "Python's headers; about one minute on 2 cores.",
        epilog="Exit status: 0 installed, 1 the build failed, 2 a build tool is missing.")
    oracle.add_argument("runtime", choices=["ncnn"], help="the runtime to build")
    oracle.add_argument("--sdist", metavar="FILE", help="ncnn's source package, downloaded before (default: pip downloads it)")
    oracle.add_argument("--build-dir", metavar="DIR", help="build here and keep the tree (default: a temporary directory)")
    oracle.add_argument("--jobs", type=int, metavar="N", help="parallel compile jobs (default: the number of CPUs)")
    oracle.set_defaults(func=_install_oracle)
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
