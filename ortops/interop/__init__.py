"""Running ortops models in other runtimes.

* :mod:`ortops.interop.openvino` - read an ONNX file holding ``ortops.openvino`` and
  ``ortops.ncnn`` nodes into OpenVINO (the ``openvino`` extra), so one .onnx file runs in ONNX
  Runtime through ortops and in OpenVINO natively.
* :mod:`ortops.interop.polygraphy` - the plugin of ``polygraphy run`` (the ``polygraphy`` extra):
  ``--ortops`` and ``--openvino`` runners and ``--ortops-explain``; Polygraphy loads it through
  its ``polygraphy.run.plugins`` entry point.

Importing this package or its openvino submodule imports no runtime (the Polygraphy plugin
imports Polygraphy, and only Polygraphy loads it): a runtime is imported when first used.
Import the submodule explicitly: ``from ortops.interop import openvino as ov_interop``.
"""
