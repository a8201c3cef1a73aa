"""The bridge: explicit idempotent registration, a hook that never raises, per-thread errors."""

from __future__ import annotations

import logging
import threading

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto

import ortops
from ortops import bridge, builder, dtypes
from ortops.ops import OPS


def test_register_is_idempotent_and_thread_safe():
    threads = [threading.Thread(target=ortops.register) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    before = len(bridge._kernels)
    ortops.register()
    assert len(bridge._kernels) == before
    # one registration per input-type combination, public and private
    expected = sum(len(op.signatures) for op in bridge.bridge_ops())
    assert before == expected


def _count_from_spec(op, types_of):
    """Registrations of ``op`` with ``types_of(type param)`` for each input type parameter: the
    product over the distinct input parameters of the types the bridge can carry."""
    count = 1
    for param in dict.fromkeys(op.input_types):
        count *= sum(1 for name in types_of(op.type_param(param)) if dtypes.from_name(name).bridge is not None)
    return count


def test_private_registrations_take_index_like_inputs_as_int64_or_uint64_only():
    """Counted from the specs' type tables: every private twin (one per variant, one per
    rounded carried type) takes k, indices and axis as int64 or uint64; the public ones (the raw
    path) as int32, int64 or uint64."""
    private_types = lambda table: table.private_types or table.types  # noqa: E731
    expected_private = 0
    for op in OPS:
        expected_private += max(1, len(op.variants)) * _count_from_spec(op, private_types)
        if op.carrier is not None and op.carrier.rounds:
            carried = lambda t, op=op: (op.carrier.via,) if t.name == op.input_types[0] else private_types(t)  # noqa: E731
            expected_private += len(dtypes.CARRIED_TYPES) * _count_from_spec(op, carried)
    expected_public = sum(_count_from_spec(op, lambda t: t.raw_types or t.types) for op in OPS)
    families = bridge.bridge_ops()
    private = sum(len(b.signatures) for b in families if b.domain == bridge.BRIDGE_DOMAIN)
    public = sum(len(b.signatures) for b in families if b.domain != bridge.BRIDGE_DOMAIN)
    assert (private, public) == (expected_private, expected_public)
    # by hand from the tables: TopK 10 data types x 2 k types x 2 variants; ScatterElementsUpdate
    # 11 x 2 x 2, and 2 carried types x 1 (float64) x 2 x 2; ArgMax 1
    assert private == 10 * 2 * 2 + 11 * 2 * 2 + 2 * 2 * 2 + 1 == 93
    assert public == 10 * 3 + 11 * 3 * 3 + 1 == 130
    wide = {"int64", "uint64"}
    for family in families:
        roles = [i for i, p in enumerate(family.opdef.input_types) if p in ("T_K", "T_IND", "T_AXIS")]
        seen = {inputs[i].name for inputs, _ in family.signatures for i in roles}
        if roles:
            assert seen == (wide if family.domain == bridge.BRIDGE_DOMAIN else {"int32", "int64", "uint64"})


def test_import_registers_nothing():
    import subprocess
    import sys

    code = (
        "import sys, ortops; from ortops import bridge; "
        "assert not bridge._registered and not bridge._kernels; "
        "assert 'onnxruntime' not in sys.modules and 'openvino' not in sys.modules, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_bad_input_raises_op_error_and_session_survives(top_k_session):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(ortops.OpError, match=r"TopK node 'top_k': k=5 is outside \[1, 4\] for axis 1 of shape \(3, 4\)"):
        top_k_session.run(None, {"data": x, "k": np.array([5])})
    values, indices = top_k_session.run(None, {"data": x, "k": np.array([2])})
    np.testing.assert_array_equal(values, [[3, 2], [7, 6], [11, 10]])
    np.testing.assert_array_equal(indices, [[3, 2], [3, 2], [3, 2]])


def test_op_error_is_a_value_error():
    assert issubclass(ortops.OpError, ValueError)


def test_outputs_have_declared_dtype_and_are_contiguous(top_k_session):
    x = np.asfortranarray(np.random.default_rng(0).random((5, 7), dtype=np.float32))
    values, indices = top_k_session.run(None, {"data": x, "k": np.array([3])})
    assert values.dtype == np.float32 and indices.dtype == np.int32
    assert values.flags.c_contiguous and indices.flags.c_contiguous


def test_concurrent_good_and_bad_calls_do_not_see_each_others_errors(top_k_session):
    rng = np.random.default_rng(7)
    x = rng.random((16, 50), dtype=np.float32)
    want = np.argsort(-x, axis=1, kind="stable")
    failures = []

    def worker(n):
        for i in range(40):
            k = (n * 7 + i) % 60 + 1  # k > 50 is a bad call
            try:
                _, indices = top_k_session.run(None, {"data": x, "k": np.array([k])})
            except ortops.OpError as exc:
                if k <= 50 or f"k={k} " not in str(exc):
                    failures.append(f"thread {n}: k={k} got {exc}")
            else:
                if k > 50 or not np.array_equal(indices, want[:, :k]):
                    failures.append(f"thread {n}: k={k} wrong answer")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_raw_path_gives_empty_outputs_and_logs(caplog):
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value")
    session = ort.InferenceSession(model.SerializeToString(), ortops.session_options())
    x = np.ones((2, 3), np.float32)
    with caplog.at_level(logging.ERROR, logger="ortops"):
        values, indices = session.run(None, {"data": x, "k": np.array([9])})
    assert values.shape == (0,) and indices.shape == (0,)
    assert values.dtype == np.float32 and indices.dtype == np.int32
    assert any("k=9 is outside [1, 3]" in r.getMessage() for r in caplog.records)
    values, _ = session.run(None, {"data": x, "k": np.array([2])})
    assert values.shape == (2, 2)


def test_raw_path_never_answers_for_a_declared_i64_output(caplog):
    """A builder model declares int64 indices; the public registration's indices are int32. ORT
    may refuse the model at load; if it runs, the outputs are empty - never a wrong answer."""
    model = builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="max", sort="value", index_element_type="i64")
    options = ortops.session_options()
    try:
        session = ort.InferenceSession(model.SerializeToString(), options)
    except Exception as exc:  # ORT rejects the declared int64 output at load
        assert "int" in str(exc).lower()
        return
    with caplog.at_level(logging.ERROR, logger="ortops"):
        outputs = session.run(None, {"data": np.ones(3, np.float32), "k": np.array([1])})
    assert all(o.size == 0 for o in outputs)
    assert any("index_element_type='i64'" in r.getMessage() for r in caplog.records)


def test_raw_path_refuses_i64_indices_it_cannot_carry(caplog):
    """The node asks for i64 indices but the graph declares int32 ones, so ORT loads it with the
    public (int32) registration and the op itself must refuse: empty outputs, a logged error."""
    from helpers import top_k_model

    model = top_k_model(index_element_type="i64", index_type=TensorProto.INT32, axis=0)
    session = ort.InferenceSession(model.SerializeToString(), ortops.session_options())  # must load
    with caplog.at_level(logging.ERROR, logger="ortops"):
        outputs = session.run(None, {"data": np.array([1, 5, 3], np.float32), "k": np.array([2])})
    assert [o.shape for o in outputs] == [(0,), (0,)]
    messages = [r.getMessage() for r in caplog.records]
    assert any("index_element_type='i64' cannot be carried by the raw path" in m for m in messages), messages


def test_raw_path_after_prepare_model_carries_i64():
    model = builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="max", sort="value", index_element_type="i64")
    session = ort.InferenceSession(ortops.prepare_model(model).SerializeToString(), ortops.session_options())
    values, indices = session.run(None, {"data": np.array([1, 5, 3], np.float32), "k": np.array([2])})
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices, [1, 2])


