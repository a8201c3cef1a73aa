"""OpenVINO runs at float32 unless asked otherwise (its CPU plugin may pick bfloat16 by itself)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

pytest.importorskip("openvino")

from ortops import builder
from ortops.interop import openvino as ov_interop


def _precision(compiled) -> str:
    """The hint as text: ``f32`` (OpenVINO prints an element type as ``<Type: 'float32'>``)."""
    text = str(compiled.get_property("INFERENCE_PRECISION_HINT")).lower()
    return "f32" if "float32" in text or text == "f32" else text


def test_run_and_compile_model_default_to_f32():
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1)
    ov_interop.run(model, {"data": np.ones((2, 3), np.float32), "k": np.array([1])})
    assert ov_interop.DEFAULT_CONFIG == {"INFERENCE_PRECISION_HINT": "f32"}
    assert _precision(ov_interop.compile_model(model)) == "f32"
    explicit = ov_interop.compile_model(model, config={"INFERENCE_PRECISION_HINT": "f32"})
    assert _precision(explicit) == _precision(ov_interop.compile_model(model))


def test_an_explicit_config_reaches_the_plugin():
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1)
    plugin_default = ov_interop.compile_model(model, config={})
    assert _precision(plugin_default)  # whatever this CPU's plugin chooses, it is reported
    values, _ = ov_interop.run(model, {"data": np.arange(6, dtype=np.float32).reshape(2, 3), "k": np.array([1])},
                               config={})
    assert values.ravel().tolist() == [2.0, 5.0]
