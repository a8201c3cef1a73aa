"""The one exception type ortops raises for a caller's mistake."""

from __future__ import annotations

__all__ = ["OpError", "truncated", "MESSAGE_LIMIT"]

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
    """

    def __init__(self, op_type: str, detail: str, node_name: str | None = None):
        self.op_type = op_type
        self.detail = truncated(detail)
        self.node_name = node_name or None
        where = f"{op_type} node {truncated(repr(self.node_name))}" if self.node_name else op_type
        super().__init__(f"{where}: {self.detail}")

    def __reduce__(self):
        return (type(self), (self.op_type, self.detail, self.node_name))

    def with_node(self, node_name: str | None) -> "OpError":
        """Return the same error naming ``node_name`` (used when the node becomes known)."""
        if not node_name or self.node_name:
            return self
        return OpError(self.op_type, self.detail, node_name)
