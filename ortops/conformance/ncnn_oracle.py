"""The real ncnn runtime as an oracle: run each conformance case of an ``ortops.ncnn`` op in ncnn,
in a child process, and judge the answer (``ortops conformance --oracle ncnn``).

ncnn's pip wheel has no ArgMax layer; ``ortops install-oracle ncnn``
(:mod:`ortops.interop.ncnn_build`) builds one from ncnn's source package. Real ncnn can read
stray memory, abort or segfault on inputs that ortops refuses, so every call into it runs in a
child process (:mod:`ortops.processes`): a crash is a verdict, never the end of the
run.

How a case is judged
--------------------
* ortops' answer is the op's NumPy reference (the suites already check that ortops equals it).
* Cases ortops accepts run in one long-lived child; cases the op marks as hostile (ArgMax: NaN
  in the data, where ncnn's sort gets a comparator that is no strict weak order) run in a child
  of their own. Exactly equal -> ``agree``. A difference is ``explained`` only when the op's
  judge (``NCNN`` of ``ortops/ops/<op>/judge.py``) shows its cause in that very case, else it is
  ``unexplained``; a crash on a case ortops accepts is ``unexplained``.
* Cases ortops rejects with OpError run in a child of their own (real ncnn may corrupt its
  heap before it dies): ``explained`` when ncnn returns something or crashes (what it returned,
  or the signal and what it wrote to stderr, goes into the detail), ``skipped`` when ncnn
  rejects the input too. Errors of a kind the op's judge lists in ``NOT_RUN`` (ArgMax: a dtype
  other than float32, which ncnn's layer cannot even be given) are ``skipped`` without a run.
* Ops that ncnn does not have (their judge has no ``NCNN``) get no ncnn check.

Every explained or skipped check carries its topic (:mod:`ortops.divergences`) and its reason
from the divergence table's ncnn rows.
"""

from __future__ import annotations

import atexit
import functools


from .. import divergences
from ..arrays import short as arrays_short
from ..errors import OpError
from ..ops import by_name
from ..verdicts import Case, Check
from .contracts import NcnnJudge
from ..processes import Outcome, Worker, call_once

__all__ = ["ORACLE", "judge_ncnn", "unavailable", "check", "short", "run_ncnn", "close", "version"]

ORACLE = "ncnn"

_ERROR_RETURNED = "ortops raises OpError (the input is invalid or undefined in the spec); ncnn returns a result"
_ERROR_BOTH = "ortops raises OpError and ncnn rejects the input too; nothing to compare"
_MISSING = "the real ncnn runtime with ortops' layers is not installed (ortops install-oracle ncnn); ncnn could not judge"

_worker: Worker | None = None


def check(status: str, topic: str | None, reason: str = "", detail: str = "") -> Check:
    """An ncnn check with its topic."""
    return Check(ORACLE, status, reason, detail, topic=topic)


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


def version() -> str | None:
    """The installed ncnn's version, or None."""
    return _installed()[0]


def short(arrays) -> str:
    """A short printout of a few arrays, for a check's detail."""
    return arrays_short(arrays, threshold=16, edgeitems=4)


def _op_oracle(case: Case) -> NcnnJudge | None:
    """How the case's op judges real ncnn's answer (its judge's ``NCNN``), None if ncnn lacks the op."""
    return getattr(by_name(case.op).judge(), "NCNN", None)


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


def _reason(topic: str, op: str, fallback: str) -> str:
    try:
        return divergences.reason(topic, ORACLE, op)
    except KeyError:
        return fallback


def _judge_error(case: Case, error: OpError) -> Check:
    topic = divergences.ERROR_TOPICS.get(error.kind, "invalid-input")
    not_run = getattr(_op_oracle(case), "NOT_RUN", {}).get(error.kind)
    if not_run:
        return check("skipped", topic, not_run, f"ortops: {error}")
    outcome = run_ncnn(case, fresh=True)
    if outcome.ok:
        return check("explained", topic, _reason(topic, case.op, _ERROR_RETURNED),
                     f"ortops: {error}; ncnn returned {short([outcome.value])}")
    if outcome.crash:
        return check("explained", topic, _reason(topic, case.op, _ERROR_RETURNED),
                     f"ortops: {error}; ncnn {outcome.describe()}")
    return check("skipped", topic, _ERROR_BOTH, f"ortops: {error}; ncnn {outcome.describe()}")


def judge_ncnn(case: Case) -> list[Check]:
    """Real ncnn's verdict on one conformance case (oracle name ``"ncnn"``).

    Parameters
    ----------
    case : Case
        A case of any op's conformance suite.

    Returns
    -------
    list of Check
        Empty for an op ncnn does not have; else one check: ``agree``, ``explained`` (a known
        divergence, shown in this case: see the module docstring), ``skipped`` (ncnn is
        missing, or rejects an input ortops rejects too) or ``unexplained``.
    """
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
    if explained is not None:
        return [explained]
    return [check("unexplained", None, "ncnn and ortops differ and no known behaviour accounts for it",
                  f"{oracle.difference(got, want)}; ncnn: {short([got])}; ortops: {short([want])}")]
