"""The child process of one runtime: ``python -m ortops.compare.worker RUNTIME MODEL FEED.npz OUT.npz SETTINGS``.

Writes the outputs to ``OUT.npz`` (``t0``, ``t1``, ... in the order of ``names``) and its
status to ``OUT.json``: ``ok``, ``missing`` (the runtime is not installed) or ``failed`` (it
could not run the model; the detail holds its message). A process that dies writes nothing:
the parent reports it as crashed.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np


def main(argv: list[str]) -> int:
    runtime, model_path, feed_path, out_path, settings = argv
    out = pathlib.Path(out_path)
    settings = json.loads(settings)
    with np.load(feed_path, allow_pickle=False) as archive:
        names = json.loads(str(archive["__names__"]))
        feed = {name: archive[f"i{i}"] for i, name in enumerate(names)}
    from .runtimes import run_here

    status = {"status": "ok", "detail": "", "version": "", "names": []}
    try:
        outputs, status["version"] = run_here(runtime, model_path, feed, settings)
    except ModuleNotFoundError as exc:
        status.update(status="missing", detail=f"{runtime} is not installed ({exc})")
    except Exception as exc:  # noqa: BLE001 - any refusal of the model is reported, not raised
        message = " ".join(str(exc).split())
        status.update(status="failed", detail=f"{type(exc).__name__}: {message[:2000]}")
    else:
        # Sequences, maps and other non-tensor values are not compared.
        outputs = {n: np.asarray(v) for n, v in outputs.items()
                   if isinstance(v, np.ndarray) or np.asarray(v).dtype.kind in "biufc"}
        status["names"] = list(outputs)
        np.savez(out, **{f"t{i}": np.asarray(v) for i, v in enumerate(outputs.values())})
    out.with_suffix(".json").write_text(json.dumps(status))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
