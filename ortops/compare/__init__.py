"""``ortops compare``: run a model in ONNX Runtime, OpenVINO and the ONNX reference, and explain
every difference down to the node.

:func:`compare` returns the report (the schema of ``compare.json``); :func:`write_reports`
writes ``compare.json``, ``compare.md`` and ``compare.html``. Modules: :mod:`.inputs` (the feed),
:mod:`.model` (loading, exposing audited tensors), :mod:`.runtimes` (each runtime in a child
process), :mod:`.outputs` (per-output comparison), :mod:`.audit` (the node audit),
:mod:`.causal` (the causal check of a blamed node), :mod:`.groups` (nodes grouped by op),
:mod:`.render` (the reports).
"""

from .inputs import InputError
from .model import ModelError
from .run import SCHEMA, Step, compare, exit_status

__all__ = ["SCHEMA", "InputError", "ModelError", "Step", "compare", "exit_status", "write_reports"]


def write_reports(report: dict, out):
    """Write ``compare.json``, ``compare.md`` and ``compare.html`` into ``out``; returns their paths."""
    from .render import write_reports as _write

    return _write(report, out)
