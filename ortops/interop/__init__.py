"""Running ortops models in other runtimes: :mod:`ortops.interop.openvino` (the ``openvino`` extra: one
.onnx file runs in ONNX Runtime through ortops and in OpenVINO natively) and
:mod:`ortops.interop.polygraphy` (the plugin of ``polygraphy run``, loaded by Polygraphy through its
``polygraphy.run.plugins`` entry point). Importing this package imports no runtime."""
