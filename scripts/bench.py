"""Benchmark ortops against ORT's built-ins, OpenVINO and the NumPy references.

Same as ``ortops bench``; see :mod:`ortops.bench` for the options and the method.
"""

import sys

import ortops.bench

if __name__ == "__main__":
    sys.exit(ortops.bench.main(sys.argv[1:]))
