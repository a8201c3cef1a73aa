"""A real model with real weights: the PP-OCRv4 text recogniser shipped by ``rapidocr-onnxruntime``.

The conformance runner needs real data flowing through the ops, not only generated arrays.
This module locates the recogniser of the PyPI wheel ``rapidocr-onnxruntime==1.4.4`` (the
``ocr`` extra: ``pip install 'ortops[ocr]'``), renders a line of text into its input, and
decodes its per-step class probabilities with greedy CTC.

The per-step top-k candidates (TopK), the argmax (ArgMax) and the mean confidence of the steps
that make up each decoded character (ScatterElementsUpdate with ``reduction="mean"``) are real
uses of ortops' three ops.

Importing this module is cheap: Pillow and onnx are imported inside the functions that need them,
and ``rapidocr_onnxruntime`` is never imported (it pulls in OpenCV); only its files are read.

The model (``ch_PP-OCRv4_rec_infer.onnx``, opset 12): input ``x``, float32 [N, 3, 48, W], RGB;
output float32 [N, T, 6625], a softmax over classes (T = 40 for W = 320); class 0 is the CTC blank,
classes 1..6623 the lines of ``metadata_props["character"]``, class 6624 a space.
"""

from __future__ import annotations

import bisect
import functools
import importlib.util
import pathlib
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:  # pragma: no cover - typing only
    import onnx
    from PIL import ImageFont

__all__ = [
    "PACKAGE",
    "MODEL_FILE",
    "MODEL_HEIGHT",
    "NUM_CLASSES",
    "BLANK",
    "BLANK_PLACEHOLDER",
    "DEFAULT_TEXT",
    "MARGIN",
    "Decoded",
    "model_path",
    "load_model",
    "characters",
    "font_description",
    "fit_font_size",
    "render_text",
    "preprocess",
    "ctc_greedy_decode",
]

#: The PyPI distribution's import name; it is located, never imported.
PACKAGE = "rapidocr_onnxruntime"
#: The recogniser's path inside the package.
MODEL_FILE = "models/ch_PP-OCRv4_rec_infer.onnx"
#: The image height the recogniser was trained on.
MODEL_HEIGHT = 48
#: Output classes: the blank, 6623 characters from the metadata, and a space.
NUM_CLASSES = 6625
#: Class index of the CTC blank.
BLANK = 0
#: Placeholder text for class 0 in :func:`characters` (never emitted by the decoder);
#: the same placeholder rapidocr uses.
BLANK_PLACEHOLDER = "blank"
#: The line the end-to-end check renders and expects back.
DEFAULT_TEXT = "TopK 2026 ONNX"
#: Pixels between the ink and each edge of the rendered image.
MARGIN = 4

_INSTALL_HINT = "install the ocr extra: pip install 'ortops[ocr]'"
_FONT_NAME = "DejaVuSans.ttf"
_SYSTEM_FONT = pathlib.Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


class Decoded(NamedTuple):
    """The result of :func:`ctc_greedy_decode`.

    Attributes
    ----------
    text : str
        The decoded text.
    char_of_step : numpy.ndarray, shape (T,), int64
        For each time step, the position in ``text`` of the character the step belongs to,
        or -1 for a blank step.
    """

    text: str
    char_of_step: np.ndarray


# --------------------------------------------------------------------------- model


