"""Run a command and report its peak resident memory and peak thread count.

Usage: ``python scripts/measure_run.py -- ortops conformance --no-progress --out /tmp/r``

Samples ``/proc/<pid>/status`` (``VmHWM``: the kernel's own peak RSS; ``Threads``) of the
command's process every 20 ms until it exits (Linux only). Prints one line:
``peak_rss_mib=... peak_threads=... seconds=... exit=...``.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import time


def _status(pid: int) -> dict[str, str]:
    try:
        text = pathlib.Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return {}
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def main(argv: list[str]) -> int:
    if "--" in argv:
        argv = argv[argv.index("--") + 1:]
    if not argv:
        print(__doc__)
        return 2
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    peak_kib, peak_threads = 0, 0
    while child.poll() is None:
        status = _status(child.pid)
        if status:
            peak_kib = max(peak_kib, int(status.get("VmHWM", "0 kB").split()[0]))
            peak_threads = max(peak_threads, int(status.get("Threads", "0").strip()))
        time.sleep(0.02)
    print(f"peak_rss_mib={peak_kib / 1024:.0f} peak_threads={peak_threads} "
          f"seconds={time.perf_counter() - start:.1f} exit={child.returncode}")
    return child.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
