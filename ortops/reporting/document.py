"""The report as data: a :class:`Document` of blocks that every renderer reads.

A command builds one :class:`Document` from its results and hands it to the renderers:
:func:`ortops.reporting.markdown.render` (``report.md``), :func:`ortops.reporting.html.render`
(``report.html``, self-contained) and :mod:`ortops.reporting.console` (the terminal or a CI
log). Since all of them read the same blocks, the Markdown and HTML reports carry the same
content. Nothing here knows what was compared: a block holds text, numbers and verdicts.

Blocks
------
* :class:`Heading` - a section title (level 1-4);
* :class:`Paragraph` - text with a tiny inline mark-up: ``**bold**`` and ```code```;
* :class:`Bullets` - a list of such texts;
* :class:`Code` - preformatted text (an input printout, a command);
* :class:`Table` - columns and rows of :class:`Cell` (or plain values); ``interactive=True``
  makes it sortable and filterable in HTML (Markdown shows the same rows);
* :class:`Grid` - a :class:`Table` whose cells are coloured by their ``status`` in HTML
  (a colour-coded matrix); Markdown shows the text;
* :class:`PairSummary` - the verdict counts of one comparison pair (e.g. "ortops vs ORT
  built-ins") and its explained topics; :func:`summary_blocks` turns a list of them into a
  table and one list per pair;
* :class:`Details` - a titled group of blocks (a collapsible ``<details>`` in HTML, a
  heading in Markdown), e.g. one case.

Verdicts
--------
:data:`STATUSES` is the verdict vocabulary the colours and summaries use by default
(``agree``, ``explained``, ``skipped``, ``unexplained``); a cell may carry any status, and
an unknown one is rendered without colour.
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
    """A table. ``rows`` hold :class:`Cell` objects or plain values (see :func:`cell`).

    ``id`` names it in HTML (anchors, filter state); ``interactive`` makes its columns sortable
    (click a header) and its rows filterable (a text box, and one drop-down per column named
    in ``filter_columns``) in HTML; ``caption`` is a line shown above it.
    """

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
    """One topic of a pair's summary: its key, how many items it holds, one line of reason,
    the verdict it explains, and an optional ``scope`` (e.g. the ops it was seen on)."""

    topic: str
    count: int
    reason: str
    status: str = "explained"
    scope: str = ""


@dataclass(frozen=True)
class PairSummary:
    """The verdicts of one comparison pair, e.g. ``"ortops vs ORT built-ins"``.

    ``counts`` maps each status to how many items (cases, models...) got it; ``unit`` names
    the items; ``topics`` lists the explained (and skipped) topics with their counts and
    reasons; ``note`` is one optional line (e.g. why a pair judged nothing).
    """

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
    """One table of the pairs' counts (each cell coloured by its status when non-zero), then
    for each pair with topics one bulleted list ```topic` (scope) - count status: reason``.

    The counts of a row add up to its ``total`` column (checked by the tests of the commands
    that use it).
    """
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
