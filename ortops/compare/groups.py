"""Audited nodes grouped by op, so that 90 TopK nodes read as one line: ``90 TopK nodes (/TopK ...
/TopK_89): 90 ties``; lines fitted to the terminal's width."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

__all__ = ["NodeGroup", "count", "fit", "group_nodes", "span"]


def fit(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` characters (its indent kept), cut at a word with `` ...``."""
    indent = text[:len(text) - len(text.lstrip(" "))]  # shorten collapses the rest's whitespace
    return indent + textwrap.shorten(text, max(width - len(indent), 12), placeholder=" ...")


def count(number: int, unit: str) -> str:
    """``1 node``, ``3 nodes``: a count with its unit."""
    return f"{number} {unit}{'' if number == 1 else 's'}"


def span(names: Sequence[str], most: int = 3) -> str:
    """``a, b, c`` for up to ``most`` names, else ``first ... last``."""
    return ", ".join(names) if len(names) <= most else f"{names[0]} ... {names[-1]}"


class NodeGroup(NamedTuple):
    """The nodes of one op (``domain::type``) with one status: their names, in graph order, the
    count of each topic, and the first node's row (the worked example)."""

    op: str
    status: str
    names: tuple[str, ...]
    topics: dict[str, int]
    example: Mapping

    def text(self) -> str:
        """``90 TopK nodes (/TopK ... /TopK_89): 90 ties``; the topic counts count nodes."""
        topics = ", ".join(f"{n} {topic}" for topic, n in self.topics.items())
        return f"{count(len(self.names), self.op + ' node')} ({span(self.names)}): {topics or self.status}"


def group_nodes(rows: Iterable[Mapping]) -> list[NodeGroup]:
    """Node rows (``compare.json``'s ``nodes[]``: ``node``, ``op``, ``status``, ``topic``) grouped
    by (op, status), in the order of each group's first node."""
    groups: dict[tuple[str, str], list[Mapping]] = {}
    for row in rows:
        groups.setdefault((row["op"], row["status"]), []).append(row)
    return [NodeGroup(op, status, tuple(r["node"] for r in members),
                      dict(Counter(r["topic"] for r in members if r.get("topic"))), members[0])
            for (op, status), members in groups.items()]
