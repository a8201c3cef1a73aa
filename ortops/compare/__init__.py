"""``ortops compare``: run a model in ONNX Runtime, OpenVINO and the ONNX reference, and explain
every difference down to the node. :func:`compare` returns the report (the schema of
``compare.json``: docs/compare.md); :func:`write_reports` writes ``compare.json``, ``compare.md``
and ``compare.html``.
"""

from .inputs import InputError
from .model import ModelError
from .render import write_reports
from .run import SCHEMA, Step, compare, exit_status

__all__ = ["SCHEMA", "InputError", "ModelError", "Step", "compare", "exit_status", "write_reports"]
