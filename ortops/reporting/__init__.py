"""One report machinery for ortops' commands (``ortops conformance``, ``ortops compare``).

A command turns its results into a :class:`Document` (:mod:`ortops.reporting.document`:
headings, paragraphs, tables, colour-coded grids, per-pair summaries, collapsible details)
and hands it to the renderers:

* :func:`ortops.reporting.markdown.render` - ``report.md``;
* :func:`ortops.reporting.html.render` - ``report.html``, one self-contained page (inline CSS
  and JavaScript, no network when viewed) with sortable and filterable tables;
* :mod:`ortops.reporting.console` - the terminal, or plain whole lines in a CI log.

:class:`Difference` (:mod:`ortops.verdicts`) is the concrete difference between
two arrays (first differing position, how many differ, what each side returned), as data.
Nothing in this package knows what a command compares.

Example::

    from ortops.reporting import Document, Heading, Table, html, markdown

    doc = Document("my report").add(Heading("Results"), Table(["name", "status"], [["a", "agree"]]))
    pathlib.Path("report.md").write_text(markdown.render(doc))
    pathlib.Path("report.html").write_text(html.render(doc))
"""

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
           "preview", "summary_blocks", "write"]


def write(document: Document, out_dir, stem: str = "report") -> tuple:
    """Write ``<stem>.md`` and ``<stem>.html`` of ``document`` into ``out_dir`` (created if
    needed); returns their paths."""
    import pathlib

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md, page = out / f"{stem}.md", out / f"{stem}.html"
    md.write_text(markdown.render(document), encoding="utf-8")
    page.write_text(html.render(document), encoding="utf-8")
    return md, page
