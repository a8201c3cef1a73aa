"""Session options that already loaded the onnxruntime-extensions library work with ortops.

Loading the library a second time into the same options makes session creation fail
("Conflicting with a registered kernel"); ortops must load it once.
"""

from __future__ import annotations

from child_process import run_child


def test_options_that_already_loaded_the_extensions_library():
    child = run_child("""
import numpy as np
import onnxruntime as ort
import onnxruntime_extensions
from onnx import TensorProto
import ortops
from ortops import builder

options_loaded_too_early = ort.SessionOptions()  # the library takes the PyOps registered when it loads
options_loaded_too_early.register_custom_ops_library(onnxruntime_extensions.get_library_path())
ortops.register()
model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1, k_shape=[1])
feed = {"data": np.array([[1, 5, 3]], np.float32), "k": np.array([2])}

def users_options():
    options = ort.SessionOptions()
    options.register_custom_ops_library(onnxruntime_extensions.get_library_path())
    return options

values, indices = ortops.InferenceSession(model, users_options(), path="pyop").run(None, feed)
print(values.tolist(), indices.tolist())
raw = ort.InferenceSession(model.SerializeToString(), ortops.session_options(users_options()),
                           providers=["CPUExecutionProvider"])
print(raw.run(None, feed)[0].tolist())
options = users_options()                        # the same options, used twice
ortops.InferenceSession(model, options, path="pyop")
print(ortops.InferenceSession(model, options, path="pyop").run(None, feed)[0].tolist())
plain = ort.SessionOptions()                     # options without the library still get it
print(ortops.InferenceSession(model, plain, path="pyop").run(None, feed)[0].tolist())
try:
    ortops.InferenceSession(model, options_loaded_too_early, path="pyop")
except ValueError as exc:
    print("refused:", "ortops.register() before" in str(exc))
# Every ortops node lowered, none left as PyOp (where this ORT's TopK rejects bad k itself):
# the options are used as they are. Integer data: no NaN check that might need the PyOp.
int_model = builder.top_k_model(TensorProto.INT32, 2, axis=-1, mode="max", sort="value", stable=1, k_shape=[1])
int_feed = {"data": np.array([[1, 5, 3]], np.int32), "k": np.array([2])}
try:
    print(ortops.InferenceSession(int_model, options_loaded_too_early, path="lowered").run(None, int_feed)[0].tolist())
except ValueError as exc:
    print("refused:", "ortops.register() before" in str(exc))
""", timeout=120)
    from ortops.lowering import runtime_facts

    assert child.status == 0, child.describe()
    plain = "[[5, 3]]" if "topk_rejects_bad_k" in runtime_facts() else "refused: True"  # observed, not assumed
    assert child.lines()[-6:] == ["[[5.0, 3.0]] [[1, 2]]", "[[5.0, 3.0]]", "[[5.0, 3.0]]", "[[5.0, 3.0]]",
                                  "refused: True", plain], \
        child.describe()
