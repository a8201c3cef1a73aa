#!/usr/bin/env python3
"""Rebuild the example models in models/ and their manifest: python scripts/build_models.py"""

import pathlib
import sys

from ortops.builder.examples import write_all


def main() -> int:
    out = pathlib.Path(__file__).resolve().parent.parent / "models"
    for path in write_all(out):
        print(path.relative_to(out.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
