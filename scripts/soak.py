#!/usr/bin/env python3
"""Soak test: many runs of a large TopK with bad calls mixed in must not grow memory.

    python scripts/soak.py [--runs 3000] [--rows 64] [--cols 32000] [--k 50] [--limit-mib 32]

Runs an ``ortops.InferenceSession`` (and, now and then, a raw-path session) on float32
[rows, cols] data, k selected along the last axis. Mixed in: k above the axis length, k=0,
k of the wrong shape (ortops.OpError), inputs holding NaN (another selection path), a feed
of the wrong dtype (ORT's own error) and raw-path calls whose errors are logged. After a
warm-up, the process's peak resident memory (VmHWM, or ``ru_maxrss``) may grow by at most
``--limit-mib``; the current resident memory (VmRSS) is reported too. Good calls are checked
against values computed once up front (large temporaries in the loop would blur the peak),
and every bad call must fail the way it should. ``--leak-kib`` keeps that much memory alive
per run: a deliberate leak, to show that the measurement catches one.

Prints one JSON line with the measurements; exits 1 if the peak grew too much or any call
misbehaved.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import time


def _memory_kib() -> dict[str, int]:
    """VmHWM (peak) and VmRSS (current) of this process in KiB; ``ru_maxrss`` where there is no /proc."""
    values = {}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                name, _, rest = line.partition(":")
                if name in ("VmHWM", "VmRSS"):
                    values[name] = int(rest.split()[0])
    except OSError:
        pass
    values.setdefault("VmHWM", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # KiB on Linux
    values.setdefault("VmRSS", values["VmHWM"])
    return values


def soak(runs: int, rows: int, cols: int, k: int, warmup: int, leak_kib: int = 0) -> dict:
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto

    import ortops
    from ortops import builder

    logger = logging.getLogger("ortops")  # raw-path errors are logged: count them, print nothing
    logged = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = lambda record: logged.append(1)
    logger.addHandler(handler)
    logger.propagate = False

    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1, k_shape=["n"])
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ortops.InferenceSession(model, options)
    raw_options = ortops.session_options()
    raw_options.log_severity_level = 3
    raw = ort.InferenceSession(model.SerializeToString(), raw_options, providers=["CPUExecutionProvider"])

    rng = np.random.default_rng(0)
    data = rng.random((rows, cols), dtype=np.float32)
    with_nan = data.copy()
    with_nan[:, :: 97] = np.nan
    wrong_dtype = data[:2].astype(np.float64)
    good_k, too_large, zero, two = np.array([k]), np.array([cols + 1]), np.array([0]), np.array([k, k])
    # Expected values, computed once (large temporaries inside the loop would blur the peak):
    # the k largest by sorting, NaN above everything.
    expected = {id(x): np.sort(x, axis=-1)[:, ::-1][:, :k].copy() for x in (data, with_nan)}

    problems: list[str] = []
    counts = {"good": 0, "op_error": 0, "ort_error": 0, "raw_logged": 0, "checked": 0}
    baseline = None
    start = time.perf_counter()
    leaked = []
    for i in range(runs):
        if i == warmup:
            baseline = _memory_kib()
        if leak_kib:
            leaked.append(np.ones(leak_kib * 128))  # float64: leak_kib KiB, resident
        kind = i % 10
        if i % 50 == 25:  # raw path: empty outputs and one logged error
            before = len(logged)
            values, indices = raw.run(None, {"data": data, "k": too_large})
            if values.shape != (0,) or indices.shape != (0,) or len(logged) != before + 1:
                problems.append(f"run {i}: raw bad call gave {values.shape}, {len(logged) - before} logs")
            counts["raw_logged"] += 1
        elif i % 30 == 15:  # ORT's own error, not ours
            try:
                session.run(None, {"data": wrong_dtype, "k": good_k})
                problems.append(f"run {i}: a float64 feed ran")
            except ortops.OpError as exc:
                problems.append(f"run {i}: ORT's type error came back as OpError {exc}")
            except Exception:  # noqa: BLE001 - ORT's InvalidArgument is the expected outcome
                counts["ort_error"] += 1
        elif kind in (3, 6, 8):
            bad_k, needle = {3: (too_large, f"k={cols + 1} is outside"), 6: (zero, "k=0 is outside"),
                             8: (two, "has shape (2,)")}[kind]
            try:
                session.run(None, {"data": data, "k": bad_k})
                problems.append(f"run {i}: bad k {bad_k} gave a result")
            except ortops.OpError as exc:
                if needle not in str(exc):
                    problems.append(f"run {i}: {exc}")
                counts["op_error"] += 1
        else:
            x = with_nan if kind == 5 else data
            values, indices = session.run(None, {"data": x, "k": good_k})
            counts["good"] += 1
            if values.shape != (rows, k) or indices.shape != (rows, k):
                problems.append(f"run {i}: shapes {values.shape}, {indices.shape}")
            elif i % 100 in (0, 5):  # one check on data, one on with_nan
                if not np.array_equal(values, expected[id(x)], equal_nan=True) or not np.array_equal(
                        np.take_along_axis(x, indices.astype(np.int64), axis=-1), values, equal_nan=True):
                    problems.append(f"run {i}: wrong values or indices")
                counts["checked"] += 1
        if len(problems) > 20:
            break
    elapsed = time.perf_counter() - start
    end = _memory_kib()
    baseline = baseline or end
    return {
        "runs": runs,
        "shape": [rows, cols],
        "k": k,
        "seconds": round(elapsed, 2),
        "peak_growth_mib": round((end["VmHWM"] - baseline["VmHWM"]) / 1024, 2),
        "rss_growth_mib": round((end["VmRSS"] - baseline["VmRSS"]) / 1024, 2),
        "peak_mib": round(end["VmHWM"] / 1024, 1),
        "maxrss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        **counts,
        "problems": problems,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3000)
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--cols", type=int, default=32000)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=300, help="runs before the memory baseline")
    parser.add_argument("--limit-mib", type=float, default=32.0)
    parser.add_argument("--leak-kib", type=int, default=0, help="leak this much per run (tests the soak)")
    args = parser.parse_args(argv)
    result = soak(args.runs, args.rows, args.cols, args.k, args.warmup, args.leak_kib)
    grew = result["peak_growth_mib"] > args.limit_mib
    result["ok"] = not grew and not result["problems"]
    print(json.dumps(result), flush=True)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
