"""Tests for ortops.ocr: the PP-OCRv4 recogniser from the rapidocr-onnxruntime wheel."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

pytest.importorskip(
    "rapidocr_onnxruntime",
    reason="the real-model checks need rapidocr-onnxruntime: pip install 'ortops[ocr]'",
)

from hypothesis import given
from hypothesis import strategies as st

from ortops import ocr

FAKE_CHARS = ["<blank>", "a", "b", "c", "d", "e", "f", "g"]


@pytest.fixture(scope="module")
def model():
    return ocr.load_model()


@pytest.fixture(scope="module")
def chars(model):
    return ocr.characters(model)


@pytest.fixture(scope="module")
def dejavu():
    """Skip checks whose expected text was measured with DejaVu Sans when it is not available."""
    description = ocr.font_description()
    if not description.startswith("DejaVu Sans Book"):
        pytest.skip(f"the expected decodings were measured with DejaVu Sans; this machine draws with {description}")
    return description


# --------------------------------------------------------------------------- model


def test_model_path_exists():
    path = ocr.model_path()
    assert path.is_file()
    assert path.name == "ch_PP-OCRv4_rec_infer.onnx"
    assert path.parent.parent.name == "rapidocr_onnxruntime"


def test_model_path_without_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(ocr.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'ortops\[ocr\]'"):
        ocr.model_path()


def test_model_facts(model):
    assert model.ir_version == 8
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 12)]
    assert [i.name for i in model.graph.input] == ["x"]
    assert model.graph.output[0].type.tensor_type.shape.dim[-1].dim_value == 6625


def test_characters(chars):
    assert len(chars) == ocr.NUM_CLASSES == 6625
    assert chars[ocr.BLANK] == ocr.BLANK_PLACEHOLDER == "blank"
    assert chars[-1] == " "
    assert chars[1] == "'"  # the first line of the metadata
    assert all(len(c) == 1 for c in chars[1:])


def _tiny_model(character: str | None, num_classes: int):
    """An Identity model whose output has ``num_classes`` classes, with ``character`` metadata."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, num_classes])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, num_classes])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "tiny", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)], ir_version=8)
    if character is not None:
        helper.set_model_props(model, {"character": character})
    return model


def test_characters_of_a_tiny_model():
    assert ocr.characters(_tiny_model("x\ny\nz", 5)) == ["blank", "x", "y", "z", " "]
    assert ocr.characters(_tiny_model("x\ny\nz\n", 5)) == ["blank", "x", "y", "z", " "]


def test_characters_splits_on_newline_only():
    # U+2028 is a line boundary for str.splitlines but is one character here.
    assert ocr.characters(_tiny_model("x\n\u2028\nz", 5)) == ["blank", "x", "\u2028", "z", " "]


def test_characters_count_mismatch_raises():
    with pytest.raises(ValueError, match="5 classes but its metadata gives 2 characters"):
        ocr.characters(_tiny_model("x\ny", 5))


def test_characters_without_metadata_raises():
    with pytest.raises(ValueError, match="no 'character' metadata"):
        ocr.characters(_tiny_model(None, 5))


# --------------------------------------------------------------------------- rendering


def test_render_text_shape_dtype_and_colours():
    image = ocr.render_text()
    assert image.shape == (48, 320, 3)
    assert image.dtype == np.uint8
    assert image.min() == 0 and image.max() == 255
    assert (image[..., 0] == image[..., 1]).all() and (image[..., 1] == image[..., 2]).all()  # grey only
    ink = (image < 255).any(axis=2)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    assert cols.min() >= ocr.MARGIN - 1 and cols.max() < 320 - ocr.MARGIN + 1
    assert rows.min() >= ocr.MARGIN - 1 and rows.max() < 48 - ocr.MARGIN + 1
    assert abs(rows.min() - (47 - rows.max())) <= 1  # centred vertically
    assert (ink.sum() / ink.size) > 0.05  # there is text, not a stray pixel


def test_render_text_other_sizes():
    assert ocr.render_text("ab", width=40, height=48).shape == (48, 40, 3)
    assert ocr.render_text("ab", width=100, height=30, size=12).shape == (30, 100, 3)


