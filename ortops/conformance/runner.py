"""Collect the conformance cases of every op and judge them, with a progress bar."""

from __future__ import annotations

import time
from typing import Callable, Iterable, Sequence

from . import real_model, top_k
from .cases import Case, Check, Result

__all__ = ["SUITES", "collect_cases", "judge_case", "run"]

# op -> (judge, case sources). A source is a callable returning cases; real-model sources run
# only when the ``ocr`` extra is installed.
SUITES: dict[str, tuple[Callable[[Case], list[Check]], tuple[Callable[[], list[Case]], ...]]] = {
    "TopK": (top_k.judge, (top_k.seed_cases, top_k.onnx_backend_cases, top_k.generated_cases, real_model.top_k_cases)),
}


def collect_cases(ops: Sequence[str] | None = None, sources: Sequence[str] | None = None) -> tuple[list[Case], list[str]]:
    """All cases of ``ops`` (default: every op) from ``sources`` (default: all four).

    Returns the cases and notes on what could not be collected (e.g. the ``ocr`` extra is
    missing, so there are no real-model cases).
    """
    cases, notes = [], []
    for op in ops or SUITES:
        _, makers = SUITES[op]
        for make in makers:
            if make.__module__.endswith("real_model") and not real_model.available():
                notes.append(f"{op}: no real-model cases: the ocr extra is not installed (pip install 'ortops[ocr]')")
                continue
            cases += [c for c in make() if sources is None or c.source in sources]
    return cases, notes


def judge_case(case: Case) -> Result:
    """Judge one case; an exception anywhere becomes an unexplained verdict, never a crash."""
    judge, _ = SUITES[case.op]
    start = time.perf_counter()
    try:
        checks = judge(case)
    except Exception as exc:  # noqa: BLE001 - the report must say what went wrong, case by case
        checks = [Check("ortops", "unexplained", f"{type(exc).__name__}: {exc}")]
    return Result(case, checks, time.perf_counter() - start)


def run(cases: Iterable[Case], *, progress: bool = True) -> list[Result]:
    """Judge every case, showing a progress bar on the terminal when ``progress``."""
    cases = list(cases)
    if not progress:
        return [judge_case(c) for c in cases]
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    results = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("conformance", total=len(cases))
        for case in cases:
            bar.update(task, description=f"{case.op} {case.name[:40]}")
            results.append(judge_case(case))
            bar.advance(task)
    return results
