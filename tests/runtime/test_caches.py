"""ortops.runtime's named caches: built once per key, bounded, least recently used dropped."""

from __future__ import annotations

import threading

from ortops import runtime


def test_cached_builds_once_per_key_and_drops_the_least_recently_used():
    built = []

    def build(value):
        def make():
            built.append(value)
            return object()
        return make

    name = "test.cached"
    runtime.clear(name)
    first = runtime.cached(name, "a", build("a"), limit=2)
    assert runtime.cached(name, "a", build("a"), limit=2) is first
    second = runtime.cached(name, "b", build("b"), limit=2)
    runtime.cached(name, "a", build("a"), limit=2)              # "a" is now the most recent
    runtime.cached(name, "c", build("c"), limit=2)              # drops "b"
    assert runtime.cached(name, "a", build("a"), limit=2) is first
    assert runtime.cached(name, "b", build("b"), limit=2) is not second
    assert built == ["a", "b", "c", "b"]
    runtime.clear(name)
    assert runtime.cached(name, "a", build("a")) is not first


def test_cached_gives_every_thread_the_same_object():
    name = "test.threads"
    runtime.clear(name)
    results = []
    barrier = threading.Barrier(8)

    def worker():
        barrier.wait()
        results.append(runtime.cached(name, "key", object))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8 and all(r is results[0] for r in results)
    runtime.clear(name)


def test_a_cache_keeps_the_object_and_not_its_builder():
    import weakref

    class Held:  # something only the builder refers to, e.g. the model it compiles
        pass

    name = "test.builder"
    runtime.clear(name)
    held = Held()
    gone = weakref.ref(held)
    assert runtime.cached(name, "k", lambda held=held: 42) == 42
    del held
    assert gone() is None, "the cache kept the builder and what it refers to"
    assert runtime.cached(name, "k", lambda: 0) == 42
    assert runtime.entries(name) == {"k": 42}
    runtime.clear(name)
