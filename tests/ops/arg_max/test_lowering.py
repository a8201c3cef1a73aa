"""ncnn ArgMax lowered to standard ONNX (guarded and standalone) against ortops.reference."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ortops
from ortops import builder, reference
from ortops.builder.common import set_static_shapes
from ortops.ops import prefilter

from conftest import assert_identical
from lowering_cases import MODES, session
from strategies import values

from ..test_prefilter import _prefiltered


def _session(rank, out_max_val, topk, mode):
    key = ("arg_max", rank, out_max_val, topk)
    return session(key, lambda: builder.arg_max_model(rank, out_max_val=out_max_val, topk=topk), mode)


@st.composite
def arg_max_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    data = draw(hnp.arrays(np.float32, shape, elements=values(np.float32)))
    return data, draw(st.integers(0, 1)), draw(st.integers(1, min(data.size, 4)))


@pytest.mark.parametrize("mode", MODES)
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


def _static_model(shape: tuple, out_max_val: int, topk: int):
    return set_static_shapes(builder.arg_max_model(len(shape), out_max_val=out_max_val, topk=topk), data=shape)


@st.composite
def prefilter_cases(draw):
    """Few distinct values (ties everywhere, -inf equal to the padding), NaN or not, any block
    size (dividing the element count or not) and every topk from 2 up."""
    pool = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan], np.float32)
    if not draw(st.booleans()):
        pool = pool[:-1]
    shape = (draw(st.integers(1, 3)), draw(st.integers(1, 30)))
    size = shape[0] * shape[1]
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=size, max_size=size))
    topk = draw(st.integers(min(2, size), size))
    return pool[np.array(picks)].reshape(shape), topk, draw(st.integers(0, 1)), draw(st.integers(1, 9))


@pytest.mark.parametrize("path", ["auto", "lowered"])
@settings(max_examples=60, deadline=None)
@given(case=prefilter_cases())
def test_prefiltered_arg_max_matches_reference_bit_for_bit(path, case):
    """The block-maxima prefilter in ncnn's order (of equal values the higher index first),
    forced on with block size B, padding first where B does not divide the element count."""
    data, topk, out_max_val, block = case
    with mock.patch.object(prefilter, "RULE", prefilter.Rule(force=block)):
        sess = ortops.InferenceSession(_static_model(data.shape, out_max_val, topk), path=path)
    assert _prefiltered(sess.model) == (topk > 1)
    got = sess.run(None, {"data": data})[0]
    assert_identical(got, reference.arg_max(data, out_max_val=out_max_val, topk=topk), bits=True)


def test_auto_takes_the_faster_path_per_node():
    """path="auto" lowers ArgMax where the prefilter applies and on small static shapes (both
    measured faster than the PyOp), and keeps the PyOp elsewhere: a shape that is not static, a
    large topk=1, a topk > 1 too short for the prefilter and too long to count as small."""
    data = np.random.default_rng(0).standard_normal((2, 1024, 128)).astype(np.float32)
    data[0, 0, :64] = data.max()  # a tie across the first block
    sess = ortops.InferenceSession(_static_model(data.shape, 1, 100))
    assert [n.op for n in sess.lowering.lowered] == ["ortops.ncnn::ArgMax"] and _prefiltered(sess.model)
    assert_identical(sess.run(None, {"data": data})[0], reference.arg_max(data, out_max_val=1, topk=100), bits=True)
    for shape, topk in (((1, 8), 1), ((128, 128), 1), ((4, 100), 2), ((256, 256), 3)):
        small = ortops.InferenceSession(_static_model(shape, 0, topk))
        assert [n.op for n in small.lowering.lowered] == ["ortops.ncnn::ArgMax"] and not _prefiltered(small.model)
    for model in (_static_model(data.shape, 0, 1), builder.arg_max_model(3, topk=100),
                  _static_model((129, 128), 0, 1), _static_model((1, 120000), 0, 3)):
        kept = ortops.InferenceSession(model).lowering.kept
        assert len(kept) == 1 and "path='auto' keeps ArgMax as a PyOp" in kept[0].reason