def test_render_text_is_deterministic():
    np.testing.assert_array_equal(ocr.render_text("OpenVINO"), ocr.render_text("OpenVINO"))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"text": ""}, ValueError, "nothing to draw"),
        ({"text": "   "}, ValueError, "nothing to draw"),
        ({"text": 3}, TypeError, "must be a str"),
        ({"width": 8}, ValueError, "width=8 must be above 8"),
        ({"height": 2.5}, TypeError, "height=2.5 must be an int"),
        ({"size": 0}, ValueError, "size=0 must be at least 1"),
        ({"size": 20.0}, TypeError, "size=20.0 must be an int"),
        ({"text": "W" * 400, "width": 20}, ValueError, "does not fit"),
    ],
)
def test_render_text_rejects(kwargs, error, match):
    with pytest.raises(error, match=match):
        ocr.render_text(**kwargs)


def test_fit_font_size_fills_the_width():
    size = ocr.fit_font_size("TopK 2026 ONNX", 320, 48)
    font = ocr._font(size)
    left, top, right, bottom = font.getbbox("TopK 2026 ONNX")
    assert right - left <= 320 - 2 * ocr.MARGIN and bottom - top <= 48 - 2 * ocr.MARGIN
    left, top, right, bottom = ocr._font(size + 1).getbbox("TopK 2026 ONNX")
    assert right - left > 320 - 2 * ocr.MARGIN or bottom - top > 48 - 2 * ocr.MARGIN


def test_fit_font_size_default_with_dejavu(dejavu):
    assert ocr.fit_font_size() == 36


def test_font_description_names_the_font():
    description = ocr.font_description()
    assert isinstance(description, str) and description


@pytest.fixture
def no_dejavu(monkeypatch):
    """Hide every DejaVu Sans candidate, so render_text falls back to Pillow's default font."""
    monkeypatch.setattr(ocr, "_FONT_NAME", "NoSuchFont-ortops.ttf")
    monkeypatch.setattr(ocr, "_SYSTEM_FONT", ocr.pathlib.Path("/nonexistent/NoSuchFont-ortops.ttf"))
    monkeypatch.setattr(ocr.importlib.util, "find_spec", lambda name: None)  # no matplotlib
    ocr._font_source.cache_clear()
    ocr._font.cache_clear()
    yield
    ocr._font_source.cache_clear()
    ocr._font.cache_clear()


def test_render_text_falls_back_to_pillows_font(no_dejavu):
    assert "DejaVu Sans was not found" in ocr.font_description()
    image = ocr.render_text("TopK 2026 ONNX")
    assert image.shape == (48, 320, 3) and image.dtype == np.uint8
    assert image.min() < 128 and image.max() == 255


def test_preprocess_shape_dtype_range():
    batch = ocr.preprocess(ocr.render_text())
    assert batch.shape == (1, 3, 48, 320)
    assert batch.dtype == np.float32
    assert batch.flags.c_contiguous
    assert batch.min() == -1.0 and batch.max() == 1.0


