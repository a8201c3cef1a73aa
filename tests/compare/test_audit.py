"""ortops.compare.audit: the types OpenVINO's CPU plugin computes narrower, as a node audit finds them."""

from __future__ import annotations

import numpy as np
import pytest

from ortops.compare.audit import _narrowing


@pytest.mark.parametrize("value, topic", [
    (np.array([1.5, 2.0]), "float64-precision"),
    (np.array([2 ** 40, 3], np.int64), "int32-narrowing"),
    (np.array([-(2 ** 31) - 1], np.int64), "int32-narrowing"),
    (np.array([2 ** 31], np.uint32), "int32-narrowing"),
    (np.array([2 ** 63], np.uint64), "uint64"),
])
def test_a_narrower_work_type_is_named_with_its_topic(value, topic):
    found = _narrowing([None, value], ["onnxruntime", "openvino"])
    assert found is not None and found.topic == topic and found.explained


@pytest.mark.parametrize("value", [
    np.array([2 ** 31 - 1, -(2 ** 31)], np.int64),  # every value fits int32
    np.array([2 ** 31 - 1], np.uint64),
    np.array([], np.int64),
    np.array([1.5], np.float32),
    np.array([2 ** 40], np.float32),
])
def test_values_that_int32_holds_and_float32_data_are_not_narrowed(value):
    assert _narrowing([value], ["onnxruntime", "openvino"]) is None


def test_only_openvino_narrows():
    assert _narrowing([np.array([2 ** 40], np.int64)], ["onnxruntime", "reference"]) is None
