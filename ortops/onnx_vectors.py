"""ONNX's own backend test vectors for one op, loaded without ONNX's global collector.

``onnx.backend.test.case.node.collect_testcases(op_type)`` fills one global list while its test
modules are *first imported*: a second call for another op in the same process hands back the
first op's cases, and each call imports every op's module (about 10 s). Here only the op's own
module is imported (with ONNX's collector told to record nothing), and its ``export*``
functions are called with the module's ``expect`` replaced by a recorder. NumPy's global random
state is seeded with 0 before each export, as ONNX's collector does, and restored afterwards.
"""

from __future__ import annotations

import functools
import importlib
import threading
from typing import NamedTuple

import numpy as np
import onnx

__all__ = ["OnnxVector", "onnx_vectors"]


class OnnxVector(NamedTuple):
    """One ONNX backend test vector: its name, node, inputs and expected outputs."""

    name: str
    node: onnx.NodeProto
    inputs: tuple[np.ndarray, ...]
    outputs: tuple[np.ndarray, ...]
    opset: int


_lock = threading.Lock()


@functools.lru_cache(maxsize=None)
def onnx_vectors(module: str, test_class: str) -> tuple[OnnxVector, ...]:
    """The vectors of ``onnx.backend.test.case.node.<module>.<test_class>``, e.g.
    ``("topk", "TopK")``, ``("scatterelements", "ScatterElements")``, ``("argmax", "ArgMax")``.

    ``opset`` is the default-domain opset ONNX builds the test model at (the newest version
    of the op's schema unless the export passes ``opset_imports``).
    """
    import onnx.backend.test.case.node as node_package

    recorded: list[OnnxVector] = []

    def record(node, inputs, outputs, name, **kwargs):
        imports = kwargs.get("opset_imports") or []
        default = [o.version for o in imports if o.domain in ("", "ai.onnx")]
        opset = default[0] if default else onnx.defs.get_schema(node.op_type).since_version
        recorded.append(OnnxVector(name, node, tuple(np.asarray(x) for x in inputs),
                                   tuple(np.asarray(y) for y in outputs), opset))

    with _lock:
        target = node_package._TargetOpType
        node_package._TargetOpType = "ortops: record nothing"  # the first import runs every export
        try:
            mod = importlib.import_module(f"onnx.backend.test.case.node.{module}")
        finally:
            node_package._TargetOpType = target
        cls = getattr(mod, test_class)
        real_expect, random_state = mod.expect, np.random.get_state()
        mod.expect = record
        try:
            for attr in sorted(vars(cls)):
                if attr.startswith("export"):
                    np.random.seed(0)
                    getattr(cls, attr)()
        finally:
            mod.expect = real_expect
            np.random.set_state(random_state)
    return tuple(recorded)
