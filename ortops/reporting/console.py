"""Print a report's tables on a terminal (rich, long cells folded) or, anywhere else (a pipe, a
CI log), as whole plain lines without colour, never wrapped or cut, so that ``grep`` finds a row
with all its columns; :func:`make_console` chooses the mode from the stream.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import IO, Sequence

from .document import STATUSES, PairSummary, Table, summary_blocks

__all__ = ["is_plain", "make_console", "print_table", "print_pairs", "print_line", "pair_line"]


def is_plain(file: IO | None = None) -> bool:
    """Whether ``file`` (default: stdout) is not a terminal: then output is plain and whole."""
    file = file or sys.stdout
    try:
        return not file.isatty()
    except (AttributeError, ValueError):
        return True


def make_console(file: IO | None = None, *, plain: bool | None = None, **options):
    """A ``rich.console.Console`` for ``file`` (default: stdout): the terminal's width on a
    terminal; on anything else no colour, no wrapping and no width limit. ``options`` go to the
    Console. When the reader goes away (``| head -1``), it prints nothing more and the command
    goes on to write its files (rich would end the process with exit status 1)."""
    Console = _quiet_on_broken_pipe()
    plain = is_plain(file) if plain is None else plain
    if not plain:
        return Console(file=file, **options)
    return Console(file=file, **{"width": 1_000_000, "soft_wrap": True, "no_color": True, "highlight": False,
                                 "emoji": False, "force_terminal": False, **options})


@functools.cache
def _quiet_on_broken_pipe():
    from rich.console import Console

    class QuietOnBrokenPipe(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's own flush at exit too

    return QuietOnBrokenPipe


def print_line(console, text: str) -> None:
    """``text`` as it is: no rich mark-up read from it, never wrapped in plain mode."""
    console.print(text, markup=False, highlight=False, soft_wrap=not console.is_terminal, emoji=False)


def print_table(console, table: Table, title: str = "") -> None:
    """``table`` on the console: a rich table on a terminal, aligned plain lines elsewhere."""
    rows = table.cells()
    if not console.is_terminal:
        widths = [max([len(str(c))] + [len(r[i].text) for r in rows]) for i, c in enumerate(table.columns)]
        if title:
            print_line(console, title)
        print_line(console, "  ".join(str(c).ljust(w) for c, w in zip(table.columns, widths)).rstrip())
        for row in rows:
            print_line(console, "  ".join(c.text.rjust(w) if isinstance(c.sort, (int, float)) else c.text.ljust(w)
                                          for c, w in zip(row, widths)).rstrip())
        return
    from rich.table import Table as RichTable
    from rich.text import Text

    styles = {"agree": "green", "explained": "yellow", "skipped": "dim", "unexplained": "bold red"}
    out = RichTable(title=title or None)
    for i, name in enumerate(table.columns):
        numeric = bool(rows) and all(isinstance(r[i].sort, (int, float)) for r in rows)
        out.add_column(str(name), justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        out.add_row(*(Text(c.text, style=styles.get(c.status or "", "")) for c in row))
    console.print(out)


def pair_line(label: str, pair: PairSummary, statuses: Sequence[str] = STATUSES) -> str:
    """One greppable line for ``pair``: ``label pair="..." cases=N agree=N ...``."""
    counts = " ".join(f"{s}={pair.counts.get(s, 0)}" for s in statuses)
    note = f' note="{pair.note}"' if pair.note else ""
    return f'{label} pair="{pair.name}" {pair.unit}={pair.total} {counts}{note}'


def print_pairs(console, label: str, pairs: Sequence[PairSummary]) -> None:
    """The per-pair summary: a table on a terminal; elsewhere a :func:`pair_line` per pair and a
    ``label topic pair="..." topic=... count=N status=...: reason`` line per topic."""
    if not console.is_terminal:
        for pair in pairs:
            print_line(console, pair_line(label, pair))
        for pair in pairs:
            for t in pair.topics:
                scope = f' scope="{t.scope}"' if t.scope else ""
                print_line(console, f'{label} topic pair="{pair.name}" topic={t.topic}{scope} count={t.count} '
                                    f"status={t.status}: {t.reason}")
        return
    print_table(console, summary_blocks(pairs)[0], title=label)
