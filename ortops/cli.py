"""The ``ortops`` command line: ``ortops conformance`` (the main job), ``ortops compare`` (a user's
model in ONNX Runtime, OpenVINO and the reference, every difference explained), ``ortops lower``
(exact standard-ONNX compositions of ortops nodes), ``ortops bench`` and ``ortops install-oracle
ncnn`` (build the real ncnn runtime for ``--oracle ncnn``)."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import pathlib
import signal
import sys
import tempfile
import threading
import time

__all__ = ["main"]


#: Exit statuses of ``ortops conformance`` (also in the README).
EXIT_OK, EXIT_UNEXPLAINED, EXIT_USAGE = 0, 1, 2

#: Packages whose versions decide what the runtimes do; ``ortops --version`` names them.
RUNTIME_PACKAGES = ("onnx", "onnxruntime", "onnxruntime-extensions", "numpy", "openvino", "ncnn")


def _versions() -> str:
    from .reporting import version

    found = {name: version(name) or "not installed" for name in ("ortops", *RUNTIME_PACKAGES)}
    return f"ortops {found.pop('ortops')} (" + ", ".join(f"{n} {v}" for n, v in found.items()) + ")"


def _unique(values):
    """``values`` without repeats, in their first order (``--ops TopK TopK`` runs TopK once)."""
    return None if values is None else list(dict.fromkeys(values))


def _output_problem(option: str, path: str | None, *, directory: bool) -> str | None:
    """Why ``path`` (an output of ``option``) cannot be written, in one line, or None.

    A directory (``directory=True``) may not exist yet: it is created, so its nearest existing
    ancestor must be a writable directory. A file's folder must exist and be writable, and the
    path must not be a directory.
    """
    if path is None:
        return None
    target = pathlib.Path(path)
    if target.exists():
        if directory and not target.is_dir():
            return f"{option} {path} is an existing file; give a directory"
        if not directory and target.is_dir():
            return f"{option} {path} is a directory; give a file name"
    folder = target if directory else target.parent
    existing = next((p for p in (folder, *folder.parents) if p.exists()), pathlib.Path("."))
    if not existing.is_dir():
        return f"{option} {path} cannot be written: {existing} is a file, not a directory"
    if not directory and existing != folder:
        return f"{option} {path} cannot be written: the folder {folder} does not exist"
    try:  # what writing there does, not what permission bits say (a read-only file system, /proc)
        tempfile.TemporaryFile(dir=existing).close()
    except OSError as exc:
        return f"{option} {path} cannot be written: writing in {existing} fails ({exc.strerror or exc})"
    return None


def _input_dir_problem(option: str, path: str | None) -> str | None:
    """Why ``path`` (a directory ``option`` reads) cannot be read, in one line, or None."""
    if path is None or pathlib.Path(path).is_dir():
        return None
    return f"{option} {path} is not a directory" if pathlib.Path(path).exists() else f"{option} {path} does not exist"


def _usage_error(console, message: str) -> int:
    from rich.markup import escape

    console.print(f"[red]ortops conformance:[/] {escape(message)}")
    return EXIT_USAGE


def _one_case(args: argparse.Namespace, console, openvino: bool) -> int:
    """``--case NAME``: judge the named cases again (from ``--from DIR`` when given, else from
    the case sources) and print everything about each."""
    import difflib

    from . import conformance
    from .conformance import saved
    from .reporting import console as out

    found, saved_meta, missing = [], {}, []
    if args.from_dir:
        for name in _unique(args.case):
            try:
                case, meta = saved.load(pathlib.Path(args.from_dir), name)
            except FileNotFoundError as exc:
                missing.append(str(exc))
                continue
            except Exception as exc:  # noqa: BLE001 - a damaged file: JSON, npz or a field missing
                missing.append(f"the saved case {name!r} in {args.from_dir} cannot be read: {type(exc).__name__}: {exc}")
                continue
            found.append(case)
            saved_meta[name] = meta
    else:
        cases, notes = conformance.collect_cases(_unique(args.ops), _unique(args.sources))
        by_name = {c.name: c for c in cases}
        for name in _unique(args.case):
            if name in by_name:
                found.append(by_name[name])
            else:
                close = difflib.get_close_matches(name, list(by_name), n=3)
                missing.append(f"no case named {name!r}" + (f" (close: {', '.join(close)})" if close else "")
                               + (f"; {'; '.join(notes)}" if notes else ""))
    if missing:
        return _usage_error(console, "; ".join(missing))
    worst = EXIT_OK
    for case in found:
        result = conformance.judge_case(case, openvino=openvino)
        for line in saved.describe(result, saved_meta.get(case.name)):
            out.print_line(console, line)
        if result.status == "unexplained" or (case.name in saved_meta
                                               and saved_meta[case.name]["status"] != result.status):
            worst = EXIT_UNEXPLAINED
        if args.save_cases:
            saved.save(result, pathlib.Path(args.save_cases))
    return worst


def _conformance(args: argparse.Namespace) -> int:
    from . import conformance
    from .bridge import register
    from .reporting import console as plain_console

    # On a pipe (a CI log) the terminal width means nothing: never wrap or cut a line there.
    console = plain_console.make_console()
    problem = (_output_problem("--out", args.out, directory=True)
               or _output_problem("--save-cases", args.save_cases, directory=True)
               or _input_dir_problem("--from", args.from_dir))
    if problem:
        return _usage_error(console, problem)
    if args.min_cases is not None and args.min_cases < 1:
        return _usage_error(console, f"--min-cases {args.min_cases} must be at least 1")
    oracles = args.oracle or []
    openvino, ncnn = "openvino" in oracles, "ncnn" in oracles
    if openvino:
        from .conformance import openvino_oracle

        if not openvino_oracle.available():
            return _usage_error(console, "--oracle openvino needs the OpenVINO runtime: pip install 'ortops[openvino]'")
    if args.from_dir and not args.case:
        return _usage_error(console, "--from DIR reruns saved cases: name them with --case NAME")

    if ncnn:
        from .conformance import ncnn_oracle

        if missing := ncnn_oracle.unavailable():
            return _usage_error(console, f"--oracle ncnn needs the real ncnn runtime built for ortops ({missing}): "
                                         "build it with: ortops install-oracle ncnn")
    start = time.perf_counter()
    register()
    if args.case:
        return _one_case(args, console, openvino)
    cases, notes = conformance.collect_cases(_unique(args.ops), _unique(args.sources))
    needed = args.min_cases or 1
    if len(cases) < needed:
        why = "; ".join(notes) or ("" if cases else "no suite has cases from the chosen --ops and --sources")
        return _usage_error(console, f"{len(cases)} cases to judge, fewer than the {needed} required "
                                     f"({'--min-cases' if args.min_cases else 'a run must judge at least one'})"
                                     + (f": {why}" if why else ""))
    results = conformance.run(cases, progress=not args.no_progress, openvino=openvino, ncnn=ncnn)
    seconds = time.perf_counter() - start
    try:  # the folder was checked before the run, but a report's name may be taken by a folder
        json_path, md_path = conformance.write_reports(results, pathlib.Path(args.out), notes, seconds)
        if args.save_cases:
            from .conformance import saved

            for result in results:
                saved.save(result, pathlib.Path(args.save_cases))
    except OSError as exc:
        return _usage_error(console, f"the report cannot be written: {exc}")
    conformance.print_summary(results, console, notes)
    plain_console.print_line(console, f"{len(results)} cases in {seconds:.1f} s. Report: {md_path}, "
                                      f"{md_path.with_suffix('.html')} and {json_path}"
                                      + (f". Cases saved in {args.save_cases}" if args.save_cases else ""))
    return EXIT_UNEXPLAINED if conformance.summary(results)["unexplained"] else EXIT_OK


def _compare(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from . import compare as compare_mod
    from .compare import inputs as inputs_mod, render
    from .reporting import console as report_console

    console = report_console.make_console()

    def fail(message: str) -> int:
        console.print(f"[red]ortops compare:[/] {escape(message)}", highlight=False, soft_wrap=True)
        return EXIT_USAGE

    out = pathlib.Path(args.out)
    if problem := _output_problem("--out", args.out, directory=True):
        return fail(problem)
    from .compare.outputs import ToleranceError, parse_tolerances

    try:
        tolerances = parse_tolerances(atol=args.atol, rtol=args.rtol, check_error_stat=args.check_error_stat,
                                      error_quantile=args.error_quantile)
        dims = inputs_mod.parse_dims(args.dim)
    except (ToleranceError, compare_mod.InputError) as exc:
        return fail(str(exc))
    if args.timeout is not None and not 0 < args.timeout < float("inf"):  # NaN fails both
        return fail(f"--timeout {args.timeout} must be a number of seconds > 0")
    if args.seed is not None and args.seed < 0:
        return fail(f"--seed {args.seed} must be >= 0 (NumPy's generators take no negative seed)")
    if args.inputs is not None and (args.seed is not None or args.ties):
        return fail("--inputs gives the inputs: --seed and --ties only apply to generated inputs")
    runtimes = _unique(args.runtimes)
    steps = [*runtimes, "compare", "causal"]
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, disable=args.no_progress or report_console.is_plain(),
                  transient=True) as progress:
        task = progress.add_task("loading the model", total=len(steps))

        def tell(step) -> None:
            """One line per finished step (also in a CI log); the bar on a terminal."""
            if step.finished:
                if not args.no_progress:
                    report_console.print_line(progress.console, step.line())
                return
            label = {"compare": "comparing and auditing", "causal": "checking causes"}.get(step.name,
                                                                                          f"running {step.name}")
            progress.update(task, completed=steps.index(step.name), description=label)

        try:
            report = compare_mod.compare(args.model, inputs=args.inputs, seed=args.seed or 0, dims=dims,
                                         ties=args.ties, runtimes=runtimes, tolerances=tolerances,
                                         openvino_precision=args.openvino_precision, trace=args.trace,
                                         timeout=args.timeout, progress=tell)
        except (compare_mod.InputError, compare_mod.ModelError) as exc:
            progress.stop()
            return fail(str(exc))
        progress.update(task, completed=len(steps))
    try:  # the folder was checked before the run, but a report's name may be taken by a folder
        json_path, md_path, html_path = compare_mod.write_reports(report, out)
    except OSError as exc:
        return fail(f"the report cannot be written: {exc}")
    render.print_summary(report, console)
    report_console.print_line(console, f"Report ({md_path.name}, {html_path.name}, {json_path.name}) in")
    report_console.print_line(console, f"  {out}")
    return compare_mod.exit_status(report)


def _lower(args: argparse.Namespace) -> int:
    """``ortops lower IN -o OUT [--standalone] [--standard]``: 0 written; 1 ``--standalone`` and some node has
    no exact composition (nothing written); 2 usage error (unreadable model, invalid node)."""
    import onnx

    from .errors import OpError
    from .lowering import lower

    def fail(message: str, status: int = EXIT_USAGE) -> int:
        print(f"ortops lower: {message}", file=sys.stderr)
        return status

    if problem := _output_problem("-o", args.output, directory=False):
        return fail(problem)
    try:
        model = onnx.load(args.model)
    except Exception as exc:  # noqa: BLE001 - a file that is missing or not a model
        return fail(f"cannot read {args.model}: {exc}")
    if not model.graph.node and not model.graph.output:  # e.g. an empty file: protobuf reads no field
        return fail(f"cannot read {args.model}: not an ONNX model (no graph)")
    try:
        lowered, report = lower(model, fallback="none" if args.standalone else "pyop", standard=args.standard)
    except OpError as exc:
        return fail(str(exc))
    except ValueError as exc:  # --standalone and a node without an exact composition
        return fail(str(exc), EXIT_UNEXPLAINED)
    out = pathlib.Path(args.output)
    try:
        onnx.save(lowered, out)
    except OSError as exc:  # e.g. the disk is full, or the folder went away meanwhile
        return fail(f"-o {out} cannot be written: {exc.strerror or exc}")
    for line in report.lines():
        print(line)
    kind = "guarded (ortops needed to run it)" if report.left else "standalone (no ortops node left)"
    standard = f", {len(report.rewritten)} standard rewritten" if args.standard else ""
    print(f"wrote {out}: {len(report.lowered)} lowered, {len(report.kept)} kept as PyOp{standard}; {kind}")
    return EXIT_OK


def _install_oracle(args: argparse.Namespace) -> int:
    import functools

    from .interop import ncnn_build

    try:
        ncnn_build.install(sdist=args.sdist, build_dir=args.build_dir, jobs=args.jobs,
                           log=functools.partial(print, flush=True))
    except (FileNotFoundError, ValueError, ncnn_build.MissingTools, ncnn_build.BuildError) as exc:
        print(f"ortops install-oracle: {exc}", file=sys.stderr)
        return EXIT_UNEXPLAINED if isinstance(exc, ncnn_build.BuildError) else EXIT_USAGE
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ortops", description="OpenVINO and ncnn op semantics in ONNX Runtime.",
        epilog="Exit statuses of 'ortops conformance': 0 no case unexplained, 1 some case unexplained, "
               "2 usage or environment error (bad option, --out is a file, a missing extra, too few cases).")
    parser.add_argument("--version", action="version", version=_versions())
    commands = parser.add_subparsers(dest="command", required=True)
    from . import ops

    conf = commands.add_parser(
        "conformance", help="run the conformance cases and write a report",
        epilog="Exit status: 0 no case unexplained, 1 some case unexplained, 2 usage or environment error.")
    conf.add_argument("--out", default="ortops-report", help="report directory (default: ./ortops-report)")
    conf.add_argument("--ops", nargs="+", choices=[op.op_type for op in ops.OPS],
                      help="only these ops (default: all)")
    conf.add_argument("--sources", nargs="+", choices=["seed-example", "onnx-backend-test", "generated", "real-model"],
                      help="only cases from these sources (default: all)")
    conf.add_argument("--oracle", action="append", choices=["onnxruntime", "openvino", "ncnn"],
                      help="oracles besides the reference (repeatable; onnxruntime always runs; "
                           "openvino needs the openvino extra; ncnn needs 'ortops install-oracle ncnn')")
    conf.add_argument("--min-cases", type=int, metavar="N",
                      help="exit 2 unless at least N cases are judged (default: 1; a run that judges nothing fails)")
    conf.add_argument("--no-progress", action="store_true", help="no progress bar")
    conf.add_argument("--save-cases", metavar="DIR",
                      help="also write each case as NAME.onnx, NAME.inputs.npz, NAME.expected.npz and NAME.json "
                           "(its expected outputs and verdicts)")
    conf.add_argument("--case", action="append", metavar="NAME",
                      help="judge only the case NAME (repeatable) and print everything about it; no report")
    conf.add_argument("--from", dest="from_dir", metavar="DIR",
                      help="with --case: load the case saved by --save-cases in DIR instead of collecting it, "
                           "and compare the new verdict with the saved one (exit 1 when it changed)")
    conf.set_defaults(func=_conformance)
    from .compare.outputs import DEFAULT_ATOL, DEFAULT_QUANTILE, DEFAULT_RTOL
    from .compare.runtimes import RUNTIMES
    from .interop.openvino import PRECISIONS

    comp = commands.add_parser(
        "compare", help="run a model in ONNX Runtime, OpenVINO and the reference; explain every difference",
        description="Run MODEL in each runtime on the same inputs, compare every output (Polygraphy-style), "
                    "audit the nodes whose semantics runtimes disagree on (TopK, ArgMax, ArgMin, scatters, "
                    "ortops nodes) and explain each difference, down to the node.",
        epilog="Exit status: 0 every difference within tolerance or explained, 1 some difference unexplained "
               "(or a runtime failed without a visible cause), 2 usage or environment error (not an ONNX model, "
               "inputs that do not fit, a missing --dim, fewer than two runtimes ran).")
    comp.add_argument("model", metavar="MODEL.onnx", help="the ONNX model (external data files next to it)")
    comp.add_argument("--inputs", metavar="FILE.npz", help="inputs by name (default: generated from the model)")
    comp.add_argument("--seed", type=int, help="seed of generated inputs (default: 0)")
    comp.add_argument("--dim", action="append", metavar="NAME=VALUE", default=[],
                      help="size of a symbolic dimension of generated inputs (repeatable)")
    comp.add_argument("--ties", action="store_true", help="generated inputs with few distinct values (ties)")
    comp.add_argument("--runtimes", nargs="+", choices=RUNTIMES, default=list(RUNTIMES),
                      help="runtimes to run, the first one that runs is the baseline (default: all)")
    comp.add_argument("--atol", action="append", default=[], metavar="[OUTPUT=]A",
                      help=f"absolute tolerance, of every output or of OUTPUT only (repeatable; default: {DEFAULT_ATOL:g})")
    comp.add_argument("--rtol", action="append", default=[], metavar="[OUTPUT=]R",
                      help=f"relative tolerance, of every output or of OUTPUT only (repeatable; default: {DEFAULT_RTOL:g})")
    comp.add_argument("--check-error-stat", action="append", default=[], metavar="[OUTPUT=]STAT",
                      help="what a float output is judged by, as Polygraphy's: elemwise (every element within "
                           "atol + rtol*|baseline|; default), or max, mean, median, quantile of the errors "
                           "(passes when the absolute one <= atol or the relative one <= rtol); repeatable")
    comp.add_argument("--error-quantile", action="append", default=[], metavar="[OUTPUT=]Q",
                      help=f"the quantile in [0, 1] --check-error-stat quantile uses (repeatable; default: {DEFAULT_QUANTILE})")
    comp.add_argument("--openvino-precision", choices=PRECISIONS, default="f32",
                      help="OpenVINO's INFERENCE_PRECISION_HINT (default: f32; 'default': the CPU plugin's choice, "
                           "bf16 on CPUs that have it)")
    comp.add_argument("--trace", action="store_true",
                      help="expose every tensor, not only the audited nodes', and name the first node where "
                           "the runtimes split")
    comp.add_argument("--timeout", type=float, metavar="SECONDS",
                      help="give up on a runtime after this long (reported as crashed; default: no limit)")
    comp.add_argument("--out", default="ortops-compare", help="report directory (default: ./ortops-compare)")
    comp.add_argument("--no-progress", action="store_true",
                      help="no progress bar and no line per finished runtime")
    comp.set_defaults(func=_compare)

    low = commands.add_parser(
        "lower", help="replace ortops nodes by exact compositions of standard ONNX ops",
        epilog="Exit status: 0 written; 1 --standalone and some node has no exact composition (nothing written); "
               "2 usage error.")
    low.add_argument("model", help="the input .onnx model")
    low.add_argument("-o", "--output", required=True, help="where to write the lowered model")
    low.add_argument("--standalone", action="store_true",
                     help="leave no ortops node (the model then runs in plain ONNX Runtime or OpenVINO); fail if a "
                          "node has no exact composition. Default: guarded, each lowered node keeps its PyOp as "
                          "the fallback for inputs the composition cannot take exactly")
    low.add_argument("--standard", action="store_true",
                     help="also rewrite the standard TopK, ArgMax and ArgMin nodes into compositions that give the "
                          "ONNX spec's answer on ties in any runtime (NaN above every number); a node without one "
                          "is left as it was, with the reason printed")
    low.set_defaults(func=_lower)

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


class Terminated(BaseException):
    """SIGTERM arrived: raised like ``KeyboardInterrupt``, so that every ``finally`` removes what
    the command made (a model written next to the user's, temporary folders)."""


def _terminate(signum, frame):
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """Run one command (``argv``, default ``sys.argv[1:]``); its exit status. Ctrl-C and SIGTERM
    end it with one line on stderr, its temporary files removed; the process then dies of the
    signal as its default would (a shell loop stops), except that a caller who passed ``argv``
    gets the ``KeyboardInterrupt``. A stdout that is closed, or cannot encode a character
    (``PYTHONIOENCODING=ascii``), does not stop it."""
    entry = argv is None  # the program itself (the ``ortops`` command), not a caller in Python
    argv = sys.argv[1:] if argv is None else list(argv)
    if sys.stdout is None:  # started with stdout closed
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):  # not a text stream of the io module
            stream.reconfigure(errors="backslashreplace")
    on_term = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        on_term = signal.signal(signal.SIGTERM, _terminate)
    try:
        if argv[:1] == ["bench"]:  # the benchmark parses its own options (ortops bench --quick)
            from . import bench

            return bench.main(argv[1:])
        args = build_parser().parse_args(argv)
        return args.func(args)
    except (KeyboardInterrupt, Terminated) as exc:
        interrupted = isinstance(exc, KeyboardInterrupt)
        print(f"ortops {argv[0] if argv else ''}: {'interrupted' if interrupted else 'terminated (SIGTERM)'}",
              file=sys.stderr, flush=True)
        if interrupted and not entry:
            raise  # a caller in Python gets its KeyboardInterrupt
        # Die of the signal, as its default would: a shell loop stops on it (an exit status of
        # 130 would tell the shell the command handled it).
        signum = signal.SIGINT if interrupted else signal.SIGTERM
        with contextlib.suppress(ValueError, OSError):  # not the main thread: the status says it
            signal.signal(signum, signal.SIG_DFL)
            sys.stdout.flush()
            atexit._run_exitfuncs()  # what an exit would do first (multiprocessing removes its folder)
            os.kill(os.getpid(), signum)
        return 128 + signum
    finally:
        if on_term is not None:
            signal.signal(signal.SIGTERM, on_term)


if __name__ == "__main__":
    sys.exit(main())
