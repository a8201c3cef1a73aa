"""Render a :class:`~ortops.reporting.document.Document` as GitHub Markdown; cell text is escaped
(``|``, newlines), never cut."""

from __future__ import annotations

from typing import Sequence

from .document import Block, Bullets, Code, Details, Document, Grid, Heading, Paragraph, Table, cell

__all__ = ["render", "table", "escape_cell", "blocks"]


def escape_cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell: ``|`` escaped, newlines as ``<br>``."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """A Markdown table: a header, a rule, one line per row (numbers right-aligned)."""
    cells = [[cell(v) for v in row] for row in rows]
    numeric = [bool(cells) and all(isinstance(r[i].sort, (int, float)) for r in cells) for i in range(len(columns))]
    return ["| " + " | ".join(escape_cell(c) for c in columns) + " |",
            "|" + "|".join("---:" if n else "---" for n in numeric) + "|",
            *("| " + " | ".join(_cell_text(c) for c in row) + " |" for row in cells)]


def _cell_text(c) -> str:
    text = escape_cell(c.text)
    if c.code and text:
        return "`" + text.replace("`", "'") + "`"
    return text


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text}\n{fence}"


def blocks(items: Sequence[Block]) -> list[str]:
    """The Markdown lines of ``items`` (each followed by a blank line)."""
    lines: list[str] = []
    for block in items:
        if isinstance(block, Heading):
            lines += ["#" * min(6, block.level) + " " + block.text, ""]
        elif isinstance(block, Paragraph):
            lines += [block.text, ""]
        elif isinstance(block, Bullets):
            lines += [f"- {item}" for item in block.items] + [""]
        elif isinstance(block, Code):
            lines += [_fence(block.text), ""]
        elif isinstance(block, Table):  # a Grid too: Markdown has no colours
            if block.caption:
                lines += [block.caption, ""]
            lines += table(block.columns, block.rows)
            if isinstance(block, Grid) and block.legend:
                lines += ["", "Legend: " + "; ".join(f"{status}: {what}" for status, what in block.legend) + "."]
            lines.append("")
        elif isinstance(block, Details):
            lines += [f"### {block.title}", ""]
            lines += blocks(block.blocks)
        else:
            raise TypeError(f"not a report block: {type(block).__name__}")
    return lines


def render(document: Document) -> str:
    """The whole document as Markdown text, ending with one newline."""
    return "\n".join([f"# {document.title}", "", *blocks(document.blocks)]).rstrip("\n") + "\n"
