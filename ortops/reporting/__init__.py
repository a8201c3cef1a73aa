"""One report machinery for ``ortops conformance`` and ``ortops compare``: a command builds a
:class:`Document` (:mod:`.document`) and hands it to :mod:`.markdown` (``report.md``), :mod:`.html`
(``report.html``, self-contained, sortable and filterable tables) and :mod:`.console` (the
terminal, or whole plain lines in a CI log); :func:`write` writes the two files. Nothing in this
package knows what a command compares.
"""

import os
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
           "preview", "summary_blocks", "version", "write", "write_files"]


def version(dist: str) -> str | None:
    """The installed version of the distribution ``dist``, or None."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def write(document: Document, out_dir, stem: str = "report", extra: dict[str, str] | None = None) -> tuple:
    """Write ``<stem>.md`` and ``<stem>.html`` of ``document``, and each ``extra`` file name ->
    text, into ``out_dir`` (created if needed), all or none (:func:`write_files`); returns the
    paths of the two."""
    out = pathlib.Path(out_dir)
    md, page = out / f"{stem}.md", out / f"{stem}.html"
    write_files({md: markdown.render(document), page: html.render(document),
                 **{out / name: text for name, text in (extra or {}).items()}})
    return md, page


def write_files(files: dict[pathlib.Path, str]) -> None:
    """Write each path's text (UTF-8): every file is written beside its place first, then all are
    moved in. A failure while writing (a full disk) leaves the files as they were; a failure
    while moving (a folder where a file goes), the ones before it moved. Either way no file is
    truncated, and no partial one is left; the error is raised."""
    written = []
    try:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
            written.append((partial, path))
            partial.write_text(text, encoding="utf-8")
        for partial, path in written:
            os.replace(partial, path)
    finally:
        for partial, _ in written:
            partial.unlink(missing_ok=True)
