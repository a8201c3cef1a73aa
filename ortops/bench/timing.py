"""Timing: interleaved rounds of samples, and running the case matrix."""

from __future__ import annotations

import os
import statistics
import time
import timeit
from dataclasses import dataclass, field
from typing import Any, Callable

from .calls import first_output, inputs, make_call, same_values
from .cases import Case, Config, Target

__all__ = ["Timing", "Row", "time_interleaved", "run_case", "judge"]


@dataclass
class Timing:
    samples: list[float]
    calls_per_sample: int

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """Interquartile range as a share of the median (0 with fewer than 4 samples)."""
        if len(self.samples) < 4:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples, n=4)
        return (q3 - q1) / self.median


def _sample(call: Callable[[], Any], n: int) -> float:
    """Seconds per call over ``n`` calls (``timeit``: perf_counter, the garbage collector off)."""
    return timeit.timeit(call, number=n) / n


def time_interleaved(calls: dict[str, Callable[[], Any]], config: Config, rounds: int, *,
                      adaptive: bool, called: bool) -> dict[str, Timing]:
    """Warm up, size each implementation's batch, then take interleaved rounds of samples.

    ``called``: every call has run once already (its lazy set-up is done). With
    ``adaptive``, a case whose round is cheap gets more rounds (up to 4x ``rounds``) while
    they fit in ``config.case_seconds``.
    """
    estimate: dict[str, float] = {}
    first_samples: dict[str, float] = {}
    for name, call in calls.items():
        if not called:
            call()  # lazy set-up inside the implementation
        first = _sample(call, 1)
        if first > config.slow_seconds:  # slow: one call per sample, and this one counts
            estimate[name] = first_samples[name] = first
            continue
        warm = max(1, int(config.sample_seconds / max(first, 1e-7)))
        estimate[name] = _sample(call, warm)
    counts = {name: max(1, round(config.sample_seconds / max(t, 1e-7))) for name, t in estimate.items()}
    slow = {name for name, t in estimate.items() if t > config.slow_seconds}
    if adaptive:
        per_round = sum(counts[name] * t for name, t in estimate.items() if name not in slow)
        rounds = max(rounds, min(4 * rounds, int(config.case_seconds / max(per_round, 1e-9))))
    timings = {name: Timing([first_samples[name]] if name in first_samples else [], counts[name]) for name in calls}
    limit = {name: 1 if estimate[name] > config.very_slow_seconds else config.slow_samples for name in slow}
    names = list(calls)
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            if name in slow and len(timings[name].samples) >= limit[name]:
                continue
            timings[name].samples.append(_sample(calls[name], counts[name]))
    return timings


@dataclass
class Row:
    case: Case
    impl: str
    timing: Timing
    ratio: float | None = None
    verdicts: list[tuple[Target, float | None, bool | None]] = field(default_factory=list)
    mismatch: bool = False


def run_case(case: Case, config: Config, rounds: int, adaptive: bool) -> list[Row]:
    case.load_average = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    start = time.perf_counter()
    feed = inputs(case.params.get("op", case.op), case.params)
    calls = {impl: make_call(case.op, impl, case.params, feed) for impl in case.impls}
    expected = first_output(calls["built-in"]())
    mismatched = set()
    for impl, call in calls.items():  # the first call of each: a check, and the lazy set-up
        if impl == "built-in":
            continue
        output = first_output(call())
        if impl in ("identity PyOp", "ORT Identity"):
            continue
        if not same_values(output, expected):
            mismatched.add(impl)
            case.notes.append(f"{impl}: first output differs from the built-in's (shape or values)")
    timings = time_interleaved(calls, config, rounds, adaptive=adaptive, called=True)
    case.seconds = time.perf_counter() - start
    return [Row(case, impl, timings[impl], mismatch=impl in mismatched) for impl in case.impls]


def judge(rows: list[Row]) -> None:
    """Ratios against each row's baseline, and the targets' verdicts."""
    medians = {(row.case.id, row.impl): row.timing.median for row in rows}
    for row in rows:
        baseline = medians.get((row.case.id, row.case.baselines.get(row.impl, "built-in")))
        row.ratio = row.timing.median / baseline if baseline else None
        for target in row.case.targets.get(row.impl, []):
            against = medians.get(target.against)
            value = row.timing.median / against if against else None
            row.verdicts.append((target, value, None if value is None else value <= target.limit))
