"""ortops' process-wide resources: the inner ORT sessions (:func:`inner_session`, single-threaded),
the one worker pool (:func:`pool`, :func:`parallel_map`; ``ORTOPS_NUM_THREADS``), the named caches
(:func:`cached`: ``functools.lru_cache`` per name) and the signal guard (:func:`guard_signals`).

Every function may be called from any thread. A forked child starts with new locks (:class:`Lock`
too), no pool, no inner sessions and empty caches; the parent's objects are kept, never destroyed, in the child.
Importing this module starts nothing and imports no runtime. How each resource behaves under
threads, signals and ``fork``, and why, is in docs/architecture.md ("Process-wide state").
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Hashable, Sequence, TypeVar

__all__ = ["inner_session", "cached", "entries", "clear", "pool", "parallel_map", "worker_count", "usable_cpus", "THREADS_ENV", "Interrupt", "guard_signals",
           "bridge_code", "kernel_started", "kernel_finished", "redeliver", "deliver", "abandon", "Lock"]

T = TypeVar("T")
R = TypeVar("R")

#: The environment variable that sets the total number of threads ortops works with
#: (the caller included); read when the pool is first created.
THREADS_ENV = "ORTOPS_NUM_THREADS"
_MAX_WORKERS = 15

_lock = threading.Lock()
_sessions: dict[Hashable, object] = {}
_pool: ThreadPoolExecutor | None = None
_caches: dict[str, tuple] = {}  # name -> (lock, functools.lru_cache, the entries it holds)
_abandoned: list = []  # the parent's pool and sessions, in a forked child: never destroyed


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity), at least 1."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count() -> int:
    """Worker threads of the pool: ``ORTOPS_NUM_THREADS - 1``, or the usable CPUs - 1 (at most 15)."""
    configured = os.environ.get(THREADS_ENV, "").strip()
    if configured:
        try:
            return max(int(configured), 1) - 1
        except ValueError:
            pass  # an unparsable value falls back to the default
    return min(max(usable_cpus() - 1, 0), _MAX_WORKERS)


def pool() -> ThreadPoolExecutor | None:
    """The process's one worker pool, or None when :func:`worker_count` is 0."""
    global _pool
    if _pool is None:
        workers = worker_count()
        if workers == 0:
            return None
        with _lock:
            if _pool is None:
                _watch_fork()
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
                _watch_fork()
                session = _sessions[key] = _new_session(model())
    return session


class _Entry:
    """What a named cache's ``functools.lru_cache`` is called with: equal to another by its key
    alone, it carries the builder until it has built the object, then the object (so that
    :func:`entries` can list what the cache holds)."""

    __slots__ = ("key", "build", "value", "__weakref__")

    def __init__(self, key: Hashable, build: Callable):
        self.key, self.build = key, build

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return self.key == other.key


def _build(entry: _Entry):
    entry.value, entry.build = entry.build(), None  # the builder, and what it refers to, is not kept
    return entry.value


def cached(cache: str, key: Hashable, build: Callable[[], T], *, limit: int | None = None) -> T:
    """The object :func:`build` made for ``key`` in the named cache ``cache``, built on first use.

    Parameters
    ----------
    cache : str
        The cache's name, e.g. ``"openvino.compiled"``.
    key : hashable
        What identifies the object within the cache.
    build : callable
        Makes the object; called under the cache's own lock (building may take seconds: other
        threads that want an object of the same cache wait), so every thread gets the one
        object stored.
    limit : int, optional
        Keep at most this many objects in the cache, dropping the least recently used
        (``functools.lru_cache(maxsize=limit)``).
    """
    with _lock:
        if cache not in _caches:
            _watch_fork()
            _caches[cache] = (threading.RLock(), functools.lru_cache(maxsize=limit)(_build), weakref.WeakSet())
        lock, lookup, held = _caches[cache]
    entry = _Entry(key, build)
    with lock:
        value = lookup(entry)
        if entry.build is None:  # built now: the lru_cache holds this entry until it drops it
            held.add(entry)
    return value


def entries(cache: str) -> dict:
    """A copy of the named cache's entries (key -> object), in no particular order."""
    with _lock:
        found = _caches.get(cache)
    if found is None:
        return {}
    with found[0]:
        return {entry.key: entry.value for entry in list(found[2])}