def model_path() -> pathlib.Path:
    """Locate the PP-OCRv4 recogniser inside the installed ``rapidocr_onnxruntime`` package.

    The package is found with :func:`importlib.util.find_spec` and not imported.

    Returns
    -------
    pathlib.Path
        The path of ``rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx``.

    Raises
    ------
    ModuleNotFoundError
        If ``rapidocr_onnxruntime`` is not installed; the message says how to install it.
    FileNotFoundError
        If the package is installed but the model file is not in it.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{PACKAGE} is not installed; {_INSTALL_HINT}", name=PACKAGE)
    candidates = [pathlib.Path(location) / MODEL_FILE for location in spec.submodule_search_locations]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"{PACKAGE} is installed but has no {MODEL_FILE} (looked at {[str(c) for c in candidates]}); "
        f"reinstall it: pip install --force-reinstall 'ortops[ocr]'"
    )


def load_model() -> onnx.ModelProto:
    """Load the recogniser as an ONNX model.

    A fresh :class:`onnx.ModelProto` is returned on every call, so a caller may edit it.

    Returns
    -------
    onnx.ModelProto
        The model, with its weights and its ``metadata_props``.

    Raises
    ------
    ModuleNotFoundError
        If ``rapidocr_onnxruntime`` is not installed (see :func:`model_path`).
    """
    import onnx

    return onnx.load(model_path())


def characters(model: onnx.ModelProto) -> list[str]:
    """The character of every output class of the recogniser.

    Parameters
    ----------
    model : onnx.ModelProto
        The recogniser, as returned by :func:`load_model`.

    Returns
    -------
    list of str, length 6625
        Index i is class i: ``"blank"`` (a placeholder for the CTC blank, class 0), then the
        6623 lines of ``metadata_props["character"]``, then ``" "`` (class 6624).

    Raises
    ------
    ValueError
        If the model has no ``character`` metadata, or the number of characters does not match
        the size of the model's class axis.

    Notes
    -----
    The metadata is split on ``"\\n"`` only, not with :meth:`str.splitlines` (which would also
    split on characters such as U+2028 or U+0085). For this model both give 6623 lines.
    """
    metadata = {prop.key: prop.value for prop in model.metadata_props}
    if "character" not in metadata:
        raise ValueError(f"the model has no 'character' metadata; its metadata keys are {sorted(metadata)}")
    lines = metadata["character"].split("\n")
    if lines and lines[-1] == "":  # a trailing newline ends the last line; it adds no class
        lines.pop()
    chars = [BLANK_PLACEHOLDER, *lines, " "]
    output = model.graph.output[0]
    dims = output.type.tensor_type.shape.dim
    if not dims or not dims[-1].HasField("dim_value"):
        raise ValueError(f"output {output.name!r} has no static class axis: {[str(d).strip() for d in dims]}")
    num_classes = dims[-1].dim_value
    if len(chars) != num_classes:
        raise ValueError(
            f"the model has {num_classes} classes but its metadata gives {len(lines)} characters; "
            f"expected {num_classes - 2} (plus the blank and the space)"
        )
    return chars


# --------------------------------------------------------------------------- rendering


@functools.lru_cache(maxsize=1)
def _font_source() -> tuple[str | None, str]:
    """(DejaVu Sans's file, or None for Pillow's default font; description): by name, the Debian
    path, matplotlib's bundled copy, else Pillow's default."""
    from PIL import ImageFont

    matplotlib = importlib.util.find_spec("matplotlib")
    # matplotlib.get_data_path() is <package>/mpl-data; found without importing matplotlib.
    bundled = matplotlib.submodule_search_locations if matplotlib else None
    candidates = [_FONT_NAME, str(_SYSTEM_FONT),
                  *(str(pathlib.Path(place, "mpl-data", "fonts", "ttf", _FONT_NAME)) for place in bundled or ())]
    for candidate in candidates:
        try:
            font = ImageFont.truetype(candidate, 10)
        except OSError:
            continue
        family, style = font.getname()
        return candidate, f"{family} {style} ({font.path})"
    default = ImageFont.load_default(size=10)
    if isinstance(default, ImageFont.FreeTypeFont):
        family, style = default.getname()
        return None, f"{family} {style} (Pillow's default font; DejaVu Sans was not found)"
    return None, "Pillow's bitmap default font (DejaVu Sans was not found; FreeType is unavailable)"


def font_description() -> str:
    """Say which font :func:`render_text` draws with.

    Returns
    -------
    str
        Family, style and file, for example
        ``"DejaVu Sans Book (/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf)"``.
        When DejaVu Sans is not found, the description says so and names Pillow's default font.
    """
    return _font_source()[1]


@functools.lru_cache(maxsize=128)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The font of :func:`font_description` at ``size`` pixels."""
    from PIL import ImageFont

    source = _font_source()[0]
    return ImageFont.load_default(size=size) if source is None else ImageFont.truetype(source, size)


