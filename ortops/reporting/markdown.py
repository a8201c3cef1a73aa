"""Render a :class:`~ortops.reporting.document.Document` as GitHub Markdown; text is escaped
(``|`` in cells, raw HTML, newlines), never cut."""

from __future__ import annotations

import re
from typing import Sequence

from .document import Block, Bullets, Code, Details, Document, Grid, Heading, Paragraph, Table, cell

__all__ = ["render", "table", "escape_cell", "blocks"]


#: Characters escaped outside code: a backslash, raw HTML (``<``), links and images (``[``, ``]``)
#: and entities (``&``). Emphasis (``*``, ``_``) is left: ortops' own text uses ``**bold**``.
_ESCAPED = {c: "\\" + c for c in "\\<[]&"}
_TICKS = re.compile(r"`+")
_BLOCK_OPENER = re.compile(r"#{1,6}(?:\s|$)|>|[-+*](?:\s|$)|~~~|([-*_])\s*\1\s*\1")
_ORDERED = re.compile(r"(\d{1,9})[.)](?:\s|$)")


def escape_cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell: ``|`` and :data:`_ESCAPED` escaped, newlines
    as ``<br>``."""
    text = "".join(_ESCAPED.get(c, c) for c in str(text).replace("\r", ""))
    return text.replace("|", "\\|").replace("\n", "<br>")


def _inline(text: str) -> str:
    """Heading, paragraph or bullet text on one line, :data:`_ESCAPED` escaped outside its code
    spans (names in a report may hold newlines, ``#``, ``<script>``). A code span is a run of
    backticks closed by a run of the same length, as GitHub reads it; a backtick without its
    closing run is escaped."""
    text = " ".join(str(text).splitlines()).lstrip()  # leading spaces: an indented code block
    out, i = [], 0
    while i < len(text):
        run = _TICKS.match(text, i)
        if run is None:
            out.append(_ESCAPED.get(text[i], text[i]))
            i += 1
            continue
        ticks = run.group()
        close = re.compile(rf"(?<!`){ticks}(?!`)").search(text, i + len(ticks))
        if close is None:
            out.append("\\`" * len(ticks))
            i += len(ticks)
        else:
            out.append(text[i:close.end()])
            i = close.end()
    text = "".join(out)
    # What opens a block at the start of a line (a heading, a quote, a list, a rule, a fence)
    # is text: its first character escaped, or an ordered list's "." or ")".
    if (number := _ORDERED.match(text)) is not None:
        text = text[:number.end(1)] + "\\" + text[number.end(1):]
    elif _BLOCK_OPENER.match(text):
        text = "\\" + text
    return text


def table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """A Markdown table: a header, a rule, one line per row (numbers right-aligned)."""
    cells = [[cell(v) for v in row] for row in rows]
    numeric = [bool(cells) and all(isinstance(r[i].sort, (int, float)) for r in cells) for i in range(len(columns))]
    return ["| " + " | ".join(escape_cell(c) for c in columns) + " |",
            "|" + "|".join("---:" if n else "---" for n in numeric) + "|",
            *("| " + " | ".join(_cell_text(c) for c in row) + " |" for row in cells)]


def _cell_text(c) -> str:
    if c.code and c.text:  # in code a backslash and < are themselves: only the table's | and newlines
        return "`" + " ".join(str(c.text).splitlines()).replace("`", "'").replace("|", "\\|") + "`"
    return escape_cell(c.text)


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
            lines += ["#" * min(6, block.level) + " " + _inline(block.text), ""]
        elif isinstance(block, Paragraph):
            lines += [_inline(block.text), ""]
        elif isinstance(block, Bullets):
            lines += [f"- {_inline(item)}" for item in block.items] + [""]
        elif isinstance(block, Code):
            lines += [_fence(block.text), ""]
        elif isinstance(block, Table):  # a Grid too: Markdown has no colours
            if block.caption:
                lines += [_inline(block.caption), ""]
            lines += table(block.columns, block.rows)
            if isinstance(block, Grid) and block.legend:
                lines += ["", "Legend: " + "; ".join(f"{status}: {what}" for status, what in block.legend) + "."]
            lines.append("")
        elif isinstance(block, Details):
            lines += [f"### {_inline(block.title)}", ""]
            lines += blocks(block.blocks)
        else:
            raise TypeError(f"not a report block: {type(block).__name__}")
    return lines


def render(document: Document) -> str:
    """The whole document as Markdown text, ending with one newline."""
    return "\n".join([f"# {_inline(document.title)}", "", *blocks(document.blocks)]).rstrip("\n") + "\n"
