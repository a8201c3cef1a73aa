"""Soak: 3000 runs of a large TopK with bad calls mixed in must not grow memory (scripts/soak.py).

Runs in a child process, so that the memory measured is the soak's own and an abort cannot
take pytest down.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts", "soak.py")


def _soak(*args):
    done = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=300)
    lines = done.stdout.strip().splitlines()
    assert lines, f"exit status {done.returncode}, no output\n{done.stderr[-4000:]}"
    return done.returncode, json.loads(lines[-1]), done.stderr


@pytest.mark.slow
def test_soak_large_top_k_with_bad_calls_does_not_grow_memory():
    status, result, stderr = _soak("--runs", "3000", "--rows", "64", "--cols", "32000", "--k", "50",
                                   "--limit-mib", "32")
    assert status == 0 and result["ok"], f"{result}\n{stderr[-4000:]}"
    assert result["good"] > 1500 and result["op_error"] > 700 and result["checked"] >= 10, result
    assert result["ort_error"] > 50 and result["raw_logged"] > 50, result


@pytest.mark.slow
def test_soak_catches_a_leak():
    """The measurement can fail: 64 KiB kept alive per run is 44 MiB over 700 runs."""
    status, result, _ = _soak("--runs", "1000", "--leak-kib", "64", "--limit-mib", "32")
    assert status == 1 and not result["ok"] and result["peak_growth_mib"] > 32, result
