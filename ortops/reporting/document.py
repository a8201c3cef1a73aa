"""The report as data: a :class:`Document` of blocks that every renderer reads, so the Markdown
and HTML reports carry the same content. Blocks: :class:`Heading`, :class:`Paragraph` (``**bold**``
and ```code``` only), :class:`Bullets`, :class:`Code`, :class:`Table` (``interactive``: sortable
and filterable in HTML), :class:`Grid` (cells coloured by ``status``), :class:`Details` (a
collapsible group), and :class:`PairSummary` (one comparison pair's verdict counts, turned into
blocks by :func:`summary_blocks`). A cell's status is any string; :data:`STATUSES` are coloured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence, Union

__all__ = ["STATUSES", "Cell", "Heading", "Paragraph", "Bullets", "Code", "Table", "Grid", "TopicCount",
           "PairSummary", "Details", "Document", "Block", "cell", "summary_blocks"]

#: Verdicts, best first: what the colours and the per-pair summaries count by default.
STATUSES: tuple[str, ...] = ("agree", "explained", "skipped", "unexplained")


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, an optional verdict ``status`` (colours it in HTML), an
    optional ``sort`` key (a number sorts numerically in HTML) and ``code`` (monospace)."""

    text: str
    status: str | None = None
    sort: float | str | None = None
    code: bool = False


def cell(value: Any) -> Cell:
    """``value`` as a :class:`Cell`: a Cell is kept, a number sorts as a number, None is empty."""
    if isinstance(value, Cell):
        return value
    if value is None:
        return Cell("")
    if isinstance(value, bool):
        return Cell(str(value).lower())
    if isinstance(value, (int, float)):
        return Cell(str(value), sort=value)
    return Cell(str(value))


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    """Text; ``**bold**`` and ```code``` are the only mark-up (both renderers understand them)."""

    text: str


@dataclass(frozen=True)
class Bullets:
    items: Sequence[str]


@dataclass(frozen=True)
class Code:
    """Preformatted text, shown as it is (no mark-up, no wrapping)."""

    text: str


@dataclass(frozen=True)
class Table:
    """A table of :class:`Cell` objects or plain values (:func:`cell`); ``id`` names it in HTML;
    ``interactive``: sortable and filterable there (a drop-down per ``filter_columns`` entry)."""

    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    id: str = ""
    caption: str = ""
    interactive: bool = False
    filter_columns: Sequence[str] = ()

    def cells(self) -> list[list[Cell]]:
        """The rows as :class:`Cell` objects."""
        return [[cell(v) for v in row] for row in self.rows]


@dataclass(frozen=True)
class Grid(Table):
    """A colour-coded matrix: each :class:`Cell`'s ``status`` picks its background in HTML;
    ``legend`` maps a status to what it means (shown under the grid)."""

    legend: Sequence[tuple[str, str]] = ()


@dataclass(frozen=True)
class TopicCount:
    """One topic of a pair's summary; ``scope``: e.g. the ops it was seen on."""

    topic: str
    count: int
    reason: str
    status: str = "explained"
    scope: str = ""


@dataclass(frozen=True)
class PairSummary:
    """The verdicts of one comparison pair (``"ortops vs ORT built-ins"``): status -> how many
    ``unit`` (cases, models...) got it, the explained and skipped ``topics``, an optional ``note``."""

    name: str
    counts: dict[str, int]
    topics: Sequence[TopicCount] = ()
    unit: str = "cases"
    note: str = ""

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class Details:
    """A titled group of blocks: one item of a long list (a collapsible section in HTML)."""

    title: str
    blocks: Sequence["Block"]
    status: str | None = None
    id: str = ""
    open: bool = False


Block = Union[Heading, Paragraph, Bullets, Code, Table, Grid, Details]


@dataclass
class Document:
    """A whole report: a title and its blocks, in order."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> "Document":
        self.blocks.extend(blocks)
        return self


def summary_blocks(pairs: Sequence[PairSummary], statuses: Sequence[str] = STATUSES, *,
                   id: str = "summary") -> list[Block]:
    """One table of the pairs' counts (non-zero cells coloured), then per pair with topics a
    bulleted list ```topic` (scope) - count status: reason``."""
    rows = []
    for pair in pairs:
        counts = [Cell(str(pair.counts.get(s, 0)), status=s if pair.counts.get(s, 0) else None,
                       sort=pair.counts.get(s, 0)) for s in statuses]
        rows.append([Cell(pair.name), Cell(str(pair.total), sort=pair.total), *counts, Cell(pair.note)])
    unit = pairs[0].unit if pairs else "cases"
    blocks: list[Block] = [Table(["pair", unit, *statuses, "note"], rows, id=id)]
    for pair in pairs:
        if pair.topics:
            blocks.append(Paragraph(f"**{pair.name}**"))
            blocks.append(Bullets([f"`{t.topic}`{f' ({t.scope})' if t.scope else ''} - {t.count} {t.status}: "
                                   f"{t.reason}" for t in pair.topics]))
    return blocks
