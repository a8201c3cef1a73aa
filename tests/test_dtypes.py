"""The one dtype table: NumPy dtypes, ONNX element types and the bridge's codes."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ortops import dtypes
from ortops.ops.top_k.spec import INDEX_ELEMENT_TYPES


@pytest.mark.parametrize("row", dtypes.ELEMENT_TYPES, ids=lambda r: r.name)
def test_each_row_agrees_with_onnx(row):
    assert dtypes.from_name(row.name) is row
    assert dtypes.from_onnx(row.onnx) is row
    assert TensorProto.DataType.Name(row.onnx).lower() == row.name
    if row.numpy is not None:
        assert dtypes.from_numpy(row.numpy) is row
        assert row.onnx == helper.np_dtype_to_tensor_dtype(row.numpy)


def test_the_bridge_never_carries_half_precision():
    assert dtypes.names(dtypes.CARRIED_TYPES) == ("float16", "bfloat16")
    for row in dtypes.CARRIED_TYPES:
        with pytest.raises(ValueError, match="cannot carry"):
            dtypes.bridge_code(row)
    assert all(t.bridge for t in dtypes.NUMERIC_TYPES)


def test_onnx_names_also_for_types_without_a_row():
    assert dtypes.onnx_name(TensorProto.FLOAT) == "float"
    assert dtypes.onnx_name(TensorProto.STRING) == "string"
    assert dtypes.onnx_name(0) == "unknown"


def test_index_element_types():
    assert INDEX_ELEMENT_TYPES == {"i32": np.dtype(np.int32), "i64": np.dtype(np.int64)}


@pytest.mark.parametrize(("value", "dtype", "wrapped"), [
    (127, np.int8, 127), (128, np.int8, -128), (-129, np.int8, 127), (256, np.uint8, 0), (-1, np.uint8, 255),
    (2**63, np.int64, -(2**63)), (2**64 + 5, np.uint64, 5),
])
def test_wrap_is_two_complement_arithmetic_in_the_type(value, dtype, wrapped):
    assert dtypes.wrap(value, dtype) == wrapped
    assert np.array(value % 2**(8 * np.dtype(dtype).itemsize)).astype(np.uint64).astype(dtype) == wrapped


@pytest.mark.parametrize("narrow", dtypes.INTEGER_TYPES, ids=lambda r: r.name)
def test_a_private_type_keeps_every_value(narrow):
    """By round trip of the type's extremes through NumPy's cast (C conversion: wraps)."""
    from ortops.ops import TOP_K

    wide = dtypes.from_name(TOP_K.private_type("k", narrow.name)).numpy
    info = np.iinfo(narrow.numpy)
    extremes = np.array([info.min, info.max, 0], narrow.numpy)
    assert np.all(extremes.astype(wide).astype(narrow.numpy) == extremes)
    assert np.all((extremes.astype(wide) < 0) == (extremes < 0))
    assert dtypes.names(dtypes.WIDE_INTEGER_TYPES) == ("int64", "uint64")
