"""The runner's session cache is bounded in sessions and threads."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from onnx import TensorProto

from ortops import runtime
from ortops.builder import onnx_top_k_model
from ortops import sessions


def _threads() -> int:
    status = pathlib.Path("/proc/self/status")
    if not status.exists():
        pytest.skip("needs /proc (Linux)")
    return int(next(line for line in status.read_text().splitlines() if line.startswith("Threads:")).split()[1])


def test_options_are_single_threaded_without_spinning():
    options = sessions.session_options()
    assert options.intra_op_num_threads == 1 and options.inter_op_num_threads == 1
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_many_distinct_models_keep_the_cache_and_the_threads_bounded():
    sessions.clear()
    before = _threads()
    x = np.arange(24, dtype=np.float32)
    shapes = {1: (24,), 2: (4, 6), 3: (2, 3, 4), 4: (2, 3, 2, 2)}
    built = 0
    for rank, shape in shapes.items():
        for axis in range(rank):
            for largest in (0, 1):
                for sorted_ in (0, 1):
                    for version in (11, 24):
                        model = onnx_top_k_model(version, TensorProto.FLOAT, rank, axis=axis, largest=largest,
                                                 sorted=sorted_)
                        sessions.plain_session(model).run(None, {"X": x.reshape(shape), "K": np.array([1])})
                        built += 1
    assert built > sessions.CACHE_SIZE
    kept = runtime.entries(sessions.CACHE)
    assert len(kept) == sessions.CACHE_SIZE
    assert sessions.plain_session(model) is kept[(model.SerializeToString(), False)]  # the last one is kept
    assert _threads() - before <= 2  # no pool per session
    sessions.clear()
