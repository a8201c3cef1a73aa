"""One report machinery for ``ortops conformance`` and ``ortops compare``: a command builds a
:class:`Document` (:mod:`.document`) and hands it to :mod:`.markdown` (``report.md``), :mod:`.html`
(``report.html``, self-contained, sortable and filterable tables) and :mod:`.console` (the
terminal, or whole plain lines in a CI log); :func:`write` writes the two files. Nothing in this
package knows what a command compares.
"""

import pathlib

from . import console, html, markdown
from ..arrays import jsonable, preview
from ..verdicts import Difference
from .document import (
    STATUSES,
    Block,
    Bullets,
    Cell,
    Code,
    Details,
    Document,
    Grid,
    Heading,
    PairSummary,
    Paragraph,
    Table,
    TopicCount,
    cell,
    summary_blocks,
)

__all__ = ["STATUSES", "Block", "Bullets", "Cell", "Code", "Details", "Difference", "Document", "Grid", "Heading",
           "PairSummary", "Paragraph", "Table", "TopicCount", "cell", "console", "html", "jsonable", "markdown",
           "preview", "summary_blocks", "version", "write"]


def version(dist: str) -> str | None:
    """The installed version of the distribution ``dist``, or None."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def write(document: Document, out_dir, stem: str = "report") -> tuple:
    """Write ``<stem>.md`` and ``<stem>.html`` of ``document`` into ``out_dir`` (created if
    needed); returns their paths."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md, page = out / f"{stem}.md", out / f"{stem}.html"
    md.write_text(markdown.render(document), encoding="utf-8")
    page.write_text(html.render(document), encoding="utf-8")
    return md, page
