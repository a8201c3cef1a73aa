"""The conformance runner: ``ortops conformance``. See :func:`main` in :mod:`ortops.cli`."""

from .cases import Case, Check, Result
from .report import print_summary, summary, write_reports
from .runner import SUITES, collect_cases, judge_case, run


def __getattr__(name: str):
    """The old names ``ortops.conformance.top_k`` (etc.): each op's suite module, which lives in
    ``ortops/ops/<op>/conformance.py``."""
    import importlib

    from ..ops import OPS

    for op in OPS:
        if op.conformance.rsplit(".", 2)[-2] == name:
            return importlib.import_module(op.conformance)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Case", "Check", "Result", "SUITES", "collect_cases", "judge_case", "print_summary", "run", "summary",
           "write_reports"]