def _check(text: str, width: int, height: int) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text={text!r} must be a str")
    if not text.strip():
        raise ValueError(f"text={text!r} has nothing to draw")
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name}={value!r} must be an int")
        if value <= 2 * MARGIN:
            raise ValueError(f"{name}={value} must be above {2 * MARGIN} (twice the margin of {MARGIN} px)")


def fit_font_size(text: str = DEFAULT_TEXT, width: int = 320, height: int = 48) -> int:
    """The font size :func:`render_text` uses when none is given.

    Parameters
    ----------
    text : str, default "TopK 2026 ONNX"
        The line to draw.
    width, height : int, default 320, 48
        The image size in pixels.

    Returns
    -------
    int
        The largest size, in pixels, at which the ink of ``text`` fits inside the image less a
        margin of :data:`MARGIN` pixels on every side. 36 for the defaults with DejaVu Sans.

    Raises
    ------
    TypeError
        If ``text`` is not a str, or ``width`` or ``height`` is not an int.
    ValueError
        If ``text`` is blank, ``width`` or ``height`` is at most twice the margin, or the text
        does not fit even at size 1.
    """
    _check(text, width, height)
    return _fit_font_size(text, width, height)


def _fit_font_size(text: str, width: int, height: int) -> int:
    """Binary search over sizes in [1, 4 * height] (the ink of ``"ace"`` is much smaller than its size)."""
    room_x, room_y = width - 2 * MARGIN, height - 2 * MARGIN

    def too_big(size: int) -> bool:
        left, top, right, bottom = _font(size).getbbox(text)
        return right - left > room_x or bottom - top > room_y

    sizes = range(1, 4 * height + 1)
    fitting = bisect.bisect_left(sizes, True, key=too_big)  # the sizes that fit come first
    if not fitting:
        raise ValueError(f"text={text!r} does not fit in width={width}, height={height} even at font size 1")
    return sizes[fitting - 1]


def render_text(
    text: str = DEFAULT_TEXT, width: int = 320, height: int = 48, *, size: int | None = None
) -> np.ndarray:
    """Draw one line of black text on a white image.

    Parameters
    ----------
    text : str, default "TopK 2026 ONNX"
        The line to draw.
    width, height : int, default 320, 48
        The image size in pixels. The recogniser expects ``height=48``.
    size : int, optional
        Font size in pixels. By default the largest size that fits (see :func:`fit_font_size`),
        so that the text fills the width.

    Returns
    -------
    numpy.ndarray, shape (height, width, 3), uint8
        An RGB image: white background, black text in DejaVu Sans (see :func:`font_description`),
        the left edge of the ink :data:`MARGIN` pixels from the left, the ink centred vertically.

    Raises
    ------
    TypeError
        If ``text`` is not a str, or ``width``, ``height`` or ``size`` is not an int.
    ValueError
        If ``text`` is blank, ``width`` or ``height`` is at most ``2 * MARGIN``, ``size`` is below 1,
        or (with the default size) the text does not fit.

    Notes
    -----
    The text fills the width: a wide white area after it makes the recogniser emit a phantom
    trailing space (measured: docs/conformance.md). Give short texts a smaller ``width``.
    """
    from PIL import Image, ImageDraw

    _check(text, width, height)
    if size is None:
        size = _fit_font_size(text, width, height)
    elif isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"size={size!r} must be an int or None")
    elif size < 1:
        raise ValueError(f"size={size} must be at least 1")
    font = _font(int(size))
    left, top, _, bottom = font.getbbox(text)
    origin = (MARGIN - left, round((height - (top + bottom)) / 2))
    image = Image.new("RGB", (int(width), int(height)), "white")
    ImageDraw.Draw(image).text(origin, text, fill="black", font=font)
    return np.asarray(image, dtype=np.uint8).copy()


