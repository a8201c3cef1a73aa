"""ortops' process-wide resources: the inner ORT sessions and the one worker pool.

Everything ortops keeps for the life of a process, apart from the bridge's registrations
(:mod:`ortops.bridge`), lives here. onnxruntime is imported only when the first inner
session is built, never on import.

The resources
-------------
**Inner sessions** (:func:`inner_session`). Kernels hand work to ORT's own built-in ops
(:mod:`ortops.kernels.selection`: TopK-11) through small ``onnxruntime.InferenceSession``
objects, cached by a key (one per element type, mode, rank and order: at most a few dozen).
Each is created with ``intra_op_num_threads=1`` and ``inter_op_num_threads=1``: ORT then
starts **no** thread for it, and the work runs on the calling thread. Without this, every
inner session owned an intra-op pool of its own (one thread per core): dozens of idle,
spinning threads that ignored the user's threading settings.

**The worker pool** (:func:`pool`, :func:`parallel_map`). One ``ThreadPoolExecutor`` for the
whole process, created on first use, with :func:`worker_count` threads: the number of CPUs
this process may run on, minus one (the caller works too), at most 15; the environment
variable ``ORTOPS_NUM_THREADS`` sets the total instead (``1``: no worker thread at all, all
work on the calling thread). Large selections are split into row blocks that run on the
pool and the caller at once; ORT releases the GIL while it runs, so they run in parallel.
Tasks on the pool never wait for other pool tasks, so a full pool only queues work.

So ortops adds at most ``worker_count()`` threads to a process, whatever it runs.
ORT's own global thread pool (``set_global_thread_pool_sizes``, ``use_per_session_threads``)
was not used: it is reachable only through ``onnxruntime.capi._pybind_state`` and must be
configured before ORT's environment exists, which a user's own session has usually created
already.

Threads
-------
:func:`inner_session` and :func:`pool` may be called from any thread: creation happens
under one lock, lookups are lock-free dict reads. An ORT session's ``run`` may be called
from several threads at once, so one inner session serves every thread.

Fork
----
``os.fork`` (``multiprocessing``'s default start method on Linux before Python 3.14) copies
the memory but only the forking thread. In the child, a pool's worker threads are gone while
its bookkeeping says they exist (a submitted task would wait forever), a lock may be held by
a thread that no longer exists, and an inner session's allocator may have been locked by one.
:func:`_after_fork_in_child`, registered with ``os.register_at_fork``, therefore gives the
child a new lock, no pool (the next use starts a fresh one) and no inner sessions (the next
use builds fresh ones). The parent's objects are kept referenced, never destroyed, in the
child: their destructors would join threads or take locks that do not exist there.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Hashable, Sequence, TypeVar

__all__ = ["inner_session", "pool", "parallel_map", "worker_count", "THREADS_ENV"]

T = TypeVar("T")
R = TypeVar("R")

#: The environment variable that sets the total number of threads ortops works with
#: (the caller included); read when the pool is first created.
THREADS_ENV = "ORTOPS_NUM_THREADS"
_MAX_WORKERS = 15

_lock = threading.Lock()
_sessions: dict[Hashable, object] = {}
_pool: ThreadPoolExecutor | None = None
_abandoned: list = []  # the parent's pool and sessions, in a forked child: never destroyed


def worker_count() -> int:
    """Worker threads of the pool: ``ORTOPS_NUM_THREADS - 1``, or the usable CPUs - 1 (at most 15)."""
    configured = os.environ.get(THREADS_ENV, "").strip()
    if configured:
        try:
            return max(int(configured), 1) - 1
        except ValueError:
            pass  # an unparsable value falls back to the default
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return min(max(cpus - 1, 0), _MAX_WORKERS)


def pool() -> ThreadPoolExecutor | None:
    """The process's one worker pool, or None when :func:`worker_count` is 0."""
    global _pool
    if _pool is None:
        workers = worker_count()
        if workers == 0:
            return None
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ortops-worker")
    return _pool


def parallel_map(function: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[function(item) for item in items]``, the first item on the calling thread and the
    others on the pool at the same time. ``function`` must not wait for pool tasks itself."""
    executor = pool() if len(items) > 1 else None
    if executor is None:
        return [function(item) for item in items]
    futures = [executor.submit(function, item) for item in items[1:]]
    first = function(items[0])
    return [first, *(future.result() for future in futures)]


def inner_session(key: Hashable, model: Callable[[], bytes]):
    """The cached single-threaded ``onnxruntime.InferenceSession`` for ``key``.

    ``model`` builds the serialised model; it is called once per key (per process). The
    session runs on the CPU provider, with ORT's warnings off (an inner session's inputs are
    checked by the kernel that calls it) and no intra- or inter-op threads.
    """
    session = _sessions.get(key)
    if session is None:
        with _lock:
            session = _sessions.get(key)
            if session is None:
                session = _sessions[key] = _new_session(model())
    return session


def _new_session(model: bytes):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _after_fork_in_child() -> None:
    global _lock, _pool, _sessions
    _abandoned.append((_pool, _sessions))
    _lock = threading.Lock()
    _pool = None
    _sessions = {}


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
