"""Collect the conformance cases of every op and judge them, with a progress bar."""

from __future__ import annotations

import sys
import time
from typing import Iterable, Sequence

from ..ops.tooling import TOOLING, tooling
from .. import real_model
from ..arrays import preview
from ..errors import OpError
from ..verdicts import Difference
from .cases import Case, Check, Result, expected_outputs
from .contracts import OpJudge, Suite

__all__ = ["SUITES", "suite", "judge_of", "collect_cases", "judge_case", "run", "complete_differences"]

#: The ops that have conformance cases (:class:`ortops.conformance.contracts.Suite`).
SUITES = tuple(t.op.op_type for t in TOOLING)


def suite(op: str) -> Suite:
    """The conformance cases of ``op`` (``ortops/ops/<op>/cases.py``)."""
    return tooling(op).cases


def judge_of(op: str) -> OpJudge:
    """The one judge of ``op`` (``ortops/ops/<op>/judge.py``)."""
    return tooling(op).judge


def collect_cases(ops: Sequence[str] | None = None, sources: Sequence[str] | None = None) -> tuple[list[Case], list[str]]:
    """All cases of ``ops`` (default: every op) from ``sources`` (default: all four).

    Returns the cases and notes on what could not be collected (e.g. the ``ocr`` extra is
    missing, so there are no real-model cases).
    """
    cases, notes = [], []
    for op in ops or SUITES:
        module = suite(op)
        for source, make in module.CASE_SOURCES.items():
            if sources is not None and source not in sources:
                continue
            if source == "real-model" and not real_model.available():
                notes.append(f"{op}: no real-model cases: the ocr extra is not installed (pip install 'ortops[ocr]')")
                continue
            cases += make()
    seen: dict[str, Case] = {}
    for case in cases:
        if case.name in seen:
            raise ValueError(f"two conformance cases are named {case.name!r} ({seen[case.name].op} and {case.op}): "
                             "a case name must be unique across ops (reports and --case use it)")
        seen[case.name] = case
    return cases, notes


def judge_case(case: Case, *, openvino: bool = False, ncnn: bool = False) -> Result:
    """Judge one case; an exception anywhere becomes an unexplained verdict, never a crash.

    With ``openvino``, the same ONNX model also runs in the OpenVINO runtime
    (:mod:`ortops.conformance.openvino_oracle`) and is judged there, and so does its standalone
    lowering, natively (:func:`ortops.conformance.lowering.judge_openvino`). With ``ncnn``, a case of
    an op ncnn has also runs in the real ncnn runtime, in a child process
    (:mod:`ortops.conformance.ncnn_oracle`).
    """
    from . import lowering

    start = time.perf_counter()
    checks = _checks("ortops", lambda c: judge_of(c.op).judge(c), case)
    for check in checks:  # the outputs someone else wrote: their family is the case's to say
        if check.oracle == case.expected_from:
            check.family = case.expected_family
    checks += _checks(lowering.ORACLES[0], lowering.judge_paths, case, limit=400)
    if openvino:
        from . import openvino_oracle

        checks += _checks("openvino", openvino_oracle.judge_openvino, case)
        checks += _checks(lowering.OPENVINO, lowering.judge_openvino, case, limit=400)
    if ncnn:
        from . import ncnn_oracle

        checks += _checks("ncnn", ncnn_oracle.judge_ncnn, case)
    complete_differences(case, checks)
    return Result(case, checks, time.perf_counter() - start)


def _checks(oracle: str, judge, case: Case, limit: int | None = None) -> list[Check]:
    """``judge(case)``; an exception becomes an unexplained check by ``oracle`` (a bug in one judge
    must not hide the others' checks)."""
    try:
        return judge(case)
    except Exception as exc:  # noqa: BLE001 - the report must say what went wrong, case by case
        return [Check(oracle, "unexplained", f"{type(exc).__name__}: {exc}"[:limit])]


def run(cases: Iterable[Case], *, progress: bool = True, openvino: bool = False, ncnn: bool = False) -> list[Result]:
    """Judge every case, showing a progress bar when ``progress`` and stdout is a terminal."""
    try:
        return _run(list(cases), progress, openvino=openvino, ncnn=ncnn)
    finally:
        if ncnn:
            from . import ncnn_oracle

            ncnn_oracle.close()  # the oracle's child process


def _run(cases: list[Case], progress: bool, **oracles: bool) -> list[Result]:
    if not progress or not sys.stdout.isatty():  # no bar (not even its blank line) in a pipe or a CI log
        return [judge_case(c, **oracles) for c in cases]
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    results = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("conformance", total=len(cases))
        for case in cases:
            bar.update(task, description=f"{case.op} {case.name[:40]}")
            results.append(judge_case(case, **oracles))
            bar.advance(task)
    return results


def complete_differences(case, checks) -> None:
    """Give every non-agree check without a difference one: what ortops returned on the case
    (its spec's reference answer, which the ``reference`` check compares with ortops, or the
    OpError it raises) against what the check's oracle observed (its detail, or its reason
    when it could not run). Judges that compared arrays attach their own, element by element;
    this covers the verdicts that are about an outcome (a skipped oracle, an error)."""
    missing = [c for c in checks if c.status != "agree" and c.difference is None]
    if not missing:
        return
    try:
        expected = expected_outputs(case)
        ours = (f"OpError ({expected.kind}): {expected.detail}" if isinstance(expected, OpError)
                else "; ".join(f"{n}={preview(o)}" for n, o in expected.items()))
    except Exception as exc:  # noqa: BLE001 - the report says what could not be computed
        ours = f"(not computed: {type(exc).__name__}: {exc})"
    for check in missing:
        theirs = ("not compared: " if check.status == "skipped" else "") + (check.detail or check.reason)
        check.difference = Difference.outcome("ortops (= the reference)", ours, check.oracle, theirs)
