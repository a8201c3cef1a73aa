"""The real ncnn runtime as an oracle (``--oracle ncnn``): run each case of an op ncnn has in
ncnn, in a child process (:mod:`ortops.processes`: a crash is a verdict, never the end of the run),
and judge the answer against ortops' (the NumPy reference) with the op's judge (``NCNN``).

Accepted cases run in one long-lived child, hostile ones (the op's ``isolate``: ArgMax with NaN)
and cases ortops rejects in a child of their own (real ncnn may corrupt its heap before it dies).
The verdicts and their topics: docs/conformance.md.
"""

from __future__ import annotations

import atexit
import functools

from .. import divergences
from ..arrays import short as arrays_short
from ..errors import OpError
from ..ops import by_name
from ..ops.tooling import tooling
from ..verdicts import Case, Check, verdict
from .contracts import NcnnJudge
from ..processes import Outcome, Worker, call_once

__all__ = ["ORACLE", "judge_ncnn", "unavailable", "check", "short", "run_ncnn", "close"]

ORACLE = "ncnn"

_ERROR_RETURNED = "ortops raises OpError (the input is invalid or undefined in the spec); ncnn returns a result"
_ERROR_BOTH = "ortops raises OpError and ncnn rejects the input too; nothing to compare"
_MISSING = "the real ncnn runtime with ortops' layers is not installed (ortops install-oracle ncnn); ncnn could not judge"

_worker: Worker | None = None


#: ``check(status, topic, reason="", detail="")``: an ncnn check with its topic.
check = functools.partial(verdict, ORACLE)


@functools.lru_cache(maxsize=1)
def _installed():
    from ..interop.ncnn_build import installed_release

    return installed_release()


def unavailable() -> str | None:
    """Why real ncnn cannot judge here (it does not import, or dies on import, e.g. SIGILL on a
    CPU it was not built for; or it was built without a needed layer), or None."""
    found, missing, error = _installed()
    if found is None:
        return error
    if missing:
        return f"ncnn {found} has no layer {', '.join(missing)} (the PyPI wheel is built without it)"
    return None


def short(arrays) -> str:
    """A short printout of a few arrays, for a check's detail."""
    return arrays_short(arrays, threshold=16, edgeitems=4)


def _op_oracle(case: Case) -> NcnnJudge | None:
    return getattr(tooling(case.op).judge, "NCNN", None)


def close() -> None:
    """End the long-lived child (the next call starts a new one)."""
    global _worker
    if _worker is not None:
        _worker.close()
        _worker = None


atexit.register(close)


def run_ncnn(case: Case, inputs: dict | None = None, *, fresh: bool = False) -> Outcome:
    """The op's ncnn runner on ``inputs`` (default: the case's) in a child process: the
    long-lived one, or (``fresh``) one of its own."""
    global _worker
    oracle = _op_oracle(case)
    args = [(inputs or case.inputs)[name] for name in by_name(case.op).inputs]
    if fresh:
        return call_once(oracle.RUNNER, *args, **case.attrs)
    if _worker is None:
        _worker = Worker()
    return _worker.call(oracle.RUNNER, *args, **case.attrs)


def _judge_error(case: Case, error: OpError) -> Check:
    topic = divergences.ERROR_TOPICS.get(error.kind, "invalid-input")
    not_run = getattr(_op_oracle(case), "NOT_RUN", {}).get(error.kind)
    if not_run:
        return check("skipped", topic, not_run, f"ortops: {error}")
    outcome = run_ncnn(case, fresh=True)
    said = f"returned {short([outcome.value])}" if outcome.ok else outcome.describe()
    if outcome.ok or outcome.crash:  # a crash on an input ortops rejects is ncnn's answer to it
        return check("explained", topic, divergences.reason(topic, ORACLE, case.op, _ERROR_RETURNED),
                     f"ortops: {error}; ncnn {said}")
    return check("skipped", topic, _ERROR_BOTH, f"ortops: {error}; ncnn {said}")


def judge_ncnn(case: Case) -> list[Check]:
    """Real ncnn's verdict on one case (oracle ``"ncnn"``): none for an op ncnn does not have, else
    one check: ``agree``, ``explained`` (a known divergence shown in this case), ``skipped`` (ncnn is
    missing, or rejects an input ortops rejects too) or ``unexplained``."""
    oracle = _op_oracle(case)
    if oracle is None:
        return []
    missing = unavailable()
    if missing:
        return [check("skipped", "ncnn-missing", _MISSING, missing)]
    try:
        want = oracle.expected(case.inputs, case.attrs)
    except OpError as error:
        return [_judge_error(case, error)]
    outcome = run_ncnn(case, fresh=oracle.isolate(case))
    if not outcome.ok:
        return [check("unexplained", None, "ncnn failed on a case ortops accepts", outcome.describe())]
    got = outcome.value
    if oracle.matches(case, got, want):
        return [check("agree", None)]
    explained = oracle.explain(case, got, want, functools.partial(run_ncnn, case))
    return [explained or check("unexplained", None, "ncnn and ortops differ and no known behaviour accounts for it",
                               f"{oracle.difference(got, want)}; ncnn: {short([got])}; ortops: {short([want])}")]
