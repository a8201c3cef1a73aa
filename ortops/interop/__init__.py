"""Running ortops models in other runtimes.

* :mod:`ortops.interop.openvino` - read an ONNX file holding ``ortops.openvino`` and
  ``ortops.ncnn`` nodes into OpenVINO (the ``openvino`` extra), so one .onnx file runs in ONNX
  Runtime through ortops and in OpenVINO natively.

Importing this package (or its submodules) imports no runtime: each submodule imports its
runtime when first used. Import the submodule explicitly:
``from ortops.interop import openvino as ov_interop``.
"""
