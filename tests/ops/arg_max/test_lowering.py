"""ncnn ArgMax lowered to standard ONNX (guarded and standalone) against ortops.reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ortops
from ortops import builder, reference

from conftest import assert_identical
from lowering_cases import MODES, session
from strategies import values


def _session(rank, out_max_val, topk, mode):
    key = ("arg_max", rank, out_max_val, topk)
    return session(key, lambda: builder.arg_max_model(rank, out_max_val=out_max_val, topk=topk), mode)


@st.composite
def arg_max_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    data = draw(hnp.arrays(np.float32, shape, elements=values(np.float32)))
    return data, draw(st.integers(0, 1)), draw(st.integers(1, min(data.size, 4)))


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=200, deadline=None)
@given(case=arg_max_cases())
def test_lowered_arg_max_matches_reference(mode, case):
    data, out_max_val, topk = case
    got = _session(data.ndim, out_max_val, topk, mode).run(None, {"data": data})
    assert_identical(got[0], reference.arg_max(data, out_max_val=out_max_val, topk=topk))


@pytest.mark.parametrize("mode", MODES)
def test_ties_nan_and_signed_zeros(mode):
    data = np.array([[np.nan, 1, np.inf, -np.inf, 2, -0.0, 0.0, 3, np.nan, 3]], np.float32)
    for topk in range(1, data.size + 1):
        for out_max_val in (0, 1):
            got = _session(2, out_max_val, topk, mode).run(None, {"data": data})
            assert_identical(got[0], reference.arg_max(data, out_max_val=out_max_val, topk=topk))


def test_topk_above_the_size_in_both_modes():
    data = np.ones((1, 3), np.float32)
    with pytest.raises(ortops.OpError) as info:
        _session(2, 0, 4, "pyop").run(None, {"data": data})
    assert info.value.kind == "k_range" and info.value.node_name == "arg_max"
    with pytest.raises(Exception, match="ArgMax node 'arg_max' rejects its input: topk=4"):
        _session(2, 0, 4, "none").run(None, {"data": data})
