"""Hypothesis strategies the op tests share: tie-heavy values and TopK inputs and attributes."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = ["FLOAT_DTYPES", "INT_DTYPES", "NUMERIC_DTYPES", "values", "top_k_inputs", "top_k_attributes"]

FLOAT_DTYPES = (np.float32, np.float64)
INT_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
NUMERIC_DTYPES = FLOAT_DTYPES + INT_DTYPES


def values(dtype):
    """Tie-heavy values from a tiny set, the type's extremes, or any value of the dtype (NaN,
    +-inf and +-0.0 included)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        tiny = st.sampled_from([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, -1.5, 2.5])
        return st.one_of(tiny, hnp.from_dtype(dtype))
    info = np.iinfo(dtype)
    near_low = st.integers(int(info.min), int(info.min) + 2)
    near_high = st.integers(int(info.max) - 2, int(info.max))
    small = st.integers(-1, 1).filter(lambda v: v >= info.min)
    return st.one_of(near_low, near_high, small, hnp.from_dtype(dtype))


@st.composite
def top_k_inputs(draw, dtypes=NUMERIC_DTYPES, max_dims: int = 5, max_side: int = 6):
    """(data, k, axis): ``data`` of any of ``dtypes``, ``axis`` in [-rank, rank-1] and ``k`` in
    [1, data.shape[axis]] (a Python int)."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=max_dims, min_side=1, max_side=max_side))
    data = draw(hnp.arrays(dtype, shape, elements=values(dtype)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return data, draw(st.integers(1, shape[axis])), axis


@st.composite
def top_k_attributes(draw) -> dict:
    """TopK's attributes other than ``axis``, every value the spec allows."""
    return dict(mode=draw(st.sampled_from(["max", "min"])), sort=draw(st.sampled_from(["value", "index", "none"])),
                stable=draw(st.integers(0, 1)), index_element_type=draw(st.sampled_from(["i32", "i64"])))
