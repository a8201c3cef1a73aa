"""The op specifications: each op's one table, read by every shared layer."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from onnx import defs

from ortops import bridge, dtypes
from ortops.bench.cases import OpBench
from ortops.builder.schemas import SCHEMA_VERSION, register_schemas
from ortops.compare.audit import OpAudits
from ortops.conformance.contracts import NcnnJudge, OpJudge, OpenVinoJudge, Suite
from ortops.errors import OpError
from ortops.lowering import Lowering
from ortops.ops import ARG_MAX, DOMAINS, OPS, SCATTER_ELEMENTS_UPDATE, TOP_K, by_name, find_op
from ortops.ops.spec import OpSpec
from ortops.ops.tooling import TOOLING, OpTooling, tooling


def test_the_op_list():
    assert OPS == (TOP_K, SCATTER_ELEMENTS_UPDATE, ARG_MAX)
    assert DOMAINS == ("ortops.openvino", "ortops.ncnn")
    assert find_op("ortops.ncnn", "ArgMax") is ARG_MAX and find_op("ortops.ncnn", "TopK") is None
    assert by_name("TopK") is TOP_K
    with pytest.raises(KeyError):
        by_name("Sort")
    # The layers that prove each op: one entry per op, in the same order, for the same objects.
    assert len(TOOLING) == len(OPS) and all(t.op is op for t, op in zip(TOOLING, OPS))
    assert tooling("ArgMax").op is ARG_MAX
    with pytest.raises(KeyError):
        tooling("Sort")


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.op_type)
def test_every_spec_is_complete_and_consistent(op: OpSpec):
    assert len(op.input_types) == len(op.inputs) and len(op.output_types) == len(op.outputs)
    params = {t.name for t in op.type_params}
    assert set(op.input_types) | set(op.output_types) == params
    for table in op.type_params:
        for name in (*table.types, *(table.schema_types or ())):
            dtypes.from_name(name)  # every type is a row of the one table
    for layer in (op.reference, op.kernel, op.openvino):
        assert callable(layer.resolve())
    # The session's path: a fixed one, or one chosen per node (here: defaults, unknown shape).
    path = op.session_path
    if callable(path):
        elem = dtypes.from_name(op.type_params[0].types[0]).onnx
        path = path({a.name: a.default for a in op.attrs}, [None] * len(op.inputs), [elem] * len(op.inputs))
    assert path in ("lowered", "pyop")


#: Each contract a tool layer states as a Protocol, and the layer of the op's :class:`OpTooling`
#: (its spec's lowering, or a member of its judge) that fulfils it.
CONTRACTS = {"lowering": Lowering, "cases": Suite, "judge": OpJudge, "judge.OPENVINO": OpenVinoJudge,
             "judge.NCNN": NcnnJudge, "bench": OpBench, "judge.AUDITS": OpAudits}


def _layer(tool: OpTooling, link: str):
    """What fulfils ``link`` for the op of ``tool``, or None when the op has none."""
    name, _, member = link.partition(".")
    if name == "lowering":
        return tool.op.lowering and tool.op.lowering()
    layer = getattr(tool, name)
    return layer if member in ("", "AUDITS") else getattr(layer, member, None)


def _members(protocol) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")} | set(protocol.__annotations__)


@pytest.mark.parametrize("tool", TOOLING, ids=lambda tool: tool.op.op_type)
@pytest.mark.parametrize("link", CONTRACTS)
def test_every_op_keeps_every_contract(tool: OpTooling, link: str):
    op, layer, protocol = tool.op, _layer(tool, link), CONTRACTS[link]
    if layer is None:
        assert link in ("judge.NCNN", "lowering"), f"{op.op_type} has no {link}"  # only these are optional
        return
    assert isinstance(layer, protocol), f"{op.op_type}.{link} lacks {_members(protocol) - set(dir(layer))}"
    for name in _members(protocol):
        member = getattr(layer, name)
        declared = getattr(protocol, name, None)
        if callable(declared):  # a method: the op's function takes the same parameters
            want = [p for p in inspect.signature(declared).parameters if p != "self"]
            got = list(inspect.signature(member).parameters)[:len(want)]
            assert got == want, f"{op.op_type}.{link}.{name}{tuple(got)} is not {name}{tuple(want)}"


def test_a_layer_that_breaks_its_contract_is_caught():
    class Incomplete:
        CASE_SOURCES = {}

        def judge(self, case):
            return []

    assert not isinstance(Incomplete(), OpJudge)  # no topics, model, expected or OPENVINO
    top_k = tooling("TopK")
    assert isinstance(top_k.cases, Suite) and not isinstance(top_k.cases, NcnnJudge)
    assert isinstance(top_k.judge, OpJudge) and not hasattr(top_k.judge, "NCNN")
    assert isinstance(tooling("ArgMax").judge.NCNN, NcnnJudge)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.op_type)
def test_attribute_defaults_and_errors(op: OpSpec):
    required = {a.name: (a.choices[0] if a.choices else 0) for a in op.attrs if a.required}
    parsed = op.parse_attributes(required)
    assert parsed == {**required, **op.defaults()}
    with pytest.raises(OpError, match="unknown attribute") as info:
        op.parse_attributes({**required, "no_such": 1}, "n")
    assert info.value.kind == "attribute" and info.value.node_name == "n"


def test_an_integer_attribute_is_any_integer_in_int64():
    """NumPy integers and digit strings are integers; a bool, a non-ASCII digit and a value
    beyond int64 (ONNX's integer attribute) are OpErrors naming the value."""
    base = {"mode": "max", "sort": "value"}
    for value, want in ((np.int64(-1), -1), (np.int32(1), 1), ("-2", -2), (2 ** 63 - 1, 2 ** 63 - 1),
                        ("0" * 30 + "7", 7)):
        assert TOP_K.parse_attributes({**base, "axis": value})["axis"] == want
    for value, message in ((True, "axis=True is not an integer"), (np.bool_(True), "is not an integer"),
                           ("\u00b2", "axis='\u00b2' is not an integer"), (1.0, "axis=1.0 is not an integer"),
                           (2 ** 70, f"axis={2 ** 70} does not fit int64"), (-(2 ** 63) - 1, "does not fit int64"),
                           ("9" * 5000, r"axis=9{20}\.\.\. \(5000 characters\) does not fit int64")):
        with pytest.raises(OpError, match=message) as info:
            TOP_K.parse_attributes({**base, "axis": value})
        assert info.value.kind == "attribute"


def test_top_k_variants_choose_the_index_type():
    assert TOP_K.variant({"index_element_type": "i64"}).suffix == "_i64"
    assert TOP_K.variant(TOP_K.defaults()).suffix == "_i32"
    assert SCATTER_ELEMENTS_UPDATE.variant(SCATTER_ELEMENTS_UPDATE.defaults()) is None


def test_check_dtype_reads_the_type_table():
    TOP_K.check_dtype("data", np.dtype(np.uint64))
    SCATTER_ELEMENTS_UPDATE.check_dtype("data", np.dtype(np.bool_))
    for op, dtype in ((TOP_K, np.bool_), (TOP_K, np.float16), (ARG_MAX, np.float64)):
        with pytest.raises(OpError, match="has dtype") as info:
            op.check_dtype("data", np.dtype(dtype))
        assert info.value.kind == "dtype"


def test_bridge_registrations_come_from_the_specs():
    families = {b.qualified_name: b for b in bridge.bridge_ops()}
    assert set(families) == {
        "ortops.openvino::TopK", "ortops.openvino::ScatterElementsUpdate", "ortops.ncnn::ArgMax",
        "ortops._bridge::TopK_i32", "ortops._bridge::TopK_i64", "ortops._bridge::ScatterElementsUpdate",
        "ortops._bridge::ArgMax", "ortops._bridge::ScatterElementsUpdate_float16",
        "ortops._bridge::ScatterElementsUpdate_bfloat16"}
    # The raw path takes k, indices and axis as int32, int64 or uint64 (RAW_INDEX_TYPES).
    assert len(families["ortops.openvino::TopK"].signatures) == 10 * 3  # numeric data x k
    assert len(families["ortops.openvino::ScatterElementsUpdate"].signatures) == 11 * 3 * 3
    assert {s[0][1].name for s in families["ortops.openvino::TopK"].signatures} == {"int32", "int64", "uint64"}
    assert {s[1][1].name for s in families["ortops._bridge::TopK_i64"].signatures} == {"int64"}
    assert {s[1][1].name for s in families["ortops.openvino::TopK"].signatures} == {"int32"}
    assert families["ortops.openvino::TopK"].requires == (("index_element_type", "i32"),)
    assert {s[0][0].name for s in families["ortops._bridge::ScatterElementsUpdate_float16"].signatures} == {"double"}


def test_private_types_widen_exactly():
    """A narrowed type parameter types no output, and each of its types reaches the private
    registrations as itself or as a type holding all its values (NumPy's iinfo decides)."""
    narrowed = [(op, t) for op in OPS for t in op.type_params if t.private_types is not None]
    assert {(op.op_type, t.name) for op, t in narrowed} == {
        ("TopK", "T_K"), ("ScatterElementsUpdate", "T_IND"), ("ScatterElementsUpdate", "T_AXIS")}
    for op, table in narrowed:
        assert table.name not in op.output_types
        role = op.inputs[op.input_types.index(table.name)]
        for name in table.types:
            wide = op.private_type(role, name)
            assert wide in table.private_types
            small, large = np.iinfo(dtypes.from_name(name).numpy), np.iinfo(dtypes.from_name(wide).numpy)
            assert large.min <= small.min and small.max <= large.max, (name, wide)
            assert (wide == name) == (name in ("int64", "uint64")), (name, wide)
    assert TOP_K.private_type("data", "float16") == "float16"  # not narrowed


def test_schemas_come_from_the_specs():
    register_schemas()
    register_schemas()  # idempotent
    for op in OPS:
        schema = defs.get_schema(op.op_type, SCHEMA_VERSION, op.domain)
        assert [i.name for i in schema.inputs] == list(op.inputs)
        assert [o.name for o in schema.outputs] == list(op.outputs)
        constraints = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
        for table in op.type_params:
            assert constraints[table.name] == {f"tensor({n})" for n in (table.schema_types or table.types)}
        assert {a for a in schema.attributes} == {a.name for a in op.attrs}


def test_run_reference_carries_float16_as_the_bridge_does():
    data = np.array([1.5, -2.0, 65504.0], np.float16)
    attrs = dict(axis=0, mode="max", sort="value", stable=1, index_element_type="i64")
    values, indices = TOP_K.run_reference({"data": data, "k": np.array([2])}, attrs)
    assert values.dtype == np.float16 and values.tolist() == [65504.0, 1.5] and indices.tolist() == [2, 0]
    updates = np.array([1.0, 2.0**-11, 2.0**-11], np.float16)  # 1 + 2**-11 is a float16 tie: it rounds to 1
    inputs = {"data": np.zeros(2, np.float16), "indices": np.array([0, 0, 0]), "updates": updates,
              "axis": np.array([0])}
    (output,) = SCATTER_ELEMENTS_UPDATE.run_reference(inputs, dict(reduction="sum", use_init_val=1))
    assert output.dtype == np.float16 and output.tolist() == [1.0 + 2.0**-10, 0.0]  # float64 sum, rounded once
    with pytest.raises(OpError):
        ARG_MAX.run_reference({"data": np.ones(3, np.float16)}, dict(out_max_val=0, topk=1))