def test_session_options_registers_library_once():
    options = ortops.session_options()
    assert ortops.session_options(options) is options  # a second call must not re-register (ORT would fail)


def test_errors_outside_a_capture_are_logged_not_raised(caplog):
    with caplog.at_level(logging.ERROR, logger="ortops"):
        bridge._report(ortops.OpError("TopK", "test message"))
    assert "TopK: test message" in caplog.text
    with bridge.capture_errors() as errors:
        bridge._report(ortops.OpError("TopK", "captured"))
    assert [str(e) for e in errors] == ["TopK: captured"]


def test_hook_turns_a_kernel_bug_into_an_error_not_an_abort(monkeypatch):
    ortops.register()
    kernel_id, kernel = next((i, k) for i, k in bridge._kernels.items() if k.op.op_type == "ArgMax")
    monkeypatch.setattr(kernel, "compute", lambda *a, **k: 1 / 0)
    with bridge.capture_errors() as errors:
        packed = bridge._hook(kernel_id, [np.ones(3, np.float32)], {"out_max_val": "0", "topk": "1"})
    assert packed[0] == kernel_id and packed[2].shape == (0,)
    assert "ZeroDivisionError" in str(errors[0])


def test_raw_path_errors_can_be_captured_per_call(caplog):
    model = builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="max", sort="value")
    session = ort.InferenceSession(model.SerializeToString(), ortops.session_options())
    with caplog.at_level(logging.ERROR, logger="ortops"):
        with ortops.capture_errors() as errors:
            values, _ = session.run(None, {"data": np.ones(3, np.float32), "k": np.array([4])})
    assert values.shape == (0,)
    assert len(errors) == 1 and isinstance(errors[0], ortops.OpError) and "k=4" in str(errors[0])
    assert not caplog.records  # captured, not logged