# --------------------------------------------------------------------------- inference


def preprocess(image: np.ndarray) -> np.ndarray:
    """Turn an RGB image into the recogniser's input.

    Parameters
    ----------
    image : numpy.ndarray, shape (48, W, 3), uint8
        An RGB image, as from :func:`render_text`.

    Returns
    -------
    numpy.ndarray, shape (1, 3, 48, W), float32
        ``(pixel / 255 - 0.5) / 0.5`` in CHW order: values in [-1, 1], white is 1.

    Raises
    ------
    TypeError
        If ``image`` is not uint8.
    ValueError
        If ``image`` does not have shape (48, W, 3) with W >= 1.
    """
    image = np.asarray(image)
    if image.dtype != np.uint8:
        raise TypeError(f"image has dtype {image.dtype}; it must be uint8")
    if image.ndim != 3 or image.shape[0] != MODEL_HEIGHT or image.shape[2] != 3 or image.shape[1] < 1:
        raise ValueError(
            f"{image.shape=} must be ({MODEL_HEIGHT}, W, 3) with W >= 1 (an RGB image {MODEL_HEIGHT} high)"
        )
    scaled = image.astype(np.float32) / np.float32(255.0)
    normalised = (scaled - np.float32(0.5)) / np.float32(0.5)
    return np.ascontiguousarray(normalised.transpose(2, 0, 1)[np.newaxis])


# --------------------------------------------------------------------------- decoding


def ctc_greedy_decode(step_classes: np.ndarray, chars: list[str]) -> Decoded:
    """Greedy CTC decoding: collapse runs of the same class, then drop blanks.

    Parameters
    ----------
    step_classes : numpy.ndarray, shape (T,), integer
        The chosen class of every time step (usually the argmax of the probabilities).
    chars : list of str
        The character of every class; class :data:`BLANK` (0) is the blank.

    Returns
    -------
    Decoded
        ``text``, and ``char_of_step``, int64 [T]: for every step, the position in ``text`` of
        the character it belongs to, or -1 for a blank step. A run of identical non-blank
        classes is one character; the same class after a blank starts a new one.

    Raises
    ------
    TypeError
        If ``step_classes`` is not an integer array.
    ValueError
        If ``step_classes`` is not 1-D, or holds a class outside [0, len(chars) - 1].

    Notes
    -----
    Example: classes [0, 5, 5, 0, 5, 7, 7, 0] give three characters (5, 5, 7) and
    ``char_of_step`` [-1, 0, 0, -1, 1, 2, 2, -1]. A class decodes to ``chars[class]`` even when
    that is several characters long, so ``len(text)`` can exceed the number of decoded classes;
    ``char_of_step`` counts decoded classes. For this model every class is one character.
    """
    steps = np.asarray(step_classes)
    if not np.issubdtype(steps.dtype, np.integer):
        raise TypeError(f"step_classes has dtype {steps.dtype}; it must be an integer type")
    if steps.ndim != 1:
        raise ValueError(f"step_classes has shape {steps.shape}; it must be 1-D, shape (T,)")
    if steps.size and (steps.min() < 0 or steps.max() >= len(chars)):
        raise ValueError(
            f"step_classes holds classes in [{steps.min()}, {steps.max()}], outside [0, {len(chars) - 1}] "
            f"for {len(chars)} characters"
        )
    return _ctc_greedy_decode(steps.astype(np.int64), chars)


def _ctc_greedy_decode(steps: np.ndarray, chars: list[str]) -> Decoded:
    """Decode trusted 1-D int64 classes in [0, len(chars))."""
    not_blank = steps != BLANK
    starts = not_blank.copy()
    starts[1:] &= steps[1:] != steps[:-1]  # a run of one class starts one character
    char_of_step = np.where(not_blank, np.cumsum(starts) - 1, -1).astype(np.int64)
    text = "".join(chars[c] for c in steps[starts])
    return Decoded(text, char_of_step)
