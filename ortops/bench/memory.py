"""Peak memory, in child processes: one per implementation, so that two implementations
never share a high-water mark."""

from __future__ import annotations

import functools
import sys

from ..processes import call_once
from .calls import inputs, make_call
from .cases import Config, op_bench
from .report import jsonable

__all__ = ["memory_child", "run_memory"]


def _proc_status_kib(field_name: str) -> int | None:
    """A ``/proc/self/status`` field in KiB (``VmHWM``, ``VmRSS``), None off Linux."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss() -> bool:
    """Reset this process's ``VmHWM`` to its current RSS (Linux >= 4.0); False if impossible."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def memory_child(op: str, impl: str, params: dict, runs: int) -> dict:
    """In a fresh child: build one implementation, run it ``runs`` times, return its peak RSS (KiB):
    ``VmHWM``, reset after set-up, where ``/proc`` has it (docs/performance.md), else ``ru_maxrss``."""
    import resource

    def ru_maxrss() -> float:  # KiB on Linux, bytes on macOS
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 / 1024 if sys.platform == "darwin" else 1)

    call = make_call(op, impl, params, inputs(op, params))
    source = "ru_maxrss" if _proc_status_kib("VmHWM") is None else "VmHWM"
    peak = ru_maxrss if source == "ru_maxrss" else functools.partial(_proc_status_kib, "VmHWM")
    setup_peak = peak()
    rss_before_run = _proc_status_kib("VmRSS") or setup_peak
    reset = source == "VmHWM" and _reset_peak_rss()
    for _ in range(runs):
        call()
    run_peak = peak()
    return {
        "peak_kib": max(setup_peak, run_peak), "setup_peak_kib": setup_peak, "rss_before_run_kib": rss_before_run,
        "run_peak_kib": run_peak, "delta_kib": run_peak - (rss_before_run if reset else setup_peak),
        "source": source, "peak_reset_after_setup": reset, "ru_maxrss_kib": ru_maxrss(),
    }


def run_memory(ops, config: Config, status) -> list[dict]:
    results = []
    for op in ops:
        p = op_bench(op).memory_params(config.tiny_matrix)
        entry = {"op": op, "case": op_bench(op).name(p), "params": jsonable(p), "runs": config.memory_runs}
        for impl in ("ortops", "built-in"):
            status(f"peak memory {op} {impl}")
            outcome = call_once(memory_child, op, impl, p, config.memory_runs, timeout=600)
            entry[impl] = outcome.value if outcome.ok else {"error": outcome.error or outcome.describe()}
        results.append(entry)
    return results
