"""The one exception type ortops raises for a caller's mistake."""

from __future__ import annotations

__all__ = ["OpError", "KINDS", "truncated", "MESSAGE_LIMIT"]

#: What an :class:`OpError` is about, machine-readable (``OpError.kind``).
KINDS = {
    "attribute": "an attribute is missing, repeated, unknown, of the wrong type or out of range",
    "dtype": "an input's element type is not one the op takes",
    "shape": "an input's rank or shape does not fit (e.g. a non-scalar k, updates unlike indices)",
    "axis": "an axis outside [-rank, rank-1]",
    "k_range": "k (TopK) or topk (ArgMax) outside [1, size]",
    "index_range": "an index outside [-d, d-1]",
    "precision": "a result cannot be represented exactly in the output type (e.g. a flat index above 2**24 "
                 "in float32, an index above the int32 maximum)",
    "model": "the model cannot hold the node (an unknown op of an ortops domain, missing inputs, an opset too old)",
    "internal": "a bug in ortops (an unexpected exception inside an op)",
    "invalid": "any other invalid input",
}

#: Longest text an error message quotes from a value (an attribute, a node name, another
#: error's message); longer text keeps its head and tail around a count of what was cut.
MESSAGE_LIMIT = 1000


def truncated(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text``, or its head and tail with ``...[N characters omitted]...`` between them."""
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]}...[{len(text) - 2 * keep:,} characters omitted]...{text[-keep:]}"


class OpError(ValueError):
    """A bad input, attribute or model for one of ortops' operators.

    The message names the op type, the node (when it has a name), the bad value and
    the valid range, for example ``TopK node 'top': k=5 is outside [1, 4] for axis 1
    of shape (3, 4)``.

    Long values are shortened in the message (:func:`truncated`): a 50 MB attribute gives a
    message of about 1,000 characters, not 50 MB.

    Attributes
    ----------
    op_type : str
        The operator, e.g. ``"TopK"``.
    detail : str
        What is wrong, without the op and node prefix.
    node_name : str or None
        The ONNX node's name, when known and non-empty.
    kind : str
        What the error is about, one of :data:`KINDS` (``"k_range"``, ``"index_range"``,
        ``"attribute"``, ``"dtype"``, ...): for programs, so that nothing parses the message.
    """

    def __init__(self, op_type: str, detail: str, node_name: str | None = None, *, kind: str = "invalid"):
        if kind not in KINDS:
            raise ValueError(f"OpError kind {kind!r} is not one of {sorted(KINDS)}")
        self.op_type = op_type
        self.detail = truncated(detail)
        self.node_name = node_name or None
        self.kind = kind
        where = f"{op_type} node {truncated(repr(self.node_name))}" if self.node_name else op_type
        super().__init__(f"{where}: {self.detail}")

    def __reduce__(self):
        return (OpError, (self.op_type, self.detail, self.node_name), {"kind": self.kind})

    def with_node(self, node_name: str | None) -> "OpError":
        """Return the same error naming ``node_name`` (used when the node becomes known)."""
        if not node_name or self.node_name:
            return self
        return OpError(self.op_type, self.detail, node_name, kind=self.kind)
