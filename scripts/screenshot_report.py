"""Take a PNG screenshot of a conformance report.html with headless Chromium (README's picture).

Usage: ``python scripts/screenshot_report.py REPORT_HTML OUT_PNG [--top PX] [--height PX] [--width PX]``

Needs a ``chromium`` (or ``chromium-browser``/``google-chrome``) binary, e.g. Debian's
``apt-get install chromium``, and Pillow (the ``ocr`` extra). The page is rendered at
``--width`` pixels, and the band from ``--top`` to ``--top + --height`` is kept.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("out")
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument("--height", type=int, default=1800)
    parser.add_argument("--width", type=int, default=1500)
    args = parser.parse_args(argv)
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        print("no chromium binary found (apt-get install chromium)", file=sys.stderr)
        return 2
    from PIL import Image

    with tempfile.TemporaryDirectory() as tmp:
        shot = pathlib.Path(tmp) / "page.png"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={args.width},{args.top + args.height}", f"--screenshot={shot}",
                        pathlib.Path(args.report).resolve().as_uri()], check=True, capture_output=True, timeout=300)
        image = Image.open(shot)
        band = image.convert("RGB").crop((0, args.top, args.width, args.top + args.height))
        band.quantize(colors=128).save(args.out, optimize=True)  # a palette keeps the PNG small
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
