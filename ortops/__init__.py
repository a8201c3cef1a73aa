"""ortops: other frameworks' operator semantics in ONNX Runtime, exactly.

* ``ortops.openvino::TopK`` - OpenVINO TopK-11
* ``ortops.openvino::ScatterElementsUpdate`` - OpenVINO ScatterElementsUpdate-12
* ``ortops.ncnn::ArgMax`` - ncnn's ArgMax layer

:func:`lower` replaces them by exact compositions of standard ONNX ops where one exists.

Importing ortops registers nothing and imports neither onnxruntime nor openvino;
:class:`InferenceSession` and :func:`session_options` register the ops when first used.
"""

from . import builder, reference
from .bridge import capture_errors, register
from .errors import OpError
from .lowering import Lowered, LoweringReport, lower
from .session import InferenceSession, prepare_model, session_options

__all__ = ["InferenceSession", "Lowered", "LoweringReport", "OpError", "builder", "capture_errors", "lower",
           "prepare_model", "reference", "register", "session_options"]
__version__ = "0.1.0"