def test_preprocess_values_and_channel_order():
    image = np.full((48, 5, 3), 255, dtype=np.uint8)
    image[2, 3] = (255, 0, 51)  # R, G, B
    batch = ocr.preprocess(image)
    # (p / 255 - 0.5) / 0.5: 255 -> 1, 0 -> -1, 51 -> (0.2 - 0.5) / 0.5 = -0.6
    np.testing.assert_allclose(batch[0, :, 2, 3], [1.0, -1.0, -0.6], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(batch[0, :, 0, 0], np.float32([1, 1, 1]))


@pytest.mark.parametrize(
    ("image", "error", "match"),
    [
        (np.zeros((48, 10, 3), np.float32), TypeError, "dtype float32"),
        (np.zeros((32, 10, 3), np.uint8), ValueError, r"image.shape=\(32, 10, 3\)"),
        (np.zeros((48, 10), np.uint8), ValueError, r"image.shape=\(48, 10\)"),
        (np.zeros((48, 10, 4), np.uint8), ValueError, r"image.shape=\(48, 10, 4\)"),
        (np.zeros((48, 0, 3), np.uint8), ValueError, r"W >= 1"),
    ],
)
def test_preprocess_rejects(image, error, match):
    with pytest.raises(error, match=match):
        ocr.preprocess(image)


# --------------------------------------------------------------------------- decoding


@pytest.mark.parametrize(
    ("steps", "text", "char_of_step"),
    [
        ([0, 5, 5, 0, 5, 7, 7, 0], "eeg", [-1, 0, 0, -1, 1, 2, 2, -1]),
        ([1, 1, 2, 1], "aba", [0, 0, 1, 2]),
        ([3, 0, 0, 3], "cc", [0, -1, -1, 1]),
        ([0, 0, 0], "", [-1, -1, -1]),
        ([7], "g", [0]),
        ([], "", []),
    ],
)
def test_ctc_greedy_decode_by_hand(steps, text, char_of_step):
    decoded = ocr.ctc_greedy_decode(np.array(steps, dtype=np.int64), FAKE_CHARS)
    assert isinstance(decoded, ocr.Decoded)
    assert decoded.text == text
    assert decoded.char_of_step.dtype == np.int64
    np.testing.assert_array_equal(decoded.char_of_step, np.array(char_of_step, dtype=np.int64))


def test_ctc_greedy_decode_takes_any_integer_dtype():
    decoded = ocr.ctc_greedy_decode(np.array([0, 5, 5, 0, 5, 7, 7, 0], dtype=np.uint16), FAKE_CHARS)
    assert decoded.text == "eeg"
    assert decoded.char_of_step.dtype == np.int64


@pytest.mark.parametrize(
    ("steps", "error", "match"),
    [
        (np.array([0.0, 1.0]), TypeError, "dtype float64"),
        (np.zeros((1, 3), np.int64), ValueError, r"shape \(1, 3\)"),
        (np.array([0, 8]), ValueError, r"outside \[0, 7\]"),
        (np.array([-1, 0]), ValueError, r"outside \[0, 7\]"),
    ],
)
def test_ctc_greedy_decode_rejects(steps, error, match):
    with pytest.raises(error, match=match):
        ocr.ctc_greedy_decode(steps, FAKE_CHARS)


def _naive_decode(steps: list[int], chars: list[str]) -> tuple[str, list[int]]:
    """Greedy CTC written as a loop over runs, for the property test."""
    text, char_of_step = "", []
    for cls, run in itertools.groupby(steps):
        n = len(list(run))
        if cls == 0:
            char_of_step += [-1] * n
        else:
            char_of_step += [len(text)] * n
            text += chars[cls]
    return text, char_of_step


@given(st.lists(st.integers(0, len(FAKE_CHARS) - 1), max_size=60))
def test_ctc_greedy_decode_matches_a_loop(steps):
    decoded = ocr.ctc_greedy_decode(np.array(steps, dtype=np.int64), FAKE_CHARS)
    text, char_of_step = _naive_decode(steps, FAKE_CHARS)
    assert decoded.text == text
    assert decoded.char_of_step.tolist() == char_of_step


# --------------------------------------------------------------------------- end to end


@functools.lru_cache(maxsize=1)
def _session():
    import onnxruntime

    return onnxruntime.InferenceSession(str(ocr.model_path()), providers=["CPUExecutionProvider"])


def _recognize(image: np.ndarray) -> np.ndarray:
    """The recogniser's per-step class probabilities for one image, in a plain ORT session."""
    session = _session()
    return session.run(None, {session.get_inputs()[0].name: ocr.preprocess(image)})[0]


def test_the_recogniser_gives_probabilities_per_step(chars):
    probs = _recognize(ocr.render_text())
    assert probs.shape == (1, 40, 6625)
    assert probs.dtype == np.float32
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, atol=1e-4)


# Strings tried at width 320 that decode exactly with DejaVu Sans at the fitted size.
# Tried and left out: "ncnn ArgMax topk=1" (gives a trailing space), "Hello World" at 320
# (text 48 px high is too large for the model).
DECODED_AT_320 = ["TopK 2026 ONNX", "ScatterElementsUpdate", "OpenVINO TopK-11", "ONNX Runtime 1.31"]


@pytest.mark.parametrize("text", DECODED_AT_320)
def test_end_to_end_decodes_exactly(text, chars, dejavu):
    probs = _recognize(ocr.render_text(text))
    decoded = ocr.ctc_greedy_decode(probs[0].argmax(axis=-1), chars)
    assert decoded.text == text
    assert decoded.char_of_step.shape == (probs.shape[1],)
    # every character owns at least one step, in order
    owned = decoded.char_of_step[decoded.char_of_step >= 0]
    np.testing.assert_array_equal(np.unique(owned), np.arange(len(text)))
    assert (np.diff(owned) >= 0).all()


@pytest.mark.parametrize("size", [24, 30, 32])
def test_white_margin_after_text_gives_a_phantom_space(size, chars, dejavu):
    """The reason render_text fills the width (see its Notes): smaller text leaves 30-100 px of white."""
    probs = _recognize(ocr.render_text("TopK 2026 ONNX", size=size))
    assert ocr.ctc_greedy_decode(probs[0].argmax(axis=-1), chars).text == "TopK 2026 ONNX "
