"""The conformance runner: ``ortops conformance``. See :func:`main` in :mod:`ortops.cli`."""

from .report import print_summary, summary, write_reports
from .runner import SUITES, collect_cases, judge_case, run

__all__ = ["SUITES", "collect_cases", "judge_case", "print_summary", "run", "summary",
           "write_reports"]