def clear(cache: str) -> None:
    """Forget every object of the named cache (the objects die when nothing else holds them)."""
    with _lock:
        _caches.pop(cache, None)


def _new_session(model: bytes):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


class Interrupt(BaseException):
    """A signal that arrived while a kernel ran on the main thread: the kernel stops, the
    signal is delivered again once the main thread is out of the bridge."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_GUARDED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGALRM", "SIGUSR1", "SIGUSR2")
                 if hasattr(signal, name))
_bridge_codes: set = set()
_state = threading.local()
_originals: dict[int, Callable] = {}


def bridge_code(function: Callable) -> Callable:
    """Mark ``function`` as a bridge entry point: no exception may leave a frame of it."""
    _bridge_codes.add(function.__code__)
    return function


def kernel_started() -> None:
    """The calling thread now runs a kernel inside the bridge's ``try``: a signal may stop it."""
    _state.in_kernel = True


def kernel_finished() -> None:
    _state.in_kernel = False


def _in_bridge(frame) -> bool:
    while frame is not None:
        if frame.f_code in _bridge_codes:
            return True
        frame = frame.f_back
    return False


def _guard(signum: int, frame) -> None:
    if _in_bridge(frame):
        if getattr(_state, "in_kernel", False):
            raise Interrupt(signum)
        redeliver(signum)
        return
    deliver(signum, frame)


def deliver(signum: int, frame=None) -> None:
    """Run the handler the signal had before :func:`guard_signals` wrapped it. A handler that
    chains to the one it replaced, which may be ours, ends the chain here: SIGINT's default."""
    original = _originals.get(signum)
    delivering = getattr(_state, "delivering", frozenset())
    if callable(original) and signum not in delivering:
        _state.delivering = delivering | {signum}
        try:
            original(signum, frame if frame is not None else sys._getframe(1))
        finally:
            _state.delivering = delivering
    elif signum == signal.SIGINT:
        raise KeyboardInterrupt


def redeliver(signum: int) -> None:
    """Send ``signum`` to the main thread again once its Python stack is out of the bridge."""
    main = threading.main_thread().ident

    def wait_and_send() -> None:
        for _ in range(60_000):  # at most a minute of 1 ms steps
            frame = sys._current_frames().get(main)
            if frame is None or not _in_bridge(frame):
                break
            time.sleep(0.001)
        if hasattr(signal, "pthread_kill"):
            signal.pthread_kill(main, signum)
        else:  # pragma: no cover - Windows
            import _thread

            _thread.interrupt_main(signum)

    threading.Thread(target=wait_and_send, name="ortops-redeliver", daemon=True).start()


def guard_signals() -> None:
    """Wrap the Python handlers of SIGINT (and SIGTERM, ... when they have one); see Signals.

    Does nothing off the main thread (Python sets handlers on the main thread only).
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _GUARDED:
        current = signal.getsignal(signum)
        if current is _guard or not callable(current):
            continue  # already wrapped, or SIG_DFL / SIG_IGN: not Python code, nothing to guard
        _originals[signum] = current
        signal.signal(signum, _guard)


def abandon(resource: object) -> None:
    """Keep ``resource`` (a parent's object, in a forked child) referenced for good: its
    destructor could wait on a thread or lock the child does not have."""
    _abandoned.append(resource)


class Lock:
    """A ``threading.Lock`` that a forked child starts with released: a thread of the parent may
    have held it at the fork, and the child has no thread to release it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        _locks.add(self)

    def __enter__(self) -> None:
        if not _fork_hook:
            with _lock:
                _watch_fork()
        self._lock.acquire()

    def __exit__(self, *exc) -> None:
        self._lock.release()


_locks: weakref.WeakSet[Lock] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    global _lock, _pool, _sessions, _caches
    _abandoned.append((_pool, _sessions, _caches))
    _lock = threading.Lock()
    for lock in _locks:
        lock._lock = threading.Lock()
    _pool = None
    _sessions = {}
    _caches = {}


_fork_hook = False


def _watch_fork() -> None:
    """Register :func:`_after_fork_in_child` once, when the first resource is created (not on
    import: importing ortops has no side effects). Called with ``_lock`` held."""
    global _fork_hook
    if not _fork_hook and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
    _fork_hook = True
